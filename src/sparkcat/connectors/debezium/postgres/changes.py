"""The streaming hot path: ``pgoutput`` change messages of one relation straight to records.

The general path takes four steps per change, each building its own objects: the generic
decoder (a message dataclass and a tuple of texts), a row dict, the typed values, and the
structs. A :class:`ChangePlan` is built once per ``Relation`` message instead and turns an
``I``/``U``/``D`` payload into the change events in one pass: a function generated for the
relation's columns reads each column's text out of the payload and converts it to its Connect
value in place (``int(...)`` for integer columns, a UTF-8 decode for text, the column's parser
and Debezium converter otherwise), then the key, ``before``/``after``, ``source`` and envelope
structs are built from those lists, already valid by construction.

The plan handles the common shapes only. It returns ``False`` (and has changed nothing) for
what the general path in :mod:`~sparkcat.connectors.debezium.postgres.stream` knows better:
unchanged TOASTed or binary columns, a column count that differs from the relation's, an
update that changes the key (Debezium's delete + tombstone + create), or a value that does not
parse (the general path then raises the same error with its context). The stream reader does
not use plans while it skips already-sent events after a restart or runs an incremental
snapshot. Both paths give equal records; the tests compare them.

Records are not built here: a poll's changes go into :class:`ChangeColumns`, the columns of
one :class:`~sparkcat.api.batch.SourceRecordBatch` with a topic and schemas per record (a
transaction's changes alternate tables, so they cannot be one topic's batch), which the
framework converts group by group with no ``SourceRecord`` per change.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sparkcat.api.batch import SourceRecordBatch, SourceRun
from sparkcat.api.data import Schema, Struct
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import (
    OP_CREATE,
    OP_DELETE,
    OP_UPDATE,
    EventSettings,
)
from sparkcat.connectors.debezium.postgres import pgoutput
from sparkcat.connectors.debezium.postgres.offsets import StreamPosition
from sparkcat.connectors.debezium.postgres.tables import SOURCE_FIELD_INDEX, CapturedTable
from sparkcat.connectors.debezium.schemas import empty_value

# A tuple reader: payload and the position of a tuple's column count → the ``...Value``
# field values, the key field values and the position after the tuple; ``None`` for a tuple
# the plan does not handle.
TupleReader = Callable[[bytes, int], "tuple[list[Any], list[Any], int] | None"]

_TAG_INSERT, _TAG_UPDATE, _TAG_DELETE = 0x49, 0x55, 0x44
_TAG_NEW, _TAG_KEY, _TAG_OLD = 0x4E, 0x4B, 0x4F
_NEW_STRUCT = Struct.from_valid_values
_TS_MS, _TS_US, _TS_NS = (SOURCE_FIELD_INDEX[n] for n in ("ts_ms", "ts_us", "ts_ns"))
_SNAPSHOT, _SEQUENCE = SOURCE_FIELD_INDEX["snapshot"], SOURCE_FIELD_INDEX["sequence"]
_TX_ID, _LSN = SOURCE_FIELD_INDEX["txId"], SOURCE_FIELD_INDEX["lsn"]


def _fused(parse: Callable[[str], Any], convert: Callable[[Any], Any]) -> str | Callable[..., Any]:
    """How one column's text becomes its Connect value: an expression template over the
    column's bytes ``{b}`` when it is a plain one, else a function of the decoded text."""
    if parse is int and convert is int:
        return "int({b})"  # int() reads ASCII digits from bytes directly
    if parse is float and convert is float:
        return "float({b})"
    if parse is str and convert is str:
        return "{b}.decode()"
    return lambda text: convert(parse(text))


def tuple_reader(table: CapturedTable, relation: pgoutput.Relation) -> TupleReader:
    """The generated reader of ``relation``'s tuples for ``table``'s schemas.

    Why generated: one straight-line block per column (no loop, no per-column call for the
    plain types) is what makes this path cheaper than the general one; only indices and
    fixed snippets are spliced into the source, functions and constants are globals.
    """
    debezium = table.debezium
    names = [c.name for c in relation.columns]
    slot = {name: i for i, name in enumerate(names)}
    ns: dict[str, Any] = {"L": struct.Struct(">i").unpack_from}
    count = len(names)
    lines = [
        "def read(data, pos):",
        f"    if data[pos] != {count >> 8} or data[pos + 1] != {count & 0xFF}: return None",
        "    pos += 2",
    ]
    wanted = (set(debezium.value_fields) | set(debezium.key_columns)) & set(debezium.columns)
    for i, name in enumerate(names):
        if name not in wanted:
            lines += _skip_column()
            continue
        fused = _fused(table.parsers.get(name, str), debezium.converter(name))
        if isinstance(fused, str):
            expression = fused.format(b="data[pos + 5:e]")
        else:
            ns[f"F{i}"] = fused
            expression = f"F{i}(data[pos + 5:e].decode())"
        lines += _read_column(i, expression)
    value_items = []
    for j, field in enumerate(debezium.value_schema.fields):
        at = slot.get(field.name) if field.name in wanted else None
        if field.schema.optional:
            value_items.append("None" if at is None else f"x{at}")
            continue
        ns[f"N{j}"] = _empty_factory(field.schema)
        value_items.append(f"N{j}()" if at is None else f"(N{j}() if x{at} is None else x{at})")
    key_items = [
        f"x{slot[c]}" if c in slot and c in wanted else "None" for c in debezium.key_columns
    ]
    lines.append(f"    return [{', '.join(value_items)}], [{', '.join(key_items)}], pos")
    source = "\n".join(lines)
    exec(compile(source, f"<pgoutput {relation.namespace}.{relation.name}>", "exec"), ns)
    return ns["read"]  # type: ignore[no-any-return]


def _skip_column() -> list[str]:
    return [
        "    k = data[pos]",
        "    if k == 116: pos += 5 + L(data, pos + 1)[0]",
        "    elif k == 110: pos += 1",
        "    else: return None",
    ]


def _read_column(i: int, expression: str) -> list[str]:
    """Column ``i`` as text (``t``) or NULL (``n``); any other kind (unchanged TOAST, binary)
    is left to the general path."""
    return [
        "    k = data[pos]",
        "    if k == 116:",
        "        e = pos + 5 + L(data, pos + 1)[0]",
        f"        x{i} = {expression}",
        "        pos = e",
        "    elif k == 110:",
        f"        x{i} = None",
        "        pos += 1",
        "    else: return None",
    ]


def _empty_factory(schema: Schema) -> Callable[[], Any]:
    """Debezium's empty value of a required column the tuple lacks (a key-only ``before``);
    a fresh one per call when it is a mutable Struct."""
    value = empty_value(schema)
    if isinstance(value, Struct):
        return lambda: empty_value(schema)
    return lambda: value


class ChangePlan:
    """The change events of one captured relation, decoded in one pass (see the module docs)."""

    __slots__ = ("_envelope", "_key", "_read", "_settings", "_source", "_source_schema",
                 "_topic", "_value", "partition")  # fmt: skip

    def __init__(
        self,
        table: CapturedTable,
        relation: pgoutput.Relation,
        settings: EventSettings,
        partition: Mapping[str, Any],
    ) -> None:
        debezium = table.debezium
        self._read = tuple_reader(table, relation)
        self._settings = settings
        self.partition = partition
        self._topic = debezium.topic
        self._key = debezium.key_schema
        self._value = debezium.value_schema
        self._envelope = debezium.envelope_schema
        self._source = table.source_fields
        self._source_schema = debezium.envelope_schema.fields[2].schema

    def change(self, data: bytes, lsn: int, position: StreamPosition, out: ChangeColumns) -> bool:
        """Append the events of the change message ``data`` at ``lsn`` to ``out``; ``False``
        (nothing appended, ``position`` untouched) when the general path must take it."""
        tag = data[0]
        try:
            if tag == _TAG_INSERT:
                if data[5] != _TAG_NEW:
                    return False
                new = self._read(data, 6)
                if new is None:
                    return False
                op, before, after, key = OP_CREATE, None, new[0], new[1]
            elif tag == _TAG_UPDATE:
                old = None
                pos = 5
                if data[5] == _TAG_KEY or data[5] == _TAG_OLD:
                    old = self._read(data, 6)
                    if old is None:
                        return False
                    pos = old[2]
                if data[pos] != _TAG_NEW:
                    return False
                new = self._read(data, pos + 1)
                if new is None:
                    return False
                key = new[1]
                # A changed key is a delete and a create (the general path splits it).
                if old is not None and None not in old[1] and old[1] != key:
                    return False
                op, before, after = OP_UPDATE, None if old is None else old[0], new[0]
            elif tag == _TAG_DELETE:
                if data[5] != _TAG_KEY and data[5] != _TAG_OLD:
                    return False
                old = self._read(data, 6)
                if old is None:
                    return False
                op, before, after, key = OP_DELETE, old[0], None, old[1]
            else:
                return False
        except Exception:  # truncated, or a text that does not parse
            return False  # the general path raises its error with its context
        position.event(lsn)
        if op in self._settings.skipped_operations:
            return True
        self._append(op, before, after, key, position, out)
        return True

    def _append(
        self,
        op: str,
        before: list[Any] | None,
        after: list[Any] | None,
        key_values: list[Any],
        p: StreamPosition,
        out: ChangeColumns,
    ) -> None:
        value_schema, key_schema = self._value, self._key
        key = None if key_schema is None else _NEW_STRUCT(key_schema, key_values)
        ts_usec = p.ts_usec or 0
        lsn, commit = p.lsn, p.lsn_commit
        row = self._source.copy()
        row[_TS_MS], row[_TS_US], row[_TS_NS] = ts_usec // 1000, ts_usec, ts_usec * 1000
        row[_SNAPSHOT], row[_TX_ID], row[_LSN] = "false", p.tx_id, lsn
        if commit is not None:
            row[_SEQUENCE] = f'["{commit}","{lsn}"]'
        micros = time.time_ns() // 1000
        value = _NEW_STRUCT(self._envelope, [
            None if before is None else _NEW_STRUCT(value_schema, before),
            None if after is None else _NEW_STRUCT(value_schema, after),
            _NEW_STRUCT(self._source_schema, row), None, op, micros // 1000, micros, micros * 1000,
        ])  # fmt: skip
        offset = p.offset()
        out.add(self.partition, offset, self._topic, key_schema, key, self._envelope, value)
        if op == OP_DELETE and self._settings.tombstones_on_delete:
            out.add(self.partition, offset, self._topic, key_schema, key, None, None)


class ChangeColumns:
    """The records of one poll as columns: what :meth:`batch` returns as a
    :class:`~sparkcat.api.batch.SourceRecordBatch` (a topic, schemas and an offset per
    record, one run per source partition)."""

    __slots__ = ("_extras", "key_schemas", "keys", "offsets", "partitions", "topics",
                 "value_schemas", "values")  # fmt: skip

    def __init__(self) -> None:
        # Mappings as the records carry them (None for none), the batch's runs and offsets.
        self.partitions: list[Any] = []
        self.offsets: list[Any] = []
        self.topics: list[str] = []
        self.key_schemas: list[Schema | None] = []
        self.keys: list[Any] = []
        self.value_schemas: list[Schema | None] = []
        self.values: list[Any] = []
        # Records with what the batch's columns do not carry (headers: a key change's
        # __debezium.newkey/oldkey), by position; batch() then returns a list.
        self._extras: dict[int, SourceRecord] = {}

    def __len__(self) -> int:
        return len(self.values)

    def add(
        self,
        partition: Mapping[str, Any] | None,
        offset: Mapping[str, Any] | None,
        topic: str,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
    ) -> None:
        self.partitions.append(partition)
        self.offsets.append(offset)
        self.topics.append(topic)
        self.key_schemas.append(key_schema)
        self.keys.append(key)
        self.value_schemas.append(value_schema)
        self.values.append(value)

    def append(self, record: SourceRecord) -> None:
        """A record built elsewhere (the general decoder, a heartbeat, a signal)."""
        if record.headers or record.kafka_partition is not None or record.timestamp is not None:
            self._extras[len(self.values)] = record
        self.add(record.source_partition, record.source_offset, record.topic,
                 record.key_schema, record.key, record.value_schema, record.value)  # fmt: skip

    def extend(self, records: Iterable[SourceRecord]) -> None:
        for record in records:
            self.append(record)

    def batch(self) -> SourceRecordBatch | list[SourceRecord]:
        """The records as one batch (a list when there are none, or when one of them has
        headers, a Kafka partition or a timestamp)."""
        if not self.values:
            return []
        offsets = self.offsets
        batch = SourceRecordBatch(
            None, self.values, None, _runs(self.partitions, offsets), keys=self.keys,
            record_offsets=lambda: offsets, topics=self.topics, key_schemas=self.key_schemas,
            value_schemas=self.value_schemas,
        )  # fmt: skip
        if not self._extras:
            return batch
        records = list(batch.records())
        for at, record in self._extras.items():
            records[at] = record
        return records


def _runs(partitions: list[Any], offsets: list[Any]) -> list[SourceRun]:
    """One run per stretch of records of one source partition, with its last offset."""
    first, size = partitions[0], len(partitions)
    if partitions.count(first) == size:  # the common case: one partition (identity, in C)
        return [SourceRun(first, offsets[-1], size)]
    runs, start = [], 0
    for i in range(1, size + 1):
        if i == size or partitions[i] != partitions[start]:
            runs.append(SourceRun(partitions[start], offsets[i - 1], i - start))
            start = i
    return runs


__all__ = ["ChangeColumns", "ChangePlan", "tuple_reader"]
