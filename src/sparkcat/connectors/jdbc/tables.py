"""Database metadata the source connector needs: which tables to copy, and whether the
database can be reached at all (``validate``)."""

from __future__ import annotations

import re

import sqlalchemy as sa

from sparkcat.api.config import AbstractConfig
from sparkcat.connectors.jdbc.config import (
    CATALOG_PATTERN,
    CONNECTION_PASSWORD,
    CONNECTION_URL,
    CONNECTION_USER,
    DIALECT_NAME,
    QUOTE_SQL_IDENTIFIERS,
    SCHEMA_PATTERN,
    TABLE_BLACKLIST,
    TABLE_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TABLE_TYPES,
    TABLE_WHITELIST,
)
from sparkcat.connectors.jdbc.dialect import (
    Dialect,
    TableId,
    dialect_for,
    engine_for,
    to_sqlalchemy_url,
)

_SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_toast"})


def _like(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern (``%``, ``_``) as a regular expression."""
    parts = [".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern]
    return re.compile("".join(parts))


def _url(config: AbstractConfig) -> sa.URL:
    password = config.get(CONNECTION_PASSWORD)
    return to_sqlalchemy_url(
        config.get_string(CONNECTION_URL),
        config.get(CONNECTION_USER),
        None if password is None else str(password.value),
    )


def connection_error(config: AbstractConfig) -> str:
    """Why the database cannot be reached with ``config`` (``""`` when it can)."""
    try:
        url = _url(config)
    except Exception as exc:
        return str(exc)
    engine = sa.create_engine(url, poolclass=sa.NullPool, connect_args=_probe_args(url))
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1").scalar()
    except Exception as exc:
        cause = getattr(exc, "orig", None) or exc
        return (
            f"Could not connect to {url.render_as_string(hide_password=True)}: {str(cause).strip()}"
        )
    finally:
        engine.dispose()
    return ""


def _probe_args(url: sa.URL) -> dict[str, object]:
    backend = url.get_backend_name()
    if backend in ("postgresql", "mysql"):
        return {"connect_timeout": 5}
    return {}


def find_tables(config: AbstractConfig) -> list[str]:
    """The fully qualified names of the tables to copy, sorted."""
    url = _url(config)
    dialect = dialect_for(
        url, config.get_string(DIALECT_NAME), config.get_string(QUOTE_SQL_IDENTIFIERS)
    )
    types = {t.strip().upper() for t in config.get_list(TABLE_TYPES)}
    with engine_for(url).connect() as conn:
        found = _list(conn, dialect, config.get(CATALOG_PATTERN), config.get(SCHEMA_PATTERN), types)
    return sorted(t.fqn for t in found if _selected(t, config))


def _list(
    conn: sa.Connection,
    dialect: Dialect,
    catalog_pattern: str | None,
    schema_pattern: str | None,
    types: set[str],
) -> list[TableId]:
    inspector = sa.inspect(conn)
    catalog = dialect.current_catalog(conn)
    owners: list[str | None]
    if dialect.has_schema:
        names = inspector.get_schema_names()
        pattern = _like(schema_pattern) if schema_pattern else None
        owners = [
            n
            for n in names
            if (
                pattern.fullmatch(n)
                if pattern
                else n not in _SYSTEM_SCHEMAS and not n.startswith("pg_")
            )
        ]
    elif dialect.has_catalog and catalog_pattern:
        pattern = _like(catalog_pattern)
        owners = [n for n in inspector.get_schema_names() if pattern.fullmatch(n)]
    else:
        owners = [None]
    result: list[TableId] = []
    for owner in owners:
        names = []
        if "TABLE" in types:
            names += inspector.get_table_names(schema=owner)
        if "VIEW" in types:
            names += inspector.get_view_names(schema=owner)
        for name in names:
            if dialect.has_schema:
                result.append(TableId(catalog, owner, name))
            elif dialect.has_catalog:
                result.append(TableId(owner or catalog, None, name))
            else:
                result.append(TableId(None, None, name))
    return result


def _selected(table: TableId, config: AbstractConfig) -> bool:
    names = {table.name, table.fqn}
    if table.schema:
        names.add(f"{table.schema}.{table.name}")
    whitelist = [t.strip() for t in config.get_list(TABLE_WHITELIST) if t.strip()]
    blacklist = [t.strip() for t in config.get_list(TABLE_BLACKLIST) if t.strip()]
    include = [re.compile(p) for p in config.get_list(TABLE_INCLUDE_LIST) if p.strip()]
    exclude = [re.compile(p) for p in config.get_list(TABLE_EXCLUDE_LIST) if p.strip()]
    if whitelist and not names & set(whitelist):
        return False
    if blacklist and names & set(blacklist):
        return False
    if include and not any(p.fullmatch(table.fqn) for p in include):
        return False
    return not any(p.fullmatch(table.fqn) for p in exclude)


__all__ = ["connection_error", "find_tables"]
