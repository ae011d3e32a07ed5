"""Debezium's schemas: per-table key/value/envelope, the ``source`` block, the snapshot marker.

Names (Debezium's defaults, ``schema.name.adjustment.mode=none``): the data topic of table
``t`` in schema (or database) ``s`` is ``<topic.prefix>.s.t``; its key schema is
``<topic>.Key`` (a struct of the key columns; no key columns means a null key), its row schema
``<topic>.Value`` and its envelope ``<topic>.Envelope`` (version 2) with the fields ``before``,
``after``, ``source``, ``transaction``, ``op``, ``ts_ms``, ``ts_us``, ``ts_ns`` in that order.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.connectors.debezium.types import (
    Column,
    Converter,
    TypeModes,
    column_schema,
    value_converter,
)

ENVELOPE_VERSION = 2
SNAPSHOT_VALUES = (
    "true",
    "first",
    "first_in_data_collection",
    "last_in_data_collection",
    "last",
    "false",
    "incremental",
)
UNAVAILABLE_VALUE_PLACEHOLDER = "__debezium_unavailable_value"


class Unavailable:
    """The value of a column the database did not send (PostgreSQL's unchanged TOAST)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNAVAILABLE"


UNAVAILABLE = Unavailable()

_OPTIONAL_INT64 = SchemaBuilder.int64().optional().build()
_OPTIONAL_STRING = SchemaBuilder.string().optional().build()
_STRING = SchemaBuilder.string().build()
_INT64 = SchemaBuilder.int64().build()

SNAPSHOT_SCHEMA = (
    SchemaBuilder.string()
    .name("io.debezium.data.Enum")
    .version(1)
    .parameter("allowed", ",".join(SNAPSHOT_VALUES))
    .default_value("false")
    .optional()
    .build()
)

TRANSACTION_BLOCK_SCHEMA = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field("id", _STRING)
    .field("total_order", _INT64)
    .field("data_collection_order", _INT64)
    .build()
)


def source_schema(name: str, extra: Sequence[tuple[str, Schema]]) -> Schema:
    """The ``source`` block: Debezium's common fields, then the connector's own ``extra``."""
    builder = (
        SchemaBuilder.struct()
        .name(name)
        .field("version", _STRING)
        .field("connector", _STRING)
        .field("name", _STRING)
        .field("ts_ms", _INT64)
        .field("snapshot", SNAPSHOT_SCHEMA)
        .field("db", _STRING)
        .field("sequence", _OPTIONAL_STRING)
        .field("ts_us", _OPTIONAL_INT64)
        .field("ts_ns", _OPTIONAL_INT64)
    )
    for field_name, schema in extra:
        builder.field(field_name, schema)
    return builder.build()


def source_struct(schema: Schema, values: Mapping[str, Any]) -> Struct:
    """A ``source`` block; ``ts_ms``/``ts_ns`` follow from ``ts_us`` in ``values``.

    Built without per-field checks (one is built per event): ``values`` come from the
    connector, typed as the schema says."""
    micros = values["ts_us"]
    derived = {"ts_ms": micros // 1000, "ts_ns": micros * 1000}
    get = values.get
    row = [derived[f.name] if f.name in derived else get(f.name) for f in schema.fields]
    return Struct.from_valid_values(schema, row)


class TableSchema:
    """The schemas of one captured table and the functions that fill them from a row.

    A row is a mapping from column name to the database's Python value (``None`` for NULL,
    :data:`UNAVAILABLE` for a value the database did not send). Columns filtered out by
    ``column.include.list``/``column.exclude.list`` are absent from ``value_schema``; key
    columns are always in the key.
    """

    def __init__(
        self,
        topic: str,
        columns: Sequence[Column],
        key_columns: Sequence[str],
        modes: TypeModes,
        source: Schema,
        included: Sequence[str] | None = None,
    ) -> None:
        self.topic = topic
        self.columns = {c.name: c for c in columns}
        self.key_columns = tuple(key_columns)
        wanted = set(self.columns if included is None else included)
        schemas = {c.name: column_schema(c, modes) for c in columns}
        self._converters: dict[str, Converter] = {
            c.name: value_converter(c, schemas[c.name], modes) for c in columns
        }
        value = SchemaBuilder.struct().name(f"{topic}.Value")
        self.value_fields = tuple(c.name for c in columns if c.name in wanted)
        for name in self.value_fields:
            value.field(name, schemas[name])
        self.value_schema = value.optional().build()
        self.key_schema: Schema | None = None
        if self.key_columns:
            key = SchemaBuilder.struct().name(f"{topic}.Key")
            for name in self.key_columns:
                key.field(name, schemas[name])
            self.key_schema = key.build()
        self.envelope_schema = (
            SchemaBuilder.struct()
            .name(f"{topic}.Envelope")
            .version(ENVELOPE_VERSION)
            .field("before", self.value_schema)
            .field("after", self.value_schema)
            .field("source", source)
            .field("transaction", TRANSACTION_BLOCK_SCHEMA)
            .field("op", _STRING)
            .field("ts_ms", _OPTIONAL_INT64)
            .field("ts_us", _OPTIONAL_INT64)
            .field("ts_ns", _OPTIONAL_INT64)
            .build()
        )
        # Per field of the value, what value() needs, looked up once rather than per event.
        self._value_plan = [
            (f.name, f.schema, self._converters[f.name], f.schema.optional)
            for f in self.value_schema.fields
        ]

    @classmethod
    def shared(
        cls,
        topic: str,
        columns: Sequence[Column],
        key_columns: Sequence[str],
        modes: TypeModes,
        source: Schema,
        included: Sequence[str] | None = None,
    ) -> TableSchema:
        """The one :class:`TableSchema` of these arguments in this process.

        Every lease starts its task anew, while converters live longer and cache by schema:
        a schema equal to the cached one but another object costs a deep comparison per
        record (measured: a fifth of the PostgreSQL task's time from its second lease on).
        """
        key = (topic, tuple(columns), tuple(key_columns), modes, source,
               None if included is None else tuple(included))  # fmt: skip
        found = _SHARED.get(key)
        if found is None:
            if len(_SHARED) >= _SHARED_MAX:
                _SHARED.clear()  # schemas of tables long altered or gone
            found = _SHARED[key] = cls(topic, columns, key_columns, modes, source, included)
        return found

    def converter(self, name: str) -> Converter:
        """The function from the database's non-null value of column ``name`` to its
        Connect value (what :meth:`value` and :meth:`key` apply)."""
        return self._converters[name]

    def _convert(self, name: str, schema: Schema, raw: Any) -> Any:
        if raw is None:
            return None
        if raw is UNAVAILABLE:
            return _placeholder(schema)
        return self._converters[name](raw)

    def value(self, row: Mapping[str, Any]) -> Struct:
        """The row as a ``...Value`` struct. A required column the row lacks (a key-only
        ``before``) gets its type's empty value, as Debezium fills it. The converters give
        values of the field's type, so the struct is built without per-field checks."""
        values = []
        get = row.get
        for name, schema, convert, optional in self._value_plan:
            raw = get(name)
            if raw is None:
                value = None
            elif raw is UNAVAILABLE:
                value = _placeholder(schema)
            else:
                value = convert(raw)
            if value is None and not optional:
                value = _empty(schema)
            values.append(value)
        return Struct.from_valid_values(self.value_schema, values)

    def key(self, row: Mapping[str, Any]) -> Struct | None:
        if self.key_schema is None:
            return None
        values = [self._convert(f.name, f.schema, row.get(f.name)) for f in self.key_schema.fields]
        return Struct.from_valid_values(self.key_schema, values)

    def has_key_values(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` carries every key column (a key-only ``before`` may not)."""
        return all(row.get(c) is not None for c in self.key_columns)


_SHARED: dict[tuple[Any, ...], TableSchema] = {}
_SHARED_MAX = 1024


def empty_value(schema: Schema) -> Any:
    """What Debezium puts in a required field the database did not send (a key-only
    ``before``): the type's empty value (``0``, ``""``, epoch, ...)."""
    return _empty(schema)


def _empty(schema: Schema) -> Any:
    if schema.name in _EMPTY_LOGICAL:
        return _EMPTY_LOGICAL[schema.name]()
    if schema.name == "org.apache.kafka.connect.data.Decimal":
        return decimal.Decimal(0).scaleb(-int((schema.parameters or {}).get("scale", "0")))
    if schema.type.name == "STRUCT":
        struct = Struct(schema)
        for field in schema.fields:
            struct.put(field, _empty(field.schema))
        return struct
    return _EMPTY[schema.type.name]


_EMPTY: dict[str, Any] = {
    "INT8": 0, "INT16": 0, "INT32": 0, "INT64": 0, "FLOAT32": 0.0, "FLOAT64": 0.0,
    "BOOLEAN": False, "STRING": "", "BYTES": b"", "ARRAY": [], "MAP": {},
}  # fmt: skip
_EMPTY_LOGICAL: dict[str, Any] = {
    "org.apache.kafka.connect.data.Date": lambda: datetime.date(1970, 1, 1),
    "org.apache.kafka.connect.data.Time": lambda: datetime.time(0),
    "org.apache.kafka.connect.data.Timestamp": lambda: datetime.datetime(1970, 1, 1),
}


def _placeholder(schema: Schema) -> Any:
    kind = schema.type.name
    if kind == "STRING":
        return UNAVAILABLE_VALUE_PLACEHOLDER
    if kind == "BYTES":
        return UNAVAILABLE_VALUE_PLACEHOLDER.encode()
    return None


__all__ = [
    "ENVELOPE_VERSION",
    "SNAPSHOT_SCHEMA",
    "SNAPSHOT_VALUES",
    "TRANSACTION_BLOCK_SCHEMA",
    "UNAVAILABLE",
    "UNAVAILABLE_VALUE_PLACEHOLDER",
    "TableSchema",
    "empty_value",
    "source_schema",
    "source_struct",
]
