"""FileStreamSourceTask: one record per line of a file (or of standard input).

Behaves like Kafka's ``FileStreamSourceTask``: lines end with ``\\n``, ``\\r\\n`` or ``\\r``
(a ``\\r`` at the end of the data read so far waits for the next byte, which may be ``\\n``);
a line without its terminator is not emitted until the terminator arrives. Each record has
source partition ``{"filename": <file>}``, source offset ``{"position": <byte position after
the line's terminator>}``, no key, value schema ``STRING_SCHEMA`` and the line as value.

Unlike Kafka, which reads characters, the position counts bytes (Kafka's count differs from
the byte position for non-ASCII text, which breaks resuming): the file is read in binary, in
large chunks, split into lines and decoded as UTF-8 (malformed bytes become U+FFFD). Standard
input has no offsets: its records carry ``{"filename": None}`` / ``{"position": None}``.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from sparkcat.api.batch import SourceRecordBatch
from sparkcat.api.data import STRING_SCHEMA
from sparkcat.api.errors import ConnectError
from sparkcat.api.source import SourceTask
from sparkcat.connectors.file.config import (
    DEFAULT_TASK_BATCH_SIZE,
    FILE_CONFIG,
    FILENAME_FIELD,
    POSITION_FIELD,
    TASK_BATCH_SIZE_CONFIG,
    TOPIC_CONFIG,
    VERSION,
)

log = logging.getLogger(__name__)

_CHUNK_BYTES = 1 << 20
"""How much one read asks for: big reads keep syscalls far below one per line."""


class FileStreamSourceTask(SourceTask):
    """Reads lines of ``file`` (standard input when unset) into records for ``topic``.

    Runs on an executor for one lease. ``poll()`` returns at most ``batch.size`` records; when
    no complete line is available it waits up to :attr:`idle_wait_s` and returns ``None``. A
    file that does not exist yet is retried on every poll.
    """

    idle_wait_s: float = 1.0
    """How long ``poll()`` waits while the file does not exist (Kafka waits one second)."""

    data_wait_s: float = 0.1
    """How long ``poll()`` waits for more lines of an open file. Kafka waits one second, which
    delays lines appended meanwhile by up to that; a read of an idle file costs microseconds."""

    def __init__(self) -> None:
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_TASK_BATCH_SIZE
        self._stream: io.FileIO | None = None
        self._stdin_fd: int | None = None
        self._buffer = bytearray()  # bytes read but not yet split: an incomplete line
        self._lines: list[str] = []  # split lines not yet returned start at _next
        self._sizes: list[int] | None = None  # their sizes in bytes; None: len(text) + 1
        self._next = 0
        self._position: int | None = None  # byte position after the last returned line
        self._partition: dict[str, Any] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # held during I/O, so stop() never closes mid-read

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        filename = props.get(FILE_CONFIG)
        self._filename = filename or None
        if self._filename is None:
            self._stdin_fd = sys.stdin.fileno()
        topic = props.get(TOPIC_CONFIG)
        if topic is None:
            raise ConnectError("FileStreamSourceTask config missing topic setting")
        self._topic = topic
        if TASK_BATCH_SIZE_CONFIG in props:
            try:
                self._batch_size = int(props[TASK_BATCH_SIZE_CONFIG])
            except ValueError as exc:
                raise ConnectError("Invalid FileStreamSourceTask configuration") from exc
        # One partition map shared by every record: records are read-only.
        self._partition = {FILENAME_FIELD: self._filename}

    def poll(self) -> SourceRecordBatch | None:
        if self._stopping.is_set():
            return None
        with self._lock:
            if self._stdin_fd is None and self._stream is None and not self._open():
                ready = False
            else:
                batch = self._read_batch()
                if batch is not None:
                    return batch
                ready = True
        if ready:
            self._stopping.wait(min(self.data_wait_s, self.idle_wait_s))
            return None
        log.warning(
            "Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
            self._filename,
        )
        self._stopping.wait(self.idle_wait_s)
        return None

    def _open(self) -> bool:
        """Open the file at its stored position; ``False`` if it does not exist yet."""
        assert self._filename is not None
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115 - kept open
        except FileNotFoundError:
            return False
        try:
            position = self._stored_position()
            if position:
                log.debug("Found previous offset, trying to skip to file offset %d", position)
                stream.seek(position)
        except BaseException:
            stream.close()
            raise
        self._stream = stream
        self._position = position
        log.debug("Opened %s for reading", self._filename)
        return True

    def _stored_position(self) -> int:
        offset = self.context.offset_storage_reader().offset(self._partition)
        if offset is None:
            return 0
        position = offset.get(POSITION_FIELD)
        if position is None:
            return 0
        if not isinstance(position, int) or isinstance(position, bool):
            raise ConnectError("Offset position is the incorrect type")
        return position

    def _read_batch(self) -> SourceRecordBatch | None:
        """Complete lines already split or readable now, at most ``batch.size``, as one
        columnar batch (``None`` when there is none). Its records, if the framework builds
        them, carry each line's own position (computed only then)."""
        texts: list[str] = []
        pieces: list[tuple[list[str], list[int] | None]] = []
        first = self._position
        self._take(texts, pieces)
        while len(texts) < self._batch_size and self._fill():
            self._take(texts, pieces)
        if not texts:
            return None

        def positions() -> Sequence[dict[str, Any] | None]:
            if first is None:
                return [{POSITION_FIELD: None} for _ in texts]
            sizes = [s for taken, sz in pieces for s in (sz or [len(t) + 1 for t in taken])]
            return [{POSITION_FIELD: p} for p in itertools.accumulate(sizes, initial=first)][1:]

        return SourceRecordBatch.of(
            self._topic,
            texts,
            STRING_SCHEMA,
            self._partition,
            {POSITION_FIELD: self._position},
            timestamp=int(time.time() * 1000),
            record_offsets=positions,
        )

    def _fill(self) -> bool:
        """Read one chunk and split its complete lines; ``False`` when nothing was read."""
        chunk = self._read_chunk()
        if not chunk:
            return False
        buffer = self._buffer
        buffer += chunk
        if b"\r" in buffer:
            self._lines, self._sizes, consumed = _split_mixed(buffer)
        else:
            self._lines, self._sizes, consumed = _split_lf(buffer)
        self._next = 0
        # Only the incomplete last line stays behind, so this moves few bytes.
        del buffer[:consumed]
        return True

    def _read_chunk(self) -> bytes:
        if self._stream is not None:
            return self._stream.read(_CHUNK_BYTES) or b""
        assert self._stdin_fd is not None
        # Only read stdin when it has data: a blocking read could outlive the lease.
        if not select.select([self._stdin_fd], [], [], 0)[0]:
            return b""
        return os.read(self._stdin_fd, _CHUNK_BYTES)

    def _take(self, texts: list[str], pieces: list[tuple[list[str], list[int] | None]]) -> None:
        """Move split lines into ``texts`` (up to ``batch.size``), advancing the position."""
        start = self._next
        end = min(len(self._lines), start + self._batch_size - len(texts))
        if end <= start:
            return
        self._next = end
        taken = self._lines[start:end]
        texts += taken
        pieces.append((taken, None if self._sizes is None else self._sizes[start:end]))
        if self._position is not None:
            if self._sizes is None:  # ASCII, "\n": each line is its length plus one byte
                self._position += sum(map(len, taken)) + len(taken)
            else:
                self._position += sum(self._sizes[start:end])

    def stop(self) -> None:
        """Ends a waiting ``poll()`` and closes the file (may run on another thread)."""
        self._stopping.set()
        with self._lock:
            self._close()

    def stopped(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
            log.debug("Closed input stream")


def _decode(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "replace")


def _split_lf(buffer: bytearray) -> tuple[list[str], list[int] | None, int]:
    """The ``\\n``-terminated lines of ``buffer``: texts, their sizes in bytes (``None``
    when every size is ``len(text) + 1``, i.e. ASCII) and the bytes consumed."""
    end = buffer.rfind(b"\n") + 1
    if end == 0:
        return [], None, 0
    raw = bytes(buffer[:end])
    if raw.isascii():
        return raw.decode("ascii").split("\n")[:-1], None, end
    parts = raw.split(b"\n")[:-1]
    return [_decode(r) for r in parts], [len(r) + 1 for r in parts], end


def _split_mixed(buffer: bytearray) -> tuple[list[str], list[int] | None, int]:
    """Like :func:`_split_lf` for buffers that contain ``\\r`` (``\\r\\n`` or lone ``\\r``)."""
    texts: list[str] = []
    sizes: list[int] = []
    start = 0
    size = len(buffer)
    while True:
        lf = buffer.find(b"\n", start)
        cr = buffer.find(b"\r", start, lf if lf >= 0 else size)
        if cr >= 0:
            if cr + 1 >= size:
                break  # a trailing \r may be the first half of \r\n: wait for more
            until, next_start = cr, cr + 2 if buffer[cr + 1] == 0x0A else cr + 1
        elif lf >= 0:
            until, next_start = lf, lf + 1
        else:
            break
        texts.append(_decode(buffer[start:until]))
        sizes.append(next_start - start)
        start = next_start
    return texts, sizes, start


__all__ = ["FileStreamSourceTask"]
