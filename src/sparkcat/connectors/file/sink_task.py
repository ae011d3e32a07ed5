"""FileStreamSinkTask: appends one line per record value to a file (or standard output)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, TextIO

from sparkcat.api.batch import SinkRecordBatch
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import SinkTask
from sparkcat.connectors.file.config import FILE_CONFIG, VERSION

log = logging.getLogger(__name__)


_VALUE = attrgetter("value")
_ONLY_STR = {str}


def _text(value: Any) -> str:
    # Java's String.valueOf spells these differently from Python's str().
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


class FileStreamSinkTask(SinkTask):
    """Writes ``str(record.value)`` plus ``\\n`` per record (``null`` for a null value,
    ``true``/``false`` for booleans, as Kafka prints them), UTF-8, appending to ``file``.

    Runs on an executor for one lease: the file is opened in ``start`` and closed in
    ``stop``; ``flush`` flushes the stream (no fsync, as in Kafka). Other values print with
    Python's ``str`` (e.g. a map prints as ``{'a': 1}`` where Kafka prints ``{a=1}``).
    """

    def __init__(self) -> None:
        self._filename: str | None = None
        self._out: TextIO | None = None

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self._filename = props.get(FILE_CONFIG) or None
        if self._filename is None:
            self._out = sys.stdout
        else:
            self._out = open(self._filename, "a", encoding="utf-8", newline="")  # noqa: SIM115
        log.debug("Opened %s for writing", self._filename or "stdout")

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        out = self._stream()
        # The columnar path hands over the values column: no SinkRecord is built.
        if isinstance(records, SinkRecordBatch):
            values = list(records.values())
        else:
            values = list(map(_VALUE, records))
        # One write per batch: the text layer would otherwise do per-record work. Flushed at
        # once, like Kafka's unbuffered PrintStream: lines reach the file while the lease runs
        # (not at its end), and a crash cannot leave half a line behind a buffer boundary.
        if set(map(type, values)) == _ONLY_STR:
            # All plain strings (StringConverter, or JsonConverter strings): joined in C.
            values.append("")
            out.write("\n".join(values))
        else:
            out.write("".join([f"{_text(v)}\n" for v in values]))
        out.flush()

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        self._stream().flush()

    def stop(self) -> None:
        out, self._out = self._out, None
        if out is not None and out is not sys.stdout:
            out.close()

    def _stream(self) -> TextIO:
        if self._out is None:
            raise ConnectError("FileStreamSinkTask is not started")
        return self._out


__all__ = ["FileStreamSinkTask"]
