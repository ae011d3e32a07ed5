"""The captured tables of a MySQL/MariaDB server: their columns as the core's generic
:class:`~sparkcat.connectors.debezium.types.Column` kinds (Debezium's MySQL type mapping), their
key, and the ``source`` block of the connector's flavour.

A table's shape is a :class:`TableDefinition`: its ``information_schema`` rows and primary
key, as read from the server at the snapshot, after DDL, or recovered from the schema history
as of the task's offset (so a row written before an ``ALTER TABLE`` is read with the columns it
was written with). Column names of streamed rows come from the binlog's table maps. Values are
normalised here to what the core converts: JSON documents to text, SET members to a comma
list, BIT(1) to a boolean, bit strings to integers.
"""

from __future__ import annotations

import builtins
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
class TableDefinition:
    """One table's columns as ``information_schema.COLUMNS`` rows (lower-case keys, in
    ordinal order) and its primary key: what the schema history records per table."""

    db: str
    name: str
    columns: tuple[Mapping[str, Any], ...]
    primary_key: tuple[str, ...]
    charset: str | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(str(c["column_name"]) for c in self.columns)


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

    def __init__(self, definition: TableDefinition, settings: SchemaSettings) -> None:
        db, name = definition.db, definition.name
        columns = [column_of(r, settings) for r in definition.columns]
        self.definition = definition
        self.db = db
        self.name = name
        self.columns = columns
        self.column_names = frozenset(c.name for c in columns)
        self.primary_key = definition.primary_key
        topic = settings.delimiter.join((settings.prefix, db, name))
        wanted = [c.name for c in columns if settings.columns.matches(f"{db}.{name}.{c.name}")]
        chosen = settings.key_columns.for_table(f"{db}.{name}")
        # One schema object per shape in this process: converters cache by schema identity.
        self.debezium = TableSchema.shared(topic, columns,
                                           list(chosen) if chosen else list(definition.primary_key),
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
        members = enum_members(column_type)
        kind = t.KIND_ENUM if data_type == "enum" else t.KIND_ENUM_SET
        return t.Column(name, kind, optional, type_name=column_type, allowed=members)
    if data_type in _BINARIES:
        return t.Column(name, t.KIND_BYTES, optional, type_name=column_type)
    return t.Column(name, t.KIND_STRING, optional, type_name=column_type)


def enum_members(column_type: str) -> tuple[str, ...]:
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
    """The captured tables. A table's shape is the one :meth:`define` set (from the schema
    history or after DDL), or else read from the server on first use; a table first read that
    way is listed in :attr:`first_seen`, for the task to record in the schema history."""

    def __init__(self, settings: SchemaSettings, databases: NameFilter, tables: NameFilter):
        self.settings = settings
        self.databases = databases
        self.tables = tables
        self._cache: dict[tuple[str, str], CapturedTable] = {}
        self._definitions: dict[tuple[str, str], TableDefinition | None] = {}
        self.first_seen: list[TableDefinition] = []
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
        """The table's schemas. When ``names`` (a row's columns) are not all known, the
        shape is read again from the server (a table altered while no history was kept)."""
        key = (db, table)
        cached = self._cache.get(key)
        if cached is not None and (names is None or names <= cached.column_names):
            return cached
        definition = self._definitions.get(key)
        if definition is None or (names is not None and not names <= set(definition.column_names)):
            definition = read_definition(conn, db, table)
            if key not in self._definitions:
                self.first_seen.append(definition)
            self._definitions[key] = definition
        loaded = self._cache[key] = CapturedTable(definition, self.settings)
        return loaded

    def known(self, db: str, table: str) -> TableDefinition | None:
        return self._definitions.get((db, table))

    def known_tables(self, db: str) -> builtins.list[tuple[str, str]]:
        return [k for k, d in self._definitions.items() if k[0] == db and d is not None]

    def define(self, db: str, table: str, definition: TableDefinition | None) -> None:
        """Set the table's shape from now on (``None``: dropped)."""
        self._definitions[(db, table)] = definition
        self._cache.pop((db, table), None)

    def refresh(self, conn: Any, db: str, table: str) -> TableDefinition | None:
        """Read the table's shape from the server now (``None`` when it does not exist)."""
        definition = read_definition(conn, db, table)
        found = definition if definition.columns else None
        self.define(db, table, found)
        return found

    def source(self, table: str | None, db: str, ts_us: int, values: Mapping[str, Any]) -> Struct:
        return source_struct(self.source_schema, {
            "version": common.DEBEZIUM_VERSION, "connector": self.settings.flavour,
            "name": self.settings.prefix, "ts_us": ts_us, "db": db, "table": table, **values,
        })  # fmt: skip


_COLUMNS = (
    "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION, NUMERIC_SCALE, "
    "DATETIME_PRECISION, CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME, COLUMN_DEFAULT, EXTRA, "
    "COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
    "ORDER BY ORDINAL_POSITION"
)


def read_definition(conn: Any, db: str, table: str) -> TableDefinition:
    """The table's shape on the server now (no columns when it does not exist)."""
    with conn.cursor() as cur:
        cur.execute(_COLUMNS, (db, table))
        names = [d[0].lower() for d in cur.description]
        rows = [_plain(dict(zip(names, r, strict=True))) for r in cur.fetchall()]
        cur.execute(
            "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
            "AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
            (db, table),
        )
        key = tuple(str(r[0]) for r in cur.fetchall())
        cur.execute(
            "SELECT c.CHARACTER_SET_NAME FROM information_schema.TABLES t JOIN "
            "information_schema.COLLATIONS c ON c.COLLATION_NAME = t.TABLE_COLLATION "
            "WHERE t.TABLE_SCHEMA = %s AND t.TABLE_NAME = %s",
            (db, table),
        )
        found = cur.fetchone()
    return TableDefinition(db, table, tuple(rows), key, str(found[0]) if found else None)


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """A COLUMNS row with JSON-friendly values (it is written to the schema history)."""
    return {k: v if v is None or isinstance(v, str | int) else str(v) for k, v in row.items()}


__all__ = [
    "CapturedTable",
    "SchemaSettings",
    "TableDefinition",
    "Tables",
    "column_of",
    "enum_members",
    "read_definition",
    "source_block_schema",
]
