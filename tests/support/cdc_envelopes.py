"""Debezium change events built by hand, in the shape Debezium's PostgreSQL connector writes them
(key ``<prefix>.<schema>.<table>.Key``, value ``...Envelope`` with ``before``/``after`` of
``...Value``, the ``io.debezium.connector.postgresql.Source`` block and ``transaction``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sparkcat.api.data import Schema, SchemaBuilder, Struct

_OPT_STRING = SchemaBuilder.string().optional().build()
_OPT_INT64 = SchemaBuilder.int64().optional().build()

SNAPSHOT_ENUM = (
    SchemaBuilder.string()
    .optional()
    .name("io.debezium.data.Enum")
    .version(1)
    .parameter(
        "allowed",
        "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental",
    )
    .default_value("false")
    .build()
)
PG_SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .field("version", SchemaBuilder.string().build())
    .field("connector", SchemaBuilder.string().build())
    .field("name", SchemaBuilder.string().build())
    .field("ts_ms", SchemaBuilder.int64().build())
    .field("snapshot", SNAPSHOT_ENUM)
    .field("db", SchemaBuilder.string().build())
    .field("sequence", _OPT_STRING)
    .field("ts_us", _OPT_INT64)
    .field("ts_ns", _OPT_INT64)
    .field("schema", SchemaBuilder.string().build())
    .field("table", SchemaBuilder.string().build())
    .field("txId", _OPT_INT64)
    .field("lsn", _OPT_INT64)
    .field("xmin", _OPT_INT64)
    .build()
)
TRANSACTION_BLOCK = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field("id", SchemaBuilder.string().build())
    .field("total_order", SchemaBuilder.int64().build())
    .field("data_collection_order", SchemaBuilder.int64().build())
    .build()
)


@dataclass
class Table:
    """One captured table: its key and row schemas and the envelope around the row."""

    prefix: str
    schema_name: str
    table: str
    key_schema: Schema
    row_schema: Schema
    envelope_schema: Schema

    @classmethod
    def of(cls, prefix: str, schema_name: str, table: str, columns: dict[str, Schema],
           key: tuple[str, ...] = ("id",)) -> Table:  # fmt: skip
        base = f"{prefix}.{schema_name}.{table}"
        key_builder = SchemaBuilder.struct().name(f"{base}.Key")
        row_builder = SchemaBuilder.struct().optional().name(f"{base}.Value")
        for column, column_schema in columns.items():
            if column in key:
                key_builder.field(column, column_schema)
            row_builder.field(column, column_schema)
        row = row_builder.build()
        envelope = (
            SchemaBuilder.struct()
            .name(f"{base}.Envelope")
            .version(2)
            .field("before", row)
            .field("after", row)
            .field("source", PG_SOURCE)
            .field("transaction", TRANSACTION_BLOCK)
            .field("op", SchemaBuilder.string().build())
            .field("ts_ms", _OPT_INT64)
            .field("ts_us", _OPT_INT64)
            .field("ts_ns", _OPT_INT64)
            .build()
        )
        return cls(prefix, schema_name, table, key_builder.build(), row, envelope)

    @property
    def topic(self) -> str:
        return f"{self.prefix}.{self.schema_name}.{self.table}"

    def key(self, row: dict[str, Any]) -> Struct:
        out = Struct(self.key_schema)
        for field in self.key_schema.fields:
            out.put(field.name, row[field.name])
        return out

    def row(self, values: dict[str, Any]) -> Struct:
        out = Struct(self.row_schema)
        for name, value in values.items():
            out.put(name, value)
        return out

    def source(self, lsn: int, *, snapshot: str = "false", tx_id: int = 700) -> Struct:
        return (
            Struct(PG_SOURCE)
            .put("version", "3.1.3.Final").put("connector", "postgresql")
            .put("name", self.prefix).put("ts_ms", 1_700_000_000_000 + lsn)
            .put("snapshot", snapshot).put("db", "inventory")
            .put("sequence", f'["{lsn - 8}","{lsn}"]')
            .put("ts_us", (1_700_000_000_000 + lsn) * 1000)
            .put("ts_ns", (1_700_000_000_000 + lsn) * 1_000_000)
            .put("schema", self.schema_name).put("table", self.table)
            .put("txId", tx_id).put("lsn", lsn)
        )  # fmt: skip

    def envelope(self, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None,
                 lsn: int, transaction: Struct | None = None) -> Struct:  # fmt: skip
        return (
            Struct(self.envelope_schema)
            .put("before", None if before is None else self.row(before))
            .put("after", None if after is None else self.row(after))
            .put("source", self.source(lsn, snapshot="true" if op == "r" else "false"))
            .put("transaction", transaction)
            .put("op", op).put("ts_ms", 1_700_000_000_500 + lsn)
        )  # fmt: skip

    def event(self, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None,
              lsn: int) -> tuple[Struct, Struct]:  # fmt: skip
        """``(key, value)`` of one change event."""
        row = after if after is not None else before
        assert row is not None
        return self.key(row), self.envelope(op, before, after, lsn)

    def transaction(self, tx_id: str, total: int, in_table: int) -> Struct:
        return (
            Struct(TRANSACTION_BLOCK)
            .put("id", tx_id).put("total_order", total).put("data_collection_order", in_table)
        )  # fmt: skip
