"""Change events as Debezium writes them: ``op`` codes, envelopes, tombstones, key changes.

Operations: ``r`` (snapshot read), ``c`` (create), ``u`` (update), ``d`` (delete), ``t``
(truncate: null key, skipped unless ``skipped.operations`` leaves it out). A delete is followed
by a tombstone (same key, null value and value schema) when ``tombstones.on.delete`` is true.
An update that changes the key becomes a delete of the old key (header ``__debezium.newkey``),
its tombstone, and a create of the new key (header ``__debezium.oldkey``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkcat.api.data import Schema, Struct
from sparkcat.api.records import Header, SourceRecord
from sparkcat.connectors.debezium.schemas import TableSchema

OP_READ = "r"
OP_CREATE = "c"
OP_UPDATE = "u"
OP_DELETE = "d"
OP_TRUNCATE = "t"
OP_MESSAGE = "m"
NEW_KEY_HEADER = "__debezium.newkey"
OLD_KEY_HEADER = "__debezium.oldkey"


@dataclass(frozen=True, slots=True)
class EventSettings:
    """What shapes the events of one connector."""

    tombstones_on_delete: bool = True
    skipped_operations: frozenset[str] = frozenset({OP_TRUNCATE})


@dataclass(frozen=True, slots=True)
class Position:
    """Where an event comes from: its offset partition and offset, and its source block."""

    partition: Mapping[str, Any]
    offset: Mapping[str, Any]
    source: Struct


def now_us() -> int:
    return time.time_ns() // 1000


def envelope(
    table: TableSchema,
    op: str,
    before: Struct | None,
    after: Struct | None,
    source: Struct,
    processed_us: int | None = None,
) -> Struct:
    """One ``...Envelope`` value; ``ts_*`` say when the connector processed the event."""
    micros = now_us() if processed_us is None else processed_us
    # Field order of the envelope schema: before, after, source, transaction, op, ts_*.
    values = [before, after, source, None, op, micros // 1000, micros, micros * 1000]
    return Struct.from_valid_values(table.envelope_schema, values)


def _record(
    table: TableSchema,
    position: Position,
    key: Struct | None,
    value_schema: Schema | None,
    value: Struct | None,
    headers: list[Header] | None = None,
) -> SourceRecord:
    return SourceRecord(
        position.partition,
        position.offset,
        table.topic,
        None,
        table.key_schema,
        key,
        value_schema,
        value,
        None,
        headers,
    )


def read_event(table: TableSchema, position: Position, row: Mapping[str, Any]) -> SourceRecord:
    value = envelope(table, OP_READ, None, table.value(row), position.source)
    return _record(table, position, table.key(row), table.envelope_schema, value)


def change_events(
    table: TableSchema,
    settings: EventSettings,
    position: Position,
    op: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> list[SourceRecord]:
    """The records of one create, update or delete (none if ``op`` is skipped).

    ``before`` is what the database sent of the old row (``None``, the key columns, or the
    whole row); an update whose old key differs from the new one is split into delete and
    create as Debezium does.
    """
    if op in settings.skipped_operations:
        return []
    if op == OP_CREATE:
        assert after is not None
        value = envelope(table, op, None, table.value(after), position.source)
        return [_record(table, position, table.key(after), table.envelope_schema, value)]
    if op == OP_DELETE:
        assert before is not None
        return _delete(table, settings, position, before, None)
    assert after is not None
    old_key = table.key(before) if before is not None and table.has_key_values(before) else None
    new_key = table.key(after)
    if old_key is not None and new_key is not None and old_key != new_key:
        assert before is not None
        records = _delete(table, settings, position, before, new_key)
        headers = [Header(OLD_KEY_HEADER, table.key_schema, old_key)]
        value = envelope(table, OP_CREATE, None, table.value(after), position.source)
        records.append(_record(table, position, new_key, table.envelope_schema, value, headers))
        return records
    old = table.value(before) if before is not None else None
    value = envelope(table, OP_UPDATE, old, table.value(after), position.source)
    return [_record(table, position, new_key, table.envelope_schema, value)]


def _delete(
    table: TableSchema,
    settings: EventSettings,
    position: Position,
    before: Mapping[str, Any],
    new_key: Struct | None,
) -> list[SourceRecord]:
    key = table.key(before)
    headers = [Header(NEW_KEY_HEADER, table.key_schema, new_key)] if new_key is not None else None
    value = envelope(table, OP_DELETE, table.value(before), None, position.source)
    records = [_record(table, position, key, table.envelope_schema, value, headers)]
    if settings.tombstones_on_delete:
        records.append(_record(table, position, key, None, None))
    return records


def truncate_event(
    table: TableSchema, settings: EventSettings, position: Position
) -> list[SourceRecord]:
    if OP_TRUNCATE in settings.skipped_operations:
        return []
    value = envelope(table, OP_TRUNCATE, None, None, position.source)
    record = SourceRecord(
        position.partition,
        position.offset,
        table.topic,
        None,
        None,
        None,
        table.envelope_schema,
        value,
    )
    return [record]


def snapshot_marker(first: bool, last: bool, first_in_table: bool, last_in_table: bool) -> str:
    """``source.snapshot`` of a snapshot read, as Debezium marks it: ``first``/``last`` of the
    whole snapshot, ``first_in_data_collection``/``last_in_data_collection`` of a table, else
    ``true``."""
    if last:
        return "last"
    if first:
        return "first"
    if last_in_table:
        return "last_in_data_collection"
    if first_in_table:
        return "first_in_data_collection"
    return "true"


__all__ = [
    "NEW_KEY_HEADER",
    "OLD_KEY_HEADER",
    "OP_CREATE",
    "OP_DELETE",
    "OP_READ",
    "OP_TRUNCATE",
    "OP_UPDATE",
    "EventSettings",
    "Position",
    "change_events",
    "envelope",
    "read_event",
    "snapshot_marker",
    "truncate_event",
]
