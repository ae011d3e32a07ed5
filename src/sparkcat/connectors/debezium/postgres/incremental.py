"""PostgreSQL's part of an incremental snapshot
(:mod:`~sparkcat.connectors.debezium.incremental`): chunk queries with row comparisons on a
raw-text connection, so keys come back in the text form pgoutput streams them in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sparkcat.api.data import Struct
from sparkcat.connectors.debezium.envelope import now_us
from sparkcat.connectors.debezium.incremental import Key
from sparkcat.connectors.debezium.postgres import database
from sparkcat.connectors.debezium.postgres.tables import CapturedTable, Tables


class PostgresChunks:
    def __init__(self, tables: Tables, connect: Callable[[], Any], signal_table: str) -> None:
        self.tables = tables
        self._connect = connect
        self._signal = database.qualified(*signal_table.split(".", 1))
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def table(self, collection: str) -> CapturedTable:
        schema, _, name = collection.partition(".")
        return self.tables.get(schema, name)

    def maximum(self, table: CapturedTable, keys: Sequence[str]) -> Key | None:
        key_list = ", ".join(database.quote_ident(k) for k in keys)
        descending = ", ".join(f"{database.quote_ident(k)} DESC" for k in keys)
        rows = database.query(
            self._connection(),
            f"SELECT {key_list} FROM {database.qualified(table.schema, table.name)} "
            f"ORDER BY {descending} LIMIT 1",
        )
        return tuple(rows[0]) if rows else None

    def select(
        self, table: CapturedTable, keys: Sequence[str], after: Key | None, maximum: Key,
        limit: int,
    ) -> list[dict[str, Any]]:  # fmt: skip
        names = [c.name for c in table.shape.columns]
        key_list = ", ".join(database.quote_ident(k) for k in keys)
        marks = ", ".join(["%s"] * len(keys))
        where, params = f"ROW({key_list}) <= ROW({marks})", list(maximum)
        if after is not None:
            where += f" AND ROW({key_list}) > ROW({marks})"
            params += list(after)
        sql = (
            f"SELECT {', '.join(database.quote_ident(n) for n in names)} FROM "
            f"{database.qualified(table.schema, table.name)} WHERE {where} "
            f"ORDER BY {key_list} LIMIT {int(limit)}"
        )
        rows = database.query(self._connection(), sql, params)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def watermark(self, signal_id: str, kind: str, data: str) -> None:
        database.query(self._connection(), f"INSERT INTO {self._signal} VALUES (%s, %s, %s)",
                       (signal_id, kind, data))  # fmt: skip

    def source(self, table: CapturedTable) -> Struct:
        return self.tables.source(table, now_us(), "incremental", None, None)

    def row(self, table: CapturedTable, row: Mapping[str, Any]) -> dict[str, Any]:
        return table.row(list(row), list(row.values()))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


__all__ = ["PostgresChunks"]
