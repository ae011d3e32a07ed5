"""Databases as the JDBC connectors see them: URL translation, one SQLAlchemy engine per URL
and process, identifier quoting, table ids and each database's SQL (upsert, DDL, clock).

Confluent's connector picks a ``DatabaseDialect`` from the JDBC URL; this module does the same
for PostgreSQL (psycopg 3), MariaDB/MySQL (PyMySQL) and SQLite (sqlite3).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from sparkcat.api.errors import ConfigError

_CONNECT_TIMEOUT_S = 10


def to_sqlalchemy_url(url: str, user: str | None = None, password: str | None = None) -> URL:
    """The SQLAlchemy URL of a JDBC URL (``jdbc:postgresql://h:p/db?...``,
    ``jdbc:mysql://``/``jdbc:mariadb://``, ``jdbc:sqlite:path``) or of a SQLAlchemy URL.

    ``user``/``password`` (``connection.user``/``connection.password``) win over the URL's own
    (including JDBC's ``?user=&password=`` parameters). The drivers are psycopg 3 and PyMySQL.
    """
    text = url.strip()
    if text.startswith("jdbc:sqlite:"):
        path = text[len("jdbc:sqlite:") :]
        if path in ("", ":memory:"):
            return URL.create("sqlite")
        if path.startswith("file:"):
            path = path[len("file:") :]
        return URL.create("sqlite", database=path.split("?", 1)[0])
    if text.startswith("jdbc:"):
        parts = urlsplit(text[len("jdbc:") :])
        drivers = {
            "postgresql": "postgresql+psycopg",
            "mysql": "mysql+pymysql",
            "mariadb": "mysql+pymysql",
        }
        if parts.scheme not in drivers:
            raise ConfigError(
                f"Unsupported JDBC URL {text!r}: expected jdbc:postgresql://, "
                "jdbc:mysql://, jdbc:mariadb:// or jdbc:sqlite:"
            )
        params = dict(parse_qsl(parts.query))
        host = parts.hostname
        db = unquote(parts.path.lstrip("/")) or None
        result = URL.create(
            drivers[parts.scheme],
            username=unquote(parts.username) if parts.username else params.get("user"),
            password=unquote(parts.password) if parts.password else params.get("password"),
            host=host,
            port=parts.port,
            database=db,
        )
    else:
        try:
            result = make_url(text)
        except Exception as exc:
            raise ConfigError(f"Invalid connection.url {text!r}: {exc}") from exc
        upgrades = {
            "postgresql": "postgresql+psycopg",
            "postgres": "postgresql+psycopg",
            "mysql": "mysql+pymysql",
            "mariadb": "mysql+pymysql",
        }
        if result.drivername in upgrades:
            result = result.set(drivername=upgrades[result.drivername])
    if user:
        result = result.set(username=user)
    if password:
        result = result.set(password=password)
    return result


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(url: URL) -> Engine:
    """This process's engine (connection pool) for ``url``: a cache, so each lease of a task
    does not reconnect; nothing depends on it surviving."""
    key = url.render_as_string(hide_password=False)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = sa.create_engine(url, pool_pre_ping=True, connect_args=_connect_args(url))
            _ENGINES[key] = engine
        return engine


def dispose_engines() -> None:
    """Close every cached pool (tests, process shutdown)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.dispose()
        _ENGINES.clear()


def _connect_args(url: URL) -> dict[str, Any]:
    # Sessions run in UTC so naive timestamps mean the same on both sides of the wire; the
    # connectors convert to db.timezone themselves.
    backend = url.get_backend_name()
    if backend == "postgresql":
        return {"connect_timeout": _CONNECT_TIMEOUT_S, "options": "-c timezone=UTC"}
    if backend == "mysql":
        return {"connect_timeout": _CONNECT_TIMEOUT_S, "init_command": "SET time_zone='+00:00'"}
    return {}


@dataclass(frozen=True, slots=True)
class TableId:
    """A table: catalog (database), schema and name; parts a database lacks are ``None``."""

    catalog: str | None
    schema: str | None
    name: str

    @property
    def fqn(self) -> str:
        """Confluent's unquoted fully qualified name, the source partition's ``table``."""
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p)


class Dialect:
    """SQL of one database family; :func:`dialect_for` picks it."""

    name = "GenericDatabaseDialect"
    quote_char = '"'
    paramstyle = "%s"
    has_catalog = False
    has_schema = False

    def __init__(self, quote: bool = True) -> None:
        self.quote_identifiers = quote

    def quote(self, identifier: str) -> str:
        if not self.quote_identifiers:
            return identifier
        q = self.quote_char
        return f"{q}{identifier.replace(q, q + q)}{q}"

    def table(self, table: TableId) -> str:
        """The table in SQL: ``schema.table`` (the catalog is the connection's database)."""
        if table.schema and self.has_schema:
            return f"{self.quote(table.schema)}.{self.quote(table.name)}"
        return self.quote(table.name)

    def parse_table(self, text: str, catalog: str | None, schema: str | None) -> TableId:
        """A table id from ``name``, ``schema.name`` or ``catalog.schema.name``."""
        parts = text.split(".")
        name = parts[-1]
        if self.has_schema:
            if len(parts) >= 2:
                schema = parts[-2]
            if len(parts) >= 3:
                catalog = parts[-3]
            return TableId(catalog, schema, name)
        if self.has_catalog and len(parts) >= 2:
            catalog = parts[-2]
        return TableId(catalog if self.has_catalog else None, None, name)

    def current_catalog(self, conn: sa.Connection) -> str | None:
        return None

    def default_schema(self, conn: sa.Connection) -> str | None:
        return None

    def now(self, conn: sa.Connection) -> datetime.datetime:
        """The database's current time, as an aware UTC datetime."""
        return datetime.datetime.now(datetime.UTC)

    def insert(self, table: str, columns: Sequence[str]) -> str:
        cols = ", ".join(map(self.quote, columns))
        marks = ", ".join([self.paramstyle] * len(columns))
        return f"INSERT INTO {table} ({cols}) VALUES ({marks})"

    def upsert(self, table: str, keys: Sequence[str], columns: Sequence[str]) -> str:
        raise NotImplementedError

    def update(self, table: str, keys: Sequence[str], columns: Sequence[str]) -> str:
        """Parameters: the non-key columns, then the keys."""
        sets = ", ".join(f"{self.quote(c)} = {self.paramstyle}" for c in columns)
        return f"UPDATE {table} SET {sets} WHERE {self._where(keys)}"

    def delete(self, table: str, keys: Sequence[str]) -> str:
        return f"DELETE FROM {table} WHERE {self._where(keys)}"

    def _where(self, keys: Sequence[str]) -> str:
        return " AND ".join(f"{self.quote(k)} = {self.paramstyle}" for k in keys)

    def create_table(
        self, table: str, columns: Sequence[tuple[str, str, bool]], keys: Sequence[str]
    ) -> str:
        """``columns`` are ``(name, SQL type, nullable)``."""
        defs = [
            f"{self.quote(n)} {t}{'' if nullable else ' NOT NULL'}" for n, t, nullable in columns
        ]
        if keys:
            defs.append(f"PRIMARY KEY({', '.join(map(self.quote, keys))})")
        return f"CREATE TABLE {table} (\n" + ",\n".join(defs) + ")"

    def add_column(self, table: str, name: str, sql_type: str) -> str:
        return f"ALTER TABLE {table} ADD {self.quote(name)} {sql_type}"

    def limit(self, sql: str, rows: int) -> str:
        return f"{sql} LIMIT {int(rows)}"


class PostgresDialect(Dialect):
    name = "PostgreSqlDatabaseDialect"
    has_catalog = True
    has_schema = True

    def current_catalog(self, conn: sa.Connection) -> str | None:
        return str(conn.exec_driver_sql("SELECT current_database()").scalar())

    def default_schema(self, conn: sa.Connection) -> str | None:
        return str(conn.exec_driver_sql("SELECT current_schema()").scalar())

    def now(self, conn: sa.Connection) -> datetime.datetime:
        value = conn.exec_driver_sql("SELECT CURRENT_TIMESTAMP").scalar()
        assert isinstance(value, datetime.datetime)
        return value.astimezone(datetime.UTC)

    def upsert(self, table: str, keys: Sequence[str], columns: Sequence[str]) -> str:
        insert = self.insert(table, [*keys, *columns])
        target = ", ".join(map(self.quote, keys))
        if not columns:
            return f"{insert} ON CONFLICT ({target}) DO NOTHING"
        sets = ", ".join(f"{self.quote(c)}=EXCLUDED.{self.quote(c)}" for c in columns)
        return f"{insert} ON CONFLICT ({target}) DO UPDATE SET {sets}"


class MySqlDialect(Dialect):
    name = "MySqlDatabaseDialect"
    quote_char = "`"
    has_catalog = True

    def table(self, table: TableId) -> str:
        if table.catalog:
            return f"{self.quote(table.catalog)}.{self.quote(table.name)}"
        return self.quote(table.name)

    def current_catalog(self, conn: sa.Connection) -> str | None:
        return str(conn.exec_driver_sql("SELECT DATABASE()").scalar())

    def now(self, conn: sa.Connection) -> datetime.datetime:
        value = conn.exec_driver_sql("SELECT UTC_TIMESTAMP(6)").scalar()
        assert isinstance(value, datetime.datetime)
        return value.replace(tzinfo=datetime.UTC)

    def upsert(self, table: str, keys: Sequence[str], columns: Sequence[str]) -> str:
        insert = self.insert(table, [*keys, *columns])
        updated = columns or keys  # a no-op update keeps the row when every column is a key
        sets = ", ".join(f"{self.quote(c)}=VALUES({self.quote(c)})" for c in updated)
        return f"{insert} ON DUPLICATE KEY UPDATE {sets}"


class SqliteDialect(Dialect):
    name = "SqliteDatabaseDialect"
    paramstyle = "?"

    def upsert(self, table: str, keys: Sequence[str], columns: Sequence[str]) -> str:
        return "INSERT OR REPLACE" + self.insert(table, [*keys, *columns])[len("INSERT") :]

    def add_column(self, table: str, name: str, sql_type: str) -> str:
        return f"ALTER TABLE {table} ADD COLUMN {self.quote(name)} {sql_type}"


_BY_NAME: dict[str, type[Dialect]] = {
    d.name: d for d in (PostgresDialect, MySqlDialect, SqliteDialect)
}
_BY_BACKEND: dict[str, type[Dialect]] = {
    "postgresql": PostgresDialect,
    "mysql": MySqlDialect,
    "sqlite": SqliteDialect,
}


def dialect_for(url: URL, dialect_name: str = "", quote: str = "always") -> Dialect:
    """The dialect ``dialect.name`` names, else the one of ``url``'s database."""
    cls = _BY_NAME.get(dialect_name) if dialect_name else _BY_BACKEND.get(url.get_backend_name())
    if cls is None:
        raise ConfigError(f"No dialect for database {url.get_backend_name()!r}")
    return cls(quote.lower() != "never")


__all__ = [
    "Dialect",
    "MySqlDialect",
    "PostgresDialect",
    "SqliteDialect",
    "TableId",
    "dialect_for",
    "dispose_engines",
    "engine_for",
    "to_sqlalchemy_url",
]
