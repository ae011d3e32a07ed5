"""Source-connector offset stores: Kafka Connect's ``OffsetBackingStore``, keyed the same way.

A source offset belongs to a (connector, source partition) pair. Stores keep it exactly as
Kafka Connect's offsets topic does::

    key   = compact JSON of ["<connector>", {<source partition>}]
            e.g. ["local-file-source",{"filename":"test.txt"}]
    value = compact JSON of the offset map, e.g. {"position":30}; no value = tombstone

so that a future ``KafkaOffsetStore`` (distributed mode) writes the very bytes Kafka writes
and the REST offsets API reads all stores alike. The partition map's keys are sorted in the
key bytes so that the same partition always finds the same key, whatever order the task
built its dict in (Kafka relies on its ``HashMap`` order for the same effect; for a one-key
partition, the common case, the bytes are identical).

Implementations: :class:`MemoryOffsetStore` (the reference; tests, embedded use) and
:class:`FileOffsetStore` (standalone mode's ``offset.storage.file.filename``). Both are
thread-safe: the worker's commit path and the REST API call them concurrently.
"""

from __future__ import annotations

import base64
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import orjson

from sparkcat.api.errors import ConnectError, DataError

__all__ = [
    "FileOffsetStore",
    "MemoryOffsetStore",
    "OffsetStore",
    "OffsetStoreError",
    "OffsetView",
    "offset_key_bytes",
    "offset_value_bytes",
    "parse_offset_key",
    "parse_offset_value",
    "validate_offset_map",
]

SourcePartition = Mapping[str, Any]
SourceOffset = Mapping[str, Any]


class OffsetStoreError(ConnectError):
    """The offset store cannot be read or written."""


@runtime_checkable
class OffsetStore(Protocol):
    """Where source offsets live. All methods are thread-safe.

    Partitions and offsets are maps with ``str`` keys and primitive values (``str``,
    ``int``, ``float``, ``bool``, ``bytes``, ``None``), as Kafka requires; returned maps
    are fresh copies decoded from JSON (so ``bytes`` come back base64 text, as in Kafka).
    """

    def get(self, connector: str, partition: SourcePartition) -> dict[str, Any] | None:
        """The offset stored for ``partition`` of ``connector``, or ``None``."""
        ...

    def get_all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every ``(partition, offset)`` of ``connector`` (the REST offsets API's view)."""
        ...

    def put_batch(
        self,
        connector: str,
        items: Iterable[tuple[SourcePartition, SourceOffset | None]],
    ) -> None:
        """Store offsets; an offset of ``None`` is a tombstone that removes the partition.

        All items are validated before any is applied. Durable after :meth:`flush`.
        """
        ...

    def flush(self) -> None:
        """Make every accepted offset durable (no-op for memory)."""
        ...

    def close(self) -> None:
        """Flush and release resources; the store is unusable afterwards."""
        ...


def validate_offset_map(data: Mapping[Any, Any] | None) -> None:
    """Raise :class:`DataError` (Kafka's messages) unless ``data`` has only ``str`` keys and
    primitive values. ``None`` is valid (no offset)."""
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise DataError("Offsets must be specified as a Map")
    for key, value in data.items():
        if not isinstance(key, str):
            raise DataError("Offsets may only use String keys")
        if value is None or isinstance(value, (str, int, float, bool, bytes)):
            continue
        if isinstance(value, (list, tuple)):
            kind = "ARRAY"
        elif isinstance(value, Mapping):
            kind = "MAP"
        else:
            kind = f"class {type(value).__name__}"
        raise DataError(
            f"Offsets may only contain primitive types as values, but field {key} contains {kind}"
        )


def _default(value: Any) -> Any:
    # JsonConverter (schemas off) writes Connect BYTES as base64 text.
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot serialize {type(value).__name__}")


def offset_key_bytes(connector: str, partition: SourcePartition) -> bytes:
    """The key of ``partition`` of ``connector``: ``["<connector>",{...}]`` as compact JSON."""
    validate_offset_map(partition)
    return orjson.dumps([connector, dict(partition)], default=_default, option=orjson.OPT_SORT_KEYS)


def offset_value_bytes(offset: SourceOffset | None) -> bytes | None:
    """The stored value of ``offset``: compact JSON, or ``None`` for a tombstone."""
    if offset is None:
        return None
    validate_offset_map(offset)
    return orjson.dumps(dict(offset), default=_default)


def parse_offset_key(key: bytes | str) -> tuple[str, dict[str, Any]] | None:
    """``(connector, partition)`` of a stored key, or ``None`` if it is not ``[str, map]``
    (Kafka ignores such keys when listing a connector's partitions)."""
    try:
        decoded = orjson.loads(key)
    except orjson.JSONDecodeError:
        return None
    if (
        isinstance(decoded, list)
        and len(decoded) == 2
        and isinstance(decoded[0], str)
        and isinstance(decoded[1], dict)
    ):
        return decoded[0], decoded[1]
    return None


def parse_offset_value(value: bytes | str | None) -> dict[str, Any] | None:
    """The offset map of a stored value (``None`` for a tombstone or a non-map value)."""
    if value is None:
        return None
    decoded = orjson.loads(value)
    return decoded if isinstance(decoded, dict) else None


class OffsetView:
    """What every offset store reads from: Kafka's key bytes to value bytes in a dict, under
    a lock. The memory (and file) store is this view plus its writes; the Kafka store feeds
    the same view from its writes and from the records it reads back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}
        self._closed = False

    def get(self, connector: str, partition: SourcePartition) -> dict[str, Any] | None:
        key = offset_key_bytes(connector, partition)
        with self._lock:
            self._check_open()
            value = self._data.get(key)
        return parse_offset_value(value)

    def get_all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        with self._lock:
            self._check_open()
            entries = list(self._data.items())
        result = []
        for key, value in entries:
            parsed = parse_offset_key(key)
            offset = parse_offset_value(value)
            if parsed is not None and parsed[0] == connector and offset is not None:
                result.append((parsed[1], offset))
        return result

    def _apply(self, items: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Set keys to serialized values (``None``: forget the key); the lock is held."""
        for key, value in items:
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value

    def _check_open(self) -> None:
        if self._closed:
            raise OffsetStoreError("The offset store is closed")


class MemoryOffsetStore(OffsetView):
    """The reference :class:`OffsetStore`: the :class:`OffsetView`'s dict is the store."""

    def put_batch(
        self,
        connector: str,
        items: Iterable[tuple[SourcePartition, SourceOffset | None]],
    ) -> None:
        # Serialize (and so validate) everything first: a bad item applies nothing.
        encoded = [(offset_key_bytes(connector, p), offset_value_bytes(o)) for p, o in items]
        with self._lock:
            self._check_open()
            self._apply(encoded)
            self._after_put()

    def flush(self) -> None:
        with self._lock:
            self._check_open()
            self._persist()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._persist()
            self._closed = True

    # Hooks for persistent subclasses; called with the lock held.
    def _after_put(self) -> None:
        pass

    def _persist(self) -> None:
        pass


class FileOffsetStore(MemoryOffsetStore):
    """Standalone mode's offset store: one JSON file, rewritten atomically.

    The file is a JSON object mapping each key (as text) to its value (as text)::

        {"[\\"local-file-source\\",{\\"filename\\":\\"test.txt\\"}]": "{\\"position\\":30}"}

    Kafka's ``FileOffsetBackingStore`` writes a Java-serialized ``HashMap<byte[],byte[]>``
    holding the same key/value bytes; sparkcat writes JSON instead -- a deliberate,
    documented difference: readable, and without Java serialization. Files are not
    interchangeable with Kafka's.

    Writes go to a temporary file in the same directory, which is fsynced and renamed over
    the old file, and the directory is fsynced: a crash leaves the old or the new file,
    never a torn one. ``put_batch`` writes at once when ``flush_interval_ms`` passed since
    the last write (``0``: every batch, as Kafka's store saves on every set), else only marks
    the store dirty; :meth:`flush` and :meth:`close` write if dirty.
    """

    def __init__(self, path: str | os.PathLike[str], flush_interval_ms: int = 0) -> None:
        super().__init__()
        self._path = Path(path)
        self._flush_interval_s = max(flush_interval_ms, 0) / 1000.0
        self._dirty = False
        self._last_write = float("-inf")
        self._data.update(self._load())

    @property
    def path(self) -> Path:
        """The offsets file."""
        return self._path

    def _load(self) -> dict[bytes, bytes]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OffsetStoreError(f"Failed to read offsets from {self._path}: {exc}") from exc
        try:
            decoded = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise OffsetStoreError(
                f"Failed to read offsets from {self._path}: not a sparkcat offsets file ({exc})"
            ) from exc
        if not isinstance(decoded, dict) or not all(isinstance(v, str) for v in decoded.values()):
            raise OffsetStoreError(
                f"Failed to read offsets from {self._path}: expected a JSON object of strings"
            )
        return {key.encode(): value.encode() for key, value in decoded.items()}

    def _after_put(self) -> None:
        self._dirty = True
        if time.monotonic() - self._last_write >= self._flush_interval_s:
            self._persist()

    def _persist(self) -> None:
        if not self._dirty:
            return
        text = {key.decode(): value.decode() for key, value in self._data.items()}
        self._write_atomically(orjson.dumps(text, option=orjson.OPT_SORT_KEYS))
        self._dirty = False
        self._last_write = time.monotonic()

    def _write_atomically(self, payload: bytes) -> None:
        directory = self._path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, temp_name = tempfile.mkstemp(prefix=f".{self._path.name}.", dir=directory)
            try:
                with os.fdopen(fd, "wb") as temp:
                    temp.write(payload)
                    temp.flush()
                    os.fsync(temp.fileno())
                os.replace(temp_name, self._path)
            except BaseException:
                Path(temp_name).unlink(missing_ok=True)
                raise
            dir_fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise OffsetStoreError(f"Failed to write offsets to {self._path}: {exc}") from exc
