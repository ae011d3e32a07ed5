"""DDL in the binlog: which tables a statement changes, and the schema change events Debezium
sends to the topic named ``<topic.prefix>`` (``include.schema.changes=true``).

Key ``io.debezium.connector.<mysql|mariadb>.SchemaChangeKey`` ``{databaseName}``; value
``io.debezium.connector.<mysql|mariadb>.SchemaChangeValue`` with ``source``, ``ts_ms``,
``databaseName``, ``schemaName``, ``ddl`` and ``tableChanges`` (``io.debezium.connector.schema.
Change``/``Table``/``Column``, the fields of Debezium's ``ConnectTableChangeSerializer``).

Only the table names are taken from the statement (:func:`ddl_tables`); what a table looks
like afterwards is read from the server, not parsed out of the DDL.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.mysql.history import (
    ALTER,
    CREATE,
    DROP,
    TableChange,
    change_document,
)

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.DOTALL)
_CREATE = re.compile(rf"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\s+"
                     rf"(?:IF\s+NOT\s+EXISTS\s+)?({_QUALIFIED})", re.I)  # fmt: skip
_ALTER = re.compile(rf"^ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?"
                    rf"({_QUALIFIED})", re.I)  # fmt: skip
_ALTER_RENAME = re.compile(rf"\bRENAME\s+(?:TO|AS)\s+({_QUALIFIED})", re.I)
_DROP = re.compile(r"^DROP\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?(.+)$", re.I | re.S)
_RENAME = re.compile(r"^RENAME\s+TABLES?\s+(.+)$", re.I | re.S)
_INDEX = re.compile(rf"^(?:CREATE|DROP)\s+(?:ONLINE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?"
                    rf"INDEX\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?{_NAME}\s+ON\s+({_QUALIFIED})",
                    re.I)  # fmt: skip
_TABLE_DDL = re.compile(r"^(CREATE|ALTER|DROP|RENAME)\b.*\bTABLES?\b", re.I | re.S)


def ddl_tables(ddl: str, database: str) -> list[tuple[str, str, str]] | None:
    """``(type, db, table)`` of each table ``ddl`` creates, alters or drops (a rename drops
    one name and creates the other); ``[]`` for a statement about no table; ``None`` for a
    table statement whose names this reading does not find (the caller compares every known
    table of ``database`` with the server then)."""
    text = _COMMENTS.sub(" ", ddl).strip()
    found = _CREATE.match(text)
    if found:
        return [(CREATE, *_table(found.group(1), database))]
    found = _ALTER.match(text)
    if found:
        old = _table(found.group(1), database)
        renamed = _ALTER_RENAME.search(text, found.end())
        if renamed:
            return [(DROP, *old), (CREATE, *_table(renamed.group(1), database))]
        return [(ALTER, *old)]
    found = _INDEX.match(text)
    if found:
        return [(ALTER, *_table(found.group(1), database))]
    found = _DROP.match(text)
    if found:
        names = re.findall(_QUALIFIED, found.group(1).split(" RESTRICT")[0].split(" CASCADE")[0])
        return [(DROP, *_table(n, database)) for n in names]
    found = _RENAME.match(text)
    if found:
        out: list[tuple[str, str, str]] = []
        for pair in found.group(1).split(","):
            names = re.split(r"\s+TO\s+", pair.strip(), maxsplit=1, flags=re.I)
            if len(names) != 2:
                return None
            out += [(DROP, *_table(names[0], database)), (CREATE, *_table(names[1], database))]
        return out
    return None if _TABLE_DDL.match(text) else []


def _table(qualified: str, database: str) -> tuple[str, str]:
    parts = [_unquote(p) for p in re.findall(_NAME, qualified)]
    return (parts[0], parts[1]) if len(parts) > 1 else (database, parts[0])


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


# ------------------------------------------------------------------------ Connect schemas
def _optional(builder: SchemaBuilder) -> Schema:
    return builder.optional().build()


_STRINGS = SchemaBuilder.array(SchemaBuilder.string().build())
COLUMN_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.schema.Column").version(1)
    .field("name", SchemaBuilder.string().build())
    .field("jdbcType", SchemaBuilder.int32().build())
    .field("nativeType", _optional(SchemaBuilder.int32()))
    .field("typeName", SchemaBuilder.string().build())
    .field("typeExpression", _optional(SchemaBuilder.string()))
    .field("charsetName", _optional(SchemaBuilder.string()))
    .field("length", _optional(SchemaBuilder.int32()))
    .field("scale", _optional(SchemaBuilder.int32()))
    .field("position", SchemaBuilder.int32().build())
    .field("optional", _optional(SchemaBuilder.boolean()))
    .field("autoIncremented", _optional(SchemaBuilder.boolean()))
    .field("generated", _optional(SchemaBuilder.boolean()))
    .field("comment", _optional(SchemaBuilder.string()))
    .field("defaultValueExpression", _optional(SchemaBuilder.string()))
    .field("enumValues", _optional(SchemaBuilder.array(SchemaBuilder.string().build())))
    .build()
)  # fmt: skip
TABLE_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.schema.Table").version(1)
    .field("defaultCharsetName", _optional(SchemaBuilder.string()))
    .field("primaryKeyColumnNames", _optional(SchemaBuilder.array(SchemaBuilder.string().build())))
    .field("columns", SchemaBuilder.array(COLUMN_SCHEMA).build())
    .field("comment", _optional(SchemaBuilder.string()))
    .optional().build()
)  # fmt: skip
CHANGE_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.schema.Change").version(1)
    .field("type", SchemaBuilder.string().build())
    .field("id", SchemaBuilder.string().build())
    .field("table", TABLE_SCHEMA)
    .build()
)  # fmt: skip


@functools.cache
def key_schema(flavour: str) -> Schema:
    return (SchemaBuilder.struct().name(f"io.debezium.connector.{flavour}.SchemaChangeKey")
            .version(1).field("databaseName", SchemaBuilder.string().build()).build())  # fmt: skip


@functools.cache
def value_schema(flavour: str, source: Schema) -> Schema:
    return (
        SchemaBuilder.struct().name(f"io.debezium.connector.{flavour}.SchemaChangeValue")
        .version(1)
        .field("source", source)
        .field("ts_ms", SchemaBuilder.int64().build())
        .field("databaseName", _optional(SchemaBuilder.string()))
        .field("schemaName", _optional(SchemaBuilder.string()))
        .field("ddl", _optional(SchemaBuilder.string()))
        .field("tableChanges", SchemaBuilder.array(CHANGE_SCHEMA).build())
        .build()
    )  # fmt: skip


def _struct(schema: Schema, doc: Mapping[str, Any]) -> Struct:
    struct = Struct(schema)
    for field in schema.fields:
        struct.put(field.name, doc.get(field.name))
    return struct


def change_struct(change: TableChange) -> Struct:
    doc = change_document(change)
    struct = Struct(CHANGE_SCHEMA).put("type", doc["type"]).put("id", doc["id"])
    table = doc.get("table")
    if table is not None:
        columns = [_struct(COLUMN_SCHEMA, c) for c in table["columns"]]
        struct.put("table", _struct(TABLE_SCHEMA, {**table, "columns": columns}))
    return struct


def schema_change_record(
    topic: str,
    flavour: str,
    position: tuple[Mapping[str, Any], Mapping[str, Any]],
    source: Struct,
    database: str,
    ddl: str,
    changes: Sequence[TableChange],
) -> SourceRecord:
    """The schema change event of ``ddl`` (``position``: the source partition and offset)."""
    keys, values = key_schema(flavour), value_schema(flavour, source.schema)
    key = Struct(keys).put("databaseName", database)
    value = (Struct(values).put("source", source).put("ts_ms", source.get("ts_ms"))
             .put("databaseName", database).put("schemaName", None).put("ddl", ddl)
             .put("tableChanges", [change_struct(c) for c in changes]))  # fmt: skip
    partition, offset = position
    return SourceRecord(partition, offset, topic, 0, keys, key, values, value)


__all__ = ["change_struct", "ddl_tables", "key_schema", "schema_change_record", "value_schema"]
