"""The captured tables of one task: their Debezium schemas, their value parsers, and the
``source`` block of the PostgreSQL connector (``io.debezium.connector.postgresql.Source``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.connectors.debezium.config import DEBEZIUM_VERSION
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.postgres import database, values
from sparkcat.connectors.debezium.schemas import (
    UNAVAILABLE,
    TableSchema,
    source_schema,
)
from sparkcat.connectors.debezium.types import TypeModes

CONNECTOR = "postgresql"
_OPT_INT64 = SchemaBuilder.int64().optional().build()
_STRING = SchemaBuilder.string().build()
SOURCE_SCHEMA = source_schema(
    "io.debezium.connector.postgresql.Source",
    [("schema", _STRING), ("table", _STRING), ("txId", _OPT_INT64), ("lsn", _OPT_INT64),
     ("xmin", _OPT_INT64)],
)  # fmt: skip


@dataclass(frozen=True)
class SchemaSettings:
    topic_prefix: str
    delimiter: str
    dbname: str
    modes: TypeModes
    key_columns: KeyColumns
    columns: NameFilter
    money_digits: int


@dataclass
class CapturedTable:
    schema: str
    name: str
    shape: database.TableShape
    debezium: TableSchema
    parsers: dict[str, Callable[[str], Any]]
    source_fields: list[Any] = field(default_factory=list)
    """The ``source`` block's values that are the same for every event of the table."""

    def row(self, names: Sequence[str], texts: Sequence[Any]) -> dict[str, Any]:
        """A row from column names and their text values (``None``, or unavailable)."""
        row: dict[str, Any] = {}
        for name, text in zip(names, texts, strict=True):
            if text is None or not isinstance(text, str):
                row[name] = UNAVAILABLE if text is not None else None
            else:
                parse = self.parsers.get(name)
                row[name] = parse(text) if parse is not None else text
        return row


class Tables:
    """Builds and caches :class:`CapturedTable` per ``(schema, table)``."""

    def __init__(self, conn: Any, settings: SchemaSettings) -> None:
        self._conn = conn
        self.settings = settings
        self._tables: dict[tuple[str, str], CapturedTable] = {}

    def get(self, schema: str, table: str, refresh: bool = False) -> CapturedTable:
        key = (schema, table)
        found = self._tables.get(key)
        if found is None or refresh:
            found = self._build(schema, table)
            self._tables[key] = found
        return found

    def _build(self, schema: str, table: str) -> CapturedTable:
        s = self.settings
        shape = database.table_shape(self._conn, schema, table, s.money_digits)
        fqn = f"{schema}.{table}"
        key = s.key_columns.for_table(fqn) or shape.primary_key
        included = [
            c.name for c in shape.columns if s.columns.matches(f"{fqn}.{c.name}") or c.name in key
        ]
        topic = s.delimiter.join((s.topic_prefix, schema, table))
        debezium = TableSchema.shared(topic, shape.columns, key, s.modes, SOURCE_SCHEMA, included)
        parsers = {c.name: values.parser(c) for c in shape.columns}
        fixed = {"version": DEBEZIUM_VERSION, "connector": CONNECTOR, "name": s.topic_prefix,
                 "db": s.dbname, "schema": schema, "table": table}  # fmt: skip
        source_fields = [fixed.get(f.name) for f in SOURCE_SCHEMA.fields]
        return CapturedTable(schema, table, shape, debezium, parsers, source_fields)

    def source(
        self,
        table: CapturedTable,
        ts_us: int,
        snapshot: str,
        lsn: int | None,
        tx_id: int | None,
        sequence: str | None = None,
    ) -> Struct:
        # One per event: the table's fixed values, the event's own set by field position.
        row = table.source_fields.copy()
        row[_TS_MS], row[_TS_US], row[_TS_NS] = ts_us // 1000, ts_us, ts_us * 1000
        row[_SNAPSHOT], row[_SEQUENCE], row[_TX_ID], row[_LSN] = snapshot, sequence, tx_id, lsn
        return Struct.from_valid_values(SOURCE_SCHEMA, row)


SOURCE_FIELD_INDEX = {f.name: i for i, f in enumerate(SOURCE_SCHEMA.fields)}
"""The position of each ``source`` field, for code that fills the block's values by index."""
_INDEX = SOURCE_FIELD_INDEX
_TS_MS, _TS_US, _TS_NS = _INDEX["ts_ms"], _INDEX["ts_us"], _INDEX["ts_ns"]
_SNAPSHOT, _SEQUENCE, _TX_ID, _LSN = (_INDEX["snapshot"], _INDEX["sequence"], _INDEX["txId"],
                                      _INDEX["lsn"])  # fmt: skip


__all__ = ["SOURCE_FIELD_INDEX", "SOURCE_SCHEMA", "CapturedTable", "SchemaSettings", "Tables"]
