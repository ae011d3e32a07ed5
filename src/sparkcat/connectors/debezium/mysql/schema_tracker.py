"""Keeps the task's table definitions in step with the binlog position it reads, through the
schema history (:mod:`~sparkcat.connectors.debezium.mysql.history`).

- At start, each table gets the definition recorded at or before the task's offset.
- A snapshot records every captured table as of the snapshot's position.
- A DDL statement seen while streaming re-reads the tables it names from the server (or, when
  it was recorded before — the same statement read again after a restart — takes that first
  reading), records them, and yields Debezium's schema change event.
- A table met for the first time with nothing recorded is read from the server and recorded.

What this cannot know: with the connector stopped while *several* DDL statements change one
table, the server only describes the table after the last one; the rows between the first and
the last statement are read with the last definition (their column names still come from the
binlog, so a column the last definition lacks is left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import now_us
from sparkcat.connectors.debezium.mysql.binlog_reader import SchemaChange
from sparkcat.connectors.debezium.mysql.history import (
    ALTER,
    CREATE,
    DROP,
    HistoryRecord,
    SchemaHistory,
    TableChange,
    as_of,
    recorded_at,
)
from sparkcat.connectors.debezium.mysql.schema_changes import ddl_tables, schema_change_record
from sparkcat.connectors.debezium.mysql.tables import TableDefinition, Tables


class SchemaTracker:
    def __init__(
        self, history: SchemaHistory, tables: Tables, server: str, include_changes: bool
    ) -> None:
        self.history = history
        self.tables = tables
        self.server = server
        self.include_changes = include_changes

    def recover(self, offset: Mapping[str, Any]) -> None:
        """Take each table's definition as of ``offset`` from the history."""
        for (db, table), definition in as_of(self.history.records(), self.server, offset).items():
            self.tables.define(db, table, definition)
        self.tables.first_seen.clear()

    def snapshot_taken(self, position: Mapping[str, Any], captured: Sequence[Any]) -> None:
        self.tables.first_seen.clear()
        changes = tuple(TableChange(CREATE, t.db, t.name, t.definition) for t in captured)
        if changes:
            self._record(position, "", "", changes)

    def record_first_seen(self, position: Mapping[str, Any]) -> None:
        """Record the tables read for the first time (no history had them) at ``position``."""
        seen, self.tables.first_seen[:] = list(self.tables.first_seen), []
        if seen:
            changes = tuple(TableChange(CREATE, d.db, d.name, d) for d in seen)
            self._record(position, "", "", changes)

    def ddl(self, conn: Any, change: SchemaChange, partition: Mapping[str, Any],
            source: Any) -> list[SourceRecord]:  # fmt: skip
        """Apply ``change`` to the captured tables it names; its schema change event (none
        when it names no captured table, or ``include.schema.changes`` is off)."""
        position = change.offset.to_dict()
        named = ddl_tables(change.ddl, change.database)
        if named is None:
            changes = self._compare_all(conn, change.database)
        else:
            earlier = recorded_at(self.history.records(), self.server, position)
            changes = []
            for kind, db, name in named:
                if not self.tables.captured(db, name):
                    continue
                if (db, name) in earlier:
                    definition = earlier[(db, name)]
                    self.tables.define(db, name, definition)
                else:
                    definition = self.tables.refresh(conn, db, name)
                changes.append(TableChange(DROP if definition is None else kind, db, name,
                                           definition))  # fmt: skip
        if not changes:
            return []
        self._record(position, change.database, change.ddl, tuple(changes))
        if not self.include_changes:
            return []
        return [schema_change_record(self.server, self.tables.settings.flavour,
                                     (partition, position), source(changes), change.database,
                                     change.ddl, changes)]  # fmt: skip

    def _compare_all(self, conn: Any, db: str) -> list[TableChange]:
        """A table statement whose names were not found: every known table of ``db`` whose
        definition on the server differs."""
        changes = []
        for _, name in self.tables.known_tables(db):
            before = self.tables.known(db, name)
            after = self.tables.refresh(conn, db, name)
            if after != before:
                changes.append(TableChange(ALTER if after else DROP, db, name, after))
        return changes

    def _record(
        self, position: Mapping[str, Any], db: str, ddl: str, changes: tuple[TableChange, ...]
    ) -> None:
        self.history.record(HistoryRecord(self.server, dict(position), now_us() // 1000, db, ddl,
                                          changes))  # fmt: skip


def table_names(changes: Sequence[TableChange]) -> str | None:
    """``source.table`` of a schema change event: the tables it names, comma-separated."""
    names = sorted({c.table for c in changes})
    return ",".join(names) if names else None


__all__ = ["SchemaTracker", "TableDefinition", "table_names"]
