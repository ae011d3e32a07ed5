"""The schema history of the MySQL/MariaDB connectors: what each captured table looked like at
each binlog position the connector passed a DDL statement (or took a snapshot) at.

Binlog rows carry values, not the table's definition: a row written before an ``ALTER TABLE``
must be read with the columns of that moment, also when the connector reads it after the DDL
(it was stopped, or restarts from an older offset). Debezium keeps the DDL it parsed in the
topic ``schema.history.internal.kafka.topic``; this connector writes the same records there
(Debezium's ``HistoryRecord`` JSON: ``source``, ``position``, ``ts_ms``, ``databaseName``,
``ddl``, ``tableChanges``), and reads back the ``tableChanges`` rather than parsing the DDL:
each change holds the table's whole definition as the server described it right after the
statement. A task starts with, per table, the last definition recorded at or before its
offset (:func:`as_of`).

The records are written before the events that follow them are handed out, on partition 0
with a null key, as Debezium's ``KafkaSchemaHistory`` writes them (one partition, no
retention limit, so no record ever disappears).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sparkcat.connectors.debezium.mysql.tables import TableDefinition, enum_members

CREATE = "CREATE"
ALTER = "ALTER"
DROP = "DROP"

_TEMPORAL = frozenset({"time", "datetime", "timestamp"})
_CHARACTER = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext",
                        "enum", "set"})  # fmt: skip
# java.sql.Types of Debezium's MySQL columns (their ``jdbcType``).
_JDBC_TYPES = {
    "tinyint": -6, "smallint": 5, "mediumint": 4, "int": 4, "integer": 4, "bigint": -5,
    "decimal": 3, "numeric": 2, "float": 6, "double": 8, "real": 7, "bit": -7, "date": 91,
    "time": 92, "datetime": 93, "timestamp": 2014, "year": 4, "char": 1, "varchar": 12,
    "tinytext": 12, "text": 12, "mediumtext": 12, "longtext": 12, "json": 12, "enum": 1,
    "set": 1, "binary": -2, "varbinary": -3, "tinyblob": -3, "blob": 2004,
    "mediumblob": 2004, "longblob": 2004,
}  # fmt: skip


@dataclass(frozen=True)
class TableChange:
    """One table a history record changes: ``CREATE``, ``ALTER`` or ``DROP`` (no definition)."""

    type: str
    db: str
    table: str
    definition: TableDefinition | None

    @property
    def id(self) -> str:
        """Debezium's ``TableId.toDoubleQuotedString`` of ``db.table``."""
        return f'"{self.db}"."{self.table}"'


@dataclass(frozen=True)
class HistoryRecord:
    server: str
    position: Mapping[str, Any]
    ts_ms: int
    database: str
    ddl: str
    changes: tuple[TableChange, ...]

    def to_json(self) -> str:
        return json.dumps({
            "source": {"server": self.server}, "position": dict(self.position),
            "ts_ms": self.ts_ms, "databaseName": self.database, "ddl": self.ddl,
            "tableChanges": [change_document(c) for c in self.changes],
        }, separators=(",", ":"))  # fmt: skip

    @classmethod
    def from_json(cls, text: str | bytes) -> HistoryRecord | None:
        """A record, or ``None`` for one this connector cannot use (written by Debezium
        itself without ``tableChanges``, or not JSON)."""
        try:
            doc = json.loads(text)
            changes = tuple(_change_of(c) for c in doc.get("tableChanges") or ())
            return cls(str((doc.get("source") or {}).get("server")), doc.get("position") or {},
                       int(doc.get("ts_ms") or 0), str(doc.get("databaseName") or ""),
                       str(doc.get("ddl") or ""), changes)  # fmt: skip
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


# ------------------------------------------------------------------ tableChanges documents
def change_document(change: TableChange) -> dict[str, Any]:
    """``JsonTableChangeSerializer``'s document of one change."""
    doc: dict[str, Any] = {"type": change.type, "id": change.id}
    if change.definition is not None:
        doc["table"] = table_document(change.definition)
        doc["comment"] = None
    return doc


def table_document(definition: TableDefinition) -> dict[str, Any]:
    return {
        "defaultCharsetName": definition.charset,
        "primaryKeyColumnNames": list(definition.primary_key),
        "columns": [column_document(r, i + 1) for i, r in enumerate(definition.columns)],
        "attributes": [],
    }


def column_document(row: Mapping[str, Any], position: int) -> dict[str, Any]:
    """Debezium's column fields from an ``information_schema.COLUMNS`` row. ``typeExpression``
    keeps the server's ``COLUMN_TYPE`` verbatim, which :func:`column_row` reads back."""
    data_type = str(row["data_type"]).lower()
    column_type = str(row["column_type"])
    unsigned = "unsigned" in column_type.lower()
    if data_type in _TEMPORAL:
        length = row.get("datetime_precision")
    elif data_type in _CHARACTER:
        length = row.get("character_maximum_length")
    else:
        length = row.get("numeric_precision")
    extra = str(row.get("extra") or "").lower()
    doc: dict[str, Any] = {
        "name": str(row["column_name"]), "jdbcType": _JDBC_TYPES.get(data_type, 1111),
        "typeName": data_type.upper() + (" UNSIGNED" if unsigned else ""),
        "typeExpression": column_type, "charsetName": row.get("character_set_name"),
    }  # fmt: skip
    if length is not None:
        doc["length"] = int(length)
    if row.get("numeric_scale") is not None:
        doc["scale"] = int(row["numeric_scale"])
    doc.update({
        "position": position, "optional": str(row["is_nullable"]).upper() == "YES",
        "autoIncremented": "auto_increment" in extra, "generated": "auto_increment" in extra,
        "comment": row.get("column_comment") or None,
        "hasDefaultValue": row.get("column_default") is not None,
    })  # fmt: skip
    if row.get("column_default") is not None:
        doc["defaultValueExpression"] = str(row["column_default"])
    if data_type in ("enum", "set"):
        doc["enumValues"] = list(enum_members(column_type))
    return doc


def column_row(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The ``information_schema.COLUMNS`` row a :func:`column_document` was made from."""
    type_name = str(doc["typeName"]).lower()
    data_type = type_name.removesuffix(" unsigned")
    length = doc.get("length")
    temporal, character = data_type in _TEMPORAL, data_type in _CHARACTER
    column_type = str(doc.get("typeExpression") or type_name)
    if data_type in ("enum", "set") and "(" not in column_type:
        # Debezium's own records say just "ENUM": the members are in enumValues.
        members = ",".join("'" + str(m).replace("'", "''") + "'" for m in doc["enumValues"])
        column_type = f"{data_type}({members})"
    return {
        "column_name": doc["name"], "data_type": data_type, "column_type": column_type,
        "is_nullable": "YES" if doc.get("optional", True) else "NO",
        "numeric_precision": None if temporal or character else length,
        "numeric_scale": doc.get("scale"),
        "datetime_precision": length if temporal else None,
        "character_maximum_length": length if character else None,
        "character_set_name": doc.get("charsetName"),
        "column_default": doc.get("defaultValueExpression"),
        "extra": "auto_increment" if doc.get("autoIncremented") else "",
        "column_comment": doc.get("comment") or "",
    }  # fmt: skip


def _change_of(doc: Mapping[str, Any]) -> TableChange:
    db, table = _split_id(str(doc["id"]))
    table_doc = doc.get("table")
    definition = None
    if table_doc is not None:
        definition = TableDefinition(
            db, table, tuple(column_row(c) for c in table_doc["columns"]),
            tuple(table_doc.get("primaryKeyColumnNames") or ()),
            table_doc.get("defaultCharsetName"),
        )  # fmt: skip
    return TableChange(str(doc["type"]), db, table, definition)


def _split_id(text: str) -> tuple[str, str]:
    parts = re.findall(r'"((?:[^"]|"")*)"', text)
    if len(parts) >= 2:
        return parts[-2], parts[-1]
    db, _, table = text.rpartition(".")
    return db, table


# ------------------------------------------------------------------------------- recovery
def binlog_order(position: Mapping[str, Any]) -> tuple[int, str, int]:
    """Sort key of a binlog offset: the file's sequence number, its name, the position."""
    file = str(position.get("file") or "")
    _, _, suffix = file.rpartition(".")
    return (int(suffix) if suffix.isdigit() else -1, file, int(position.get("pos") or 0))


def as_of(
    records: Iterable[HistoryRecord], server: str, offset: Mapping[str, Any]
) -> dict[tuple[str, str], TableDefinition | None]:
    """Each table's definition (``None``: dropped) as of ``offset``: the last recorded at or
    before it, in the order the records were written."""
    limit = binlog_order(offset)
    found: dict[tuple[str, str], TableDefinition | None] = {}
    for record in records:
        if record.server == server and binlog_order(record.position) <= limit:
            for change in record.changes:
                found[(change.db, change.table)] = change.definition
    return found


def recorded_at(
    records: Iterable[HistoryRecord], server: str, position: Mapping[str, Any]
) -> dict[tuple[str, str], TableDefinition | None]:
    """The definitions recorded exactly at ``position`` (a DDL read again after a restart:
    the first reading, taken when the DDL was new, is the right one)."""
    at = binlog_order(position)
    found: dict[tuple[str, str], TableDefinition | None] = {}
    for record in records:
        if record.server == server and binlog_order(record.position) == at and record.ddl:
            for change in record.changes:
                found.setdefault((change.db, change.table), change.definition)
    return found


# -------------------------------------------------------------------------------- storage
class SchemaHistory(Protocol):
    """Where history records are kept."""

    def records(self) -> Sequence[HistoryRecord]:
        """Every record, in the order written."""
        ...

    def record(self, record: HistoryRecord) -> None:
        """Store ``record`` durably before returning."""
        ...


class MemorySchemaHistory:
    """A history kept in this object (tests; and no topic configured: nothing survives the
    task, so a restart reads the tables' current definitions)."""

    def __init__(self) -> None:
        self._records: list[HistoryRecord] = []

    def records(self) -> Sequence[HistoryRecord]:
        return list(self._records)

    def record(self, record: HistoryRecord) -> None:
        self._records.append(record)


__all__ = [
    "ALTER",
    "CREATE",
    "DROP",
    "HistoryRecord",
    "MemorySchemaHistory",
    "SchemaHistory",
    "TableChange",
    "as_of",
    "binlog_order",
    "change_document",
    "column_document",
    "column_row",
    "recorded_at",
]
