"""Incremental snapshots driven by the signal table (``signal.data.collection``), as
Debezium runs them (its "DBLog" watermarking, ``insert_insert`` strategy).

A row inserted into the signal table (columns in the order ``id``, ``type``, ``data``) with
type ``execute-snapshot`` and data ``{"data-collections": ["public.t"], "type":
"incremental"}`` queues tables (``db.table`` names on MySQL/MariaDB); ``stop-snapshot``
removes them (or all). Each table is read in chunks of ``incremental.snapshot.chunk.size``
rows in primary-key order while streaming goes on. A chunk is bracketed by two rows the
connector inserts into the signal table (``snapshot-window-open``,
``snapshot-window-close``); once the open row comes back through the stream, every streamed
change of a key in the chunk removes that key from the chunk (the streamed event is newer),
and when the close row arrives the rows left are emitted as ``op=r`` events with
``source.snapshot=incremental``.

The offsets of the events carry the progress: ``incremental_snapshot_collections`` (a JSON
list of ``{"incremental_snapshot_collections_id": "schema.table"}``),
``incremental_snapshot_primary_key`` and ``incremental_snapshot_maximum_key`` (JSON lists of the
key columns' values). A chunk whose close row has not arrived when the lease ends is read
again by the next lease.

The database's part — its chunk queries, its watermark inserts, the ``source`` block and row
values of the ``op=r`` events — is a :class:`ChunkSource`; the rest is written once here.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sparkcat.api.data import Struct
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import Position, now_us, read_event

log = logging.getLogger(__name__)

COLLECTIONS = "incremental_snapshot_collections"
PRIMARY_KEY = "incremental_snapshot_primary_key"
MAXIMUM_KEY = "incremental_snapshot_maximum_key"
COLLECTION_ID = "incremental_snapshot_collections_id"
WINDOW_OPEN = "snapshot-window-open"
WINDOW_CLOSE = "snapshot-window-close"

Key = tuple[Any, ...]


class ChunkSource(Protocol):
    """What a database does for an incremental snapshot. A *table* is the connector's own
    captured-table object; its ``debezium`` attribute is its
    :class:`~sparkcat.connectors.debezium.schemas.TableSchema`."""

    def table(self, collection: str) -> Any:
        """The captured table named ``collection`` (``schema.table`` or ``db.table``)."""
        ...

    def maximum(self, table: Any, keys: Sequence[str]) -> Key | None:
        """The largest key in the table now (``None``: the table is empty)."""
        ...

    def select(
        self, table: Any, keys: Sequence[str], after: Key | None, maximum: Key, limit: int
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` rows with ``after < key <= maximum`` in key order, as column name
        to value mappings; keys in the form the stream gives them."""
        ...

    def watermark(self, signal_id: str, kind: str, data: str) -> None:
        """Insert ``(signal_id, kind, data)`` into the signal table (committed at once)."""
        ...

    def source(self, table: Any) -> Struct:
        """The ``source`` block of an ``op=r`` event of ``table``."""
        ...

    def row(self, table: Any, row: Mapping[str, Any]) -> dict[str, Any]:
        """A row from :meth:`select` as the table's ``TableSchema.value`` takes it."""
        ...

    def close(self) -> None: ...


@dataclass
class _Window:
    id: str
    table: Any
    rows: dict[Key, dict[str, Any]]
    last: Key | None
    opened: bool = False


@dataclass
class IncrementalSnapshot:
    """The progress of the incremental snapshot of one task; lives for one lease."""

    signal_table: tuple[str, str]
    chunk_size: int
    chunks: ChunkSource
    collections: list[str] = field(default_factory=list)
    last_key: Key | None = None
    max_key: Key | None = None
    _window: _Window | None = None

    @classmethod
    def restore(
        cls,
        offset: Mapping[str, Any] | None,
        signal_table: str,
        chunk_size: int,
        chunks: ChunkSource,
    ) -> IncrementalSnapshot:
        schema, _, table = signal_table.partition(".")
        state = cls((schema, table), chunk_size, chunks)
        if offset and offset.get(COLLECTIONS):
            state.collections = [c[COLLECTION_ID] for c in json.loads(offset[COLLECTIONS])]
            state.last_key = _key(offset.get(PRIMARY_KEY))
            state.max_key = _key(offset.get(MAXIMUM_KEY))
        return state

    # ------------------------------------------------------------------------ offsets
    def offset(self) -> dict[str, Any]:
        """The keys this snapshot adds to every offset while it runs."""
        if not self.collections:
            return {}
        result: dict[str, Any] = {
            COLLECTIONS: json.dumps([{COLLECTION_ID: c} for c in self.collections]),
        }
        if self.last_key is not None:
            result[PRIMARY_KEY] = json.dumps(list(self.last_key), default=str)
        if self.max_key is not None:
            result[MAXIMUM_KEY] = json.dumps(list(self.max_key), default=str)
        return result

    # ------------------------------------------------------------------------ signals
    def is_signal(self, schema: str, table: str) -> bool:
        return (schema, table) == self.signal_table

    def on_signal(
        self, values: Sequence[Any], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> list[SourceRecord]:
        """A row inserted into the signal table: ``(id, type, data)`` text values."""
        signal_id, kind, data = [*values, None, None, None][:3]
        window = self._window
        if kind == WINDOW_OPEN and window is not None and signal_id == window.id + "-open":
            window.opened = True
        elif kind == WINDOW_CLOSE and window is not None and signal_id == window.id + "-close":
            return self._close(window, partition, offset)
        elif kind == "execute-snapshot":
            self._execute(_data(data))
        elif kind == "stop-snapshot":
            self._stop(_data(data))
        return []

    def _execute(self, data: Mapping[str, Any]) -> None:
        if str(data.get("type", "incremental")).lower() != "incremental":
            log.warning("Only incremental snapshots are supported; ignoring %s", data)
            return
        for collection in data.get("data-collections") or []:
            if collection not in self.collections:
                self.collections.append(str(collection))
        log.info("Incremental snapshot of %s requested", self.collections)

    def _stop(self, data: Mapping[str, Any]) -> None:
        named = data.get("data-collections") or []
        current = self.collections[0] if self.collections else None
        self.collections = [c for c in self.collections if named and c not in named]
        if current is not None and current not in self.collections:
            self._window = None
            self.last_key = self.max_key = None
        log.info("Incremental snapshot stopped for %s", named or "every table")

    def on_change(self, table: Any, key: Key) -> None:
        """A streamed change: a newer version of ``key`` than the open chunk holds."""
        window = self._window
        # By topic, not identity: a DDL may have replaced the table object since the chunk.
        if (
            window is not None
            and window.opened
            and window.table.debezium.topic == table.debezium.topic
        ):
            window.rows.pop(key, None)

    # ------------------------------------------------------------------------- chunks
    @property
    def wants_chunk(self) -> bool:
        return bool(self.collections) and self._window is None

    def read_chunk(self) -> None:
        """Read the next chunk between two watermarks (its rows wait for the close one)."""
        chunks = self.chunks
        while self.collections:
            table = chunks.table(self.collections[0])
            keys = table.debezium.key_columns if table is not None else ()
            if not keys:
                log.warning("%s is not captured or has no primary key: not snapshotted",
                            self.collections[0])  # fmt: skip
                self._next_table()
                continue
            if self.max_key is None:
                self.max_key = chunks.maximum(table, keys)
                if self.max_key is None:
                    self._next_table()
                    continue
            window_id = str(uuid.uuid4())
            self._watermark(window_id + "-open", WINDOW_OPEN)
            rows = chunks.select(table, keys, self.last_key, self.max_key, self.chunk_size)
            self._watermark(window_id + "-close", WINDOW_CLOSE)
            if not rows:
                self._next_table()
                continue
            buffered = {tuple(r[c] for c in keys): r for r in rows}
            self._window = _Window(window_id, table, buffered, tuple(rows[-1][c] for c in keys))
            return

    def _watermark(self, signal_id: str, kind: str) -> None:
        data = json.dumps({"openWindowTimestamp" if kind == WINDOW_OPEN
                           else "closeWindowTimestamp": now_us() // 1000})  # fmt: skip
        self.chunks.watermark(signal_id, kind, data)

    def _close(
        self, window: _Window, partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> list[SourceRecord]:
        self._window = None
        self.last_key = window.last
        table = window.table
        merged = {**offset, **self.offset()}
        records = []
        for row in window.rows.values():
            source = self.chunks.source(table)
            values = self.chunks.row(table, row)
            records.append(read_event(table.debezium, Position(partition, merged, source), values))
        return records

    def _next_table(self) -> None:
        self.collections.pop(0)
        self.last_key = self.max_key = None

    def close(self) -> None:
        self.chunks.close()


def _key(value: Any) -> Key | None:
    """A key written by this connector; ``None`` (restart the table) for any other form,
    such as Debezium's serialized Java arrays."""
    try:
        parsed = json.loads(value) if value else None
    except ValueError:
        return None
    return tuple(parsed) if isinstance(parsed, list) else None


def _data(text: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(text) if text else {}
    except ValueError:
        log.warning("Signal data is not JSON: %r", text)
        return {}
    return parsed if isinstance(parsed, dict) else {}


__all__ = ["ChunkSource", "IncrementalSnapshot", "Key"]
