"""The captured tables of a MySQL/MariaDB server: their columns as the core's generic
:class:`~sparkcat.connectors.debezium.types.Column` kinds (Debezium's MySQL type mapping), their
key, and the ``source`` block of the connector's flavour.

Column types come from ``information_schema`` (read again after DDL or when a binlog event
brings columns the cached shape lacks); column names of streamed rows come from the binlog's
table maps. Values are normalised here to what the core converts: JSON documents to text, SET
members to a comma list, BIT(1) to a boolean, bit strings to integers.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium import types as t
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.schemas import TableSchema, source_schema, source_struct

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})

_INTEGERS = {
    ("tinyint", False): t.KIND_INT16, ("tinyint", True): t.KIND_INT16,
    ("smallint", False): t.KIND_INT16, ("smallint", True): t.KIND_INT32,
    ("mediumint", False): t.KIND_INT32, ("mediumint", True): t.KIND_INT32,
    ("int", False): t.KIND_INT32, ("int", True): t.KIND_INT64,
    ("integer", False): t.KIND_INT32, ("integer", True): t.KIND_INT64,
    ("bigint", False): t.KIND_INT64, ("bigint", True): t.KIND_INT64,
}  # fmt: skip
_STRINGS = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
_BINARIES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


def source_block_schema(flavour: str) -> Schema:
    """``io.debezium.connector.<mysql|mariadb>.Source``: the common fields, then the binlog's."""
    optional_string = SchemaBuilder.string().optional().build()
    optional_int64 = SchemaBuilder.int64().optional().build()
    return source_schema(
        f"io.debezium.connector.{flavour}.Source",
        [("table", optional_string), ("server_id", SchemaBuilder.int64().build()),
         ("gtid", optional_string), ("file", SchemaBuilder.string().build()),
         ("pos", SchemaBuilder.int64().build()), ("row", SchemaBuilder.int32().build()),
         ("thread", optional_int64), ("query", optional_string)],
    )  # fmt: skip


@dataclass(frozen=True)
class SchemaSettings:
    """What shapes the schemas of every captured table of one connector."""

    prefix: str
    delimiter: str
    flavour: str
    modes: t.TypeModes
    key_columns: KeyColumns
    columns: NameFilter
    bigint_precise: bool


class CapturedTable:
    """One table: its Debezium schemas, and how to turn a row of it into a ``...Value``."""

    def __init__(
        self, db: str, name: str, columns: list[t.Column], key: list[str], settings: SchemaSettings
    ) -> None:
        self.db = db
        self.name = name
        self.columns = columns
        self.column_names = frozenset(c.name for c in columns)
        self.primary_key = tuple(key)
        topic = settings.delimiter.join((settings.prefix, db, name))
        wanted = [c.name for c in columns if settings.columns.matches(f"{db}.{name}.{c.name}")]
        chosen = settings.key_columns.for_table(f"{db}.{name}")
        self.debezium = TableSchema(topic, columns, list(chosen) if chosen else key,
                                    settings.modes, source_block_schema(settings.flavour),
                                    wanted)  # fmt: skip
        self._normalisers = {c.name: _normaliser(c) for c in columns}

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in values.items():
            normalise = self._normalisers.get(name)
            if normalise is not None:
                out[name] = None if value is None else normalise(value)
        return out


def _normaliser(column: t.Column) -> Any:
    kind = column.kind
    if kind == t.KIND_JSON:
        return lambda v: v if isinstance(v, str) else _json_text(v)
    if kind == t.KIND_BOOLEAN:
        return lambda v: _bit_number(v) != 0 if isinstance(v, bytes | str) else bool(v)
    if kind == t.KIND_BITS:
        return _bit_number
    if kind in (t.KIND_STRING, t.KIND_ENUM):
        return lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else v
    if kind == t.KIND_DATE:
        return lambda v: v.date() if isinstance(v, datetime.datetime) else v
    return lambda v: v


def _bit_number(value: Any) -> int:
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if isinstance(value, str):
        return int(value or "0", 2)
    return int(value)


def _json_text(value: Any) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, dict):
            return {plain(k): plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v

    return json.dumps(plain(value), separators=(",", ":"), default=str)


def column_of(row: Mapping[str, Any], settings: SchemaSettings) -> t.Column:
    """A :class:`Column` from one ``information_schema.COLUMNS`` row (lower-case keys)."""
    data_type = str(row["data_type"]).lower()
    column_type = str(row["column_type"]).lower()
    unsigned = "unsigned" in column_type
    optional = str(row["is_nullable"]).upper() == "YES"
    name = str(row["column_name"])
    precision, scale = row.get("numeric_precision"), row.get("numeric_scale")
    fraction = row.get("datetime_precision")
    kind = _INTEGERS.get((data_type, unsigned))
    if kind is not None:
        if data_type == "bigint" and unsigned and settings.bigint_precise:
            return t.Column(name, t.KIND_DECIMAL, optional, 20, 0, column_type)
        return t.Column(name, kind, optional, type_name=column_type)
    if data_type in ("decimal", "numeric"):
        return t.Column(name, t.KIND_DECIMAL, optional, int(precision or 10), int(scale or 0),
                        column_type)  # fmt: skip
    simple = {"float": t.KIND_FLOAT64, "double": t.KIND_FLOAT64, "real": t.KIND_FLOAT64,
              "date": t.KIND_DATE, "year": t.KIND_YEAR, "json": t.KIND_JSON,
              "timestamp": t.KIND_TIMESTAMP_TZ}.get(data_type)  # fmt: skip
    if simple is not None:
        return t.Column(name, simple, optional, type_name=column_type)
    if data_type in ("time", "datetime"):
        kind = t.KIND_TIME if data_type == "time" else t.KIND_TIMESTAMP
        return t.Column(name, kind, optional, int(fraction or 0), type_name=column_type)
    if data_type == "bit":
        bits = int(precision or 1)
        if bits == 1:
            return t.Column(name, t.KIND_BOOLEAN, optional, type_name=column_type)
        return t.Column(name, t.KIND_BITS, optional, bits, type_name=column_type)
    if data_type in ("enum", "set"):
        members = _members(column_type)
        kind = t.KIND_ENUM if data_type == "enum" else t.KIND_ENUM_SET
        return t.Column(name, kind, optional, type_name=column_type, allowed=members)
    if data_type in _BINARIES:
        return t.Column(name, t.KIND_BYTES, optional, type_name=column_type)
    return t.Column(name, t.KIND_STRING, optional, type_name=column_type)


def _members(column_type: str) -> tuple[str, ...]:
    """The quoted members of ``enum('a','b')``/``set('a','b')``."""
    inner = column_type[column_type.index("(") + 1 : column_type.rindex(")")]
    members, current, quoted, i = [], "", False, 0
    while i < len(inner):
        ch = inner[i]
        if ch == "'" and quoted and inner[i + 1 : i + 2] == "'":
            current += "'"
            i += 1
        elif ch == "'":
            quoted = not quoted
        elif ch == "," and not quoted:
            members.append(current)
            current = ""
        elif quoted:
            current += ch
        i += 1
    members.append(current)
    return tuple(members)


class Tables:
    """The captured tables, read from ``information_schema`` on first use and after DDL."""

    def __init__(self, settings: SchemaSettings, databases: NameFilter, tables: NameFilter):
        self.settings = settings
        self.databases = databases
        self.tables = tables
        self._cache: dict[tuple[str, str], CapturedTable] = {}
        self.source_schema = source_block_schema(settings.flavour)

    def captured(self, db: str, table: str) -> bool:
        if db.lower() in SYSTEM_DATABASES or not self.databases.matches(db):
            return False
        return self.tables.matches(f"{db}.{table}")

    def list(self, conn: Any) -> list[tuple[str, str]]:
        """The captured base tables on the server now, in name order."""
        with conn.cursor() as cur:
            cur.execute(
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                "WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME"
            )
            found = [(str(d), str(n)) for d, n in cur.fetchall()]  # fmt: skip
        return [(d, n) for d, n in found if self.captured(d, n)]

    def get(self, conn: Any, db: str, table: str, names: frozenset[str] | None = None) -> Any:
        """The table's schemas, re-read if ``names`` (a row's columns) are not all known."""
        cached = self._cache.get((db, table))
        if cached is not None and (names is None or names <= cached.column_names):
            return cached
        loaded = self._load(conn, db, table)
        self._cache[(db, table)] = loaded
        return loaded

    def forget(self, db: str) -> None:
        """Drop what is known of ``db``'s tables (after DDL in it)."""
        for key in [k for k in self._cache if k[0] == db or not db]:
            del self._cache[key]

    def _load(self, conn: Any, db: str, table: str) -> CapturedTable:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION, "
                "NUMERIC_SCALE, DATETIME_PRECISION, COLUMN_KEY FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                (db, table),
            )
            names = [d[0].lower() for d in cur.description]
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
            cur.execute(
                "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                "AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
                (db, table),
            )
            key = [str(r[0]) for r in cur.fetchall()]
        columns = [column_of(r, self.settings) for r in rows]
        return CapturedTable(db, table, columns, key, self.settings)

    def source(self, table: str | None, db: str, ts_us: int, values: Mapping[str, Any]) -> Struct:
        return source_struct(self.source_schema, {
            "version": common.DEBEZIUM_VERSION, "connector": self.settings.flavour,
            "name": self.settings.prefix, "ts_us": ts_us, "db": db, "table": table, **values,
        })  # fmt: skip


__all__ = ["CapturedTable", "SchemaSettings", "Tables", "column_of", "source_block_schema"]
