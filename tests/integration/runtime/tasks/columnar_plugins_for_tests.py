"""Per-record twins of the FileStream tasks, written only against the per-record API.

The shipped FileStream tasks use the columnar path (``SourceRecordBatch`` from ``poll``, the
values column in ``put``); these do the same job one ``SourceRecord``/``SinkRecord`` at a
time, so tests can run the same pipelines both ways and compare the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sparkcat.api.records import SinkRecord, SourceRecord
from sparkcat.api.sink import SinkTask
from sparkcat.connectors.file.source_task import FileStreamSourceTask


class PerRecordFileStreamSourceTask(FileStreamSourceTask):
    """Returns a plain list of ``SourceRecord``\\ s (each with its own line's position)."""

    def poll(self) -> list[SourceRecord] | None:  # type: ignore[override]
        batch = super().poll()
        if batch is None:
            return None
        return [
            SourceRecord(r.source_partition, dict(r.source_offset or {}), r.topic, None, None,
                         None, r.value_schema, r.value, r.timestamp)
            for r in batch
        ]  # fmt: skip


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class PerRecordFileSinkTask(SinkTask):
    """Appends ``str(record.value)`` per record, as FileStreamSinkTask prints values."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self._out = open(props["file"], "a", encoding="utf-8", newline="")  # noqa: SIM115

    def put(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            self._out.write(_text(record.value) + "\n")
        self._out.flush()

    def stop(self) -> None:
        self._out.close()
