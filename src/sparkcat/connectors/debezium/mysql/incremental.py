"""MySQL's and MariaDB's part of an incremental snapshot
(:mod:`~sparkcat.connectors.debezium.incremental`): chunk queries with row-constructor
comparisons on the primary key, watermark rows inserted into the signal table, and ``op=r``
events whose ``source`` names the binlog position the stream had reached."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sparkcat.api.data import Struct
from sparkcat.connectors.debezium.envelope import now_us
from sparkcat.connectors.debezium.incremental import Key
from sparkcat.connectors.debezium.mysql.offsets import BinlogOffset
from sparkcat.connectors.debezium.mysql.snapshot import quote
from sparkcat.connectors.debezium.mysql.tables import CapturedTable, Tables


class MySqlChunks:
    """``connect`` opens an autocommit connection; ``position`` is the stream's position."""

    def __init__(
        self,
        tables: Tables,
        connect: Callable[[], Any],
        signal_table: str,
        position: Callable[[], BinlogOffset],
    ) -> None:
        self.tables = tables
        self._connect = connect
        db, _, name = signal_table.partition(".")
        self._signal = f"{quote(db)}.{quote(name)}"
        self._position = position
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def table(self, collection: str) -> CapturedTable | None:
        db, _, name = collection.partition(".")
        if not self.tables.captured(db, name):
            return None
        table: CapturedTable = self.tables.get(self._connection(), db, name)
        return table

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._connection().cursor() as cur:
            cur.execute(sql, tuple(params))
            return list(cur.fetchall())

    def maximum(self, table: CapturedTable, keys: Sequence[str]) -> Key | None:
        descending = ", ".join(f"{quote(k)} DESC" for k in keys)
        rows = self._query(f"SELECT {', '.join(quote(k) for k in keys)} FROM "
                           f"{quote(table.db)}.{quote(table.name)} ORDER BY {descending} "
                           "LIMIT 1")  # fmt: skip
        return tuple(rows[0]) if rows else None

    def select(
        self, table: CapturedTable, keys: Sequence[str], after: Key | None, maximum: Key,
        limit: int,
    ) -> list[dict[str, Any]]:  # fmt: skip
        names = [c.name for c in table.columns]
        key_list = f"({', '.join(quote(k) for k in keys)})"
        marks = f"({', '.join(['%s'] * len(keys))})"
        where, params = f"{key_list} <= {marks}", list(maximum)
        if after is not None:
            where += f" AND {key_list} > {marks}"
            params += list(after)
        rows = self._query(
            f"SELECT {', '.join(quote(n) for n in names)} FROM {quote(table.db)}."
            f"{quote(table.name)} WHERE {where} ORDER BY {key_list[1:-1]} LIMIT {int(limit)}",
            params,
        )
        return [dict(zip(names, row, strict=True)) for row in rows]

    def watermark(self, signal_id: str, kind: str, data: str) -> None:
        self._query(f"INSERT INTO {self._signal} VALUES (%s, %s, %s)", (signal_id, kind, data))

    def source(self, table: CapturedTable) -> Struct:
        position = self._position()
        return self.tables.source(table.name, table.db, now_us(), {
            "snapshot": "incremental", "server_id": position.server_id, "file": position.file,
            "pos": position.pos, "row": 0})  # fmt: skip

    def row(self, table: CapturedTable, row: Mapping[str, Any]) -> dict[str, Any]:
        return table.row(row)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


__all__ = ["MySqlChunks"]
