"""What the connector asks of PostgreSQL over ordinary connections: the captured tables and
their columns, the publication, the replication slot's state, and the server's settings."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg2
import psycopg2.extensions
import psycopg2.extras

from sparkcat.api.errors import ConnectError
from sparkcat.connectors.debezium.filters import NameFilter
from sparkcat.connectors.debezium.postgres import values
from sparkcat.connectors.debezium.postgres.config import (
    AUTOCREATE_DISABLED,
    AUTOCREATE_FILTERED,
    ConnectionSettings,
)
from sparkcat.connectors.debezium.postgres.pgoutput import parse_lsn
from sparkcat.connectors.debezium.types import Column

_RAW_TEXT = psycopg2.extensions.new_type(values.KNOWN_OIDS, "SPARKCAT_TEXT", lambda v, _c: v)
# Arrays of the known types would otherwise come back as lists; pgoutput sends their text.
_RAW_ARRAYS = psycopg2.extensions.new_type(
    (1000, 1001, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1115, 1182, 1185, 1231,
     199, 2951, 3807),
    "SPARKCAT_TEXT_ARRAY",
    lambda v, _c: v,
)  # fmt: skip


def connect(settings: ConnectionSettings, replication: bool = False, raw_text: bool = False) -> Any:
    """A libpq connection in the session settings the value parsers expect; with
    ``raw_text`` column values come back in PostgreSQL's text form, as pgoutput sends them."""
    kwargs: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "dbname": settings.dbname,
        "sslmode": settings.sslmode,
        "options": values.SESSION_OPTIONS,
        "connect_timeout": 30,
        "application_name": "sparkcat-debezium",
    }
    if settings.user:
        kwargs["user"] = settings.user
    if settings.password:
        kwargs["password"] = settings.password
    if replication:
        kwargs["connection_factory"] = psycopg2.extras.LogicalReplicationConnection
    conn = psycopg2.connect(**kwargs)
    if not replication:
        conn.autocommit = True
    if raw_text:
        psycopg2.extensions.register_type(_RAW_TEXT, conn)
        psycopg2.extensions.register_type(_RAW_ARRAYS, conn)
    return conn


def query(conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with conn.cursor() as cursor:
        cursor.execute(sql, tuple(params) if params else None)
        return list(cursor.fetchall()) if cursor.description else []


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def qualified(schema: str, table: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(table)}"


# ------------------------------------------------------------------------------ tables
@dataclass(frozen=True)
class TableFilters:
    schemas: NameFilter
    tables: NameFilter

    def captured(self, schema: str, table: str) -> bool:
        return self.schemas.matches(schema) and self.tables.matches(f"{schema}.{table}")


def captured_tables(conn: Any, filters: TableFilters) -> list[tuple[str, str]]:
    """``(schema, table)`` of every ordinary or partitioned table the filters capture."""
    rows = query(
        conn,
        "SELECT n.nspname, c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%' "
        "ORDER BY 1, 2",
    )
    return [(s, t) for s, t in rows if filters.captured(s, t)]


@dataclass(frozen=True)
class TableShape:
    """A table's columns (sent ones, in order), and its primary key in key order."""

    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]


def table_shape(conn: Any, schema: str, table: str, money_digits: int) -> TableShape:
    rows = query(
        conn,
        "SELECT a.attname, CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, "
        "CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END, NOT a.attnotnull, "
        "array_position(i.indkey::int2[], a.attnum) "
        "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid "
        "LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
        "AND a.attgenerated = '' ORDER BY a.attnum",
        (schema, table),
    )
    columns = tuple(
        values.column(name, int(oid), int(mod), bool(nullable), money_digits)
        for name, oid, mod, nullable, _ in rows
    )
    # int2vector casts to a zero-based array: position 0 is the key's first column.
    keyed = sorted((pos, name) for name, *_, pos in rows if pos is not None)
    key = tuple(name for _, name in keyed)
    return TableShape(columns, key)


# ------------------------------------------------------------------------- publication
def ensure_publication(conn: Any, name: str, mode: str, tables: Sequence[tuple[str, str]]) -> None:
    """Create (or, ``filtered``, align) the publication as ``publication.autocreate.mode``
    says; with ``disabled`` it must exist."""
    exists = query(conn, "SELECT puballtables FROM pg_publication WHERE pubname = %s", (name,))
    if mode == AUTOCREATE_DISABLED:
        if not exists:
            raise ConnectError(
                f"Publication '{name}' does not exist and publication.autocreate.mode is "
                "disabled: create it (CREATE PUBLICATION ...) or change the mode"
            )
        return
    if mode != AUTOCREATE_FILTERED:
        if not exists:
            query(conn, f"CREATE PUBLICATION {quote_ident(name)} FOR ALL TABLES")
        return
    listed = ", ".join(qualified(s, t) for s, t in tables)
    if not exists:
        target = f"FOR TABLE {listed}" if tables else ""
        query(conn, f"CREATE PUBLICATION {quote_ident(name)} {target}")
        return
    current = query(
        conn, "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s",
        (name,),
    )  # fmt: skip
    if sorted(map(tuple, current)) != sorted(tables) and tables:
        query(conn, f"ALTER PUBLICATION {quote_ident(name)} SET TABLE {listed}")


# -------------------------------------------------------------------------------- slot
@dataclass(frozen=True)
class SlotState:
    plugin: str
    active_pid: int | None
    confirmed_flush_lsn: int | None


def slot_state(conn: Any, slot: str, dbname: str) -> SlotState | None:
    rows = query(
        conn,
        "SELECT plugin, active_pid, confirmed_flush_lsn::text, database "
        "FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    )
    if not rows:
        return None
    plugin, pid, flushed, database = rows[0]
    if database != dbname:
        raise ValueError(f"Replication slot '{slot}' belongs to database '{database}'")
    return SlotState(plugin, pid, parse_lsn(flushed) if flushed else None)


def wait_until_inactive(conn: Any, slot: str, dbname: str, timeout_s: float) -> SlotState | None:
    """The slot's state once no one consumes it, or when ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = slot_state(conn, slot, dbname)
        if state is None or state.active_pid is None or time.monotonic() >= deadline:
            return state
        time.sleep(0.05)


def drop_slot(conn: Any, slot: str) -> None:
    query(
        conn,
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    )


# ---------------------------------------------------------------------------- checks
def server_problems(conn: Any, user: str | None) -> list[str]:
    """What keeps the server from streaming changes to ``user`` (empty: nothing)."""
    problems = []
    (level,) = query(conn, "SHOW wal_level")[0]
    if level != "logical":
        problems.append(
            f"Postgres server wal_level property must be 'logical' but is: '{level}' "
            "(set wal_level = logical in postgresql.conf and restart the server)"
        )
    role = query(
        conn,
        "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user",
    )
    if not role or not role[0][0]:
        problems.append(
            f"User '{user or 'current user'}' has no REPLICATION privilege "
            "(ALTER ROLE ... WITH REPLICATION)"
        )
    return problems


__all__ = [
    "SlotState",
    "TableFilters",
    "TableShape",
    "captured_tables",
    "connect",
    "drop_slot",
    "ensure_publication",
    "qualified",
    "query",
    "server_problems",
    "slot_state",
    "table_shape",
    "wait_until_inactive",
]
