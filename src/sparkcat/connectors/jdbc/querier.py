"""Table and query readers of the source task, one per table (or the one query): Confluent's
``BulkTableQuerier`` and ``TimestampIncrementingTableQuerier`` with their criteria.

A querier runs its query, hands out its rows as records in batches, and when the result is
exhausted waits ``poll.interval.ms`` before querying again from its latest offset.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import CursorResult, Engine

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.jdbc import types
from sparkcat.connectors.jdbc.config import (
    INCREMENTING_FIELD,
    MODE_BULK,
    MODE_INCREMENTING,
    MODE_TIMESTAMP,
    MODE_TIMESTAMP_INCREMENTING,
)
from sparkcat.connectors.jdbc.dialect import Dialect, SqliteDialect, TableId
from sparkcat.connectors.jdbc.offsets import (
    QUERY_PARTITION,
    Offset,
    legacy_partition,
    table_partition,
)

log = logging.getLogger(__name__)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True, slots=True)
class QuerySettings:
    """The task-wide settings a querier needs."""

    mode: str
    incrementing_column: str
    timestamp_columns: tuple[str, ...]
    topic_prefix: str
    query_suffix: str
    numeric_mapping: str
    db_timezone: str
    timestamp_delay_ms: int
    validate_non_null: bool


class Querier:
    """Reads one table (``table``) or the connector's query (``query``)."""

    def __init__(
        self,
        settings: QuerySettings,
        dialect: Dialect,
        engine: Engine,
        table: TableId | None,
        query: str | None,
        offset: Offset,
    ) -> None:
        self.settings = settings
        self.dialect = dialect
        self.engine = engine
        self.table = table
        self.query = query
        self.offset = offset
        self.next_poll = 0.0
        if table is not None:
            self.partition: dict[str, str] | None = (
                legacy_partition(table.name)
                if settings.mode == MODE_BULK
                else table_partition(table.fqn)
            )
            self.topic = settings.topic_prefix + table.name
        else:
            self.partition = dict(QUERY_PARTITION)
            self.topic = settings.topic_prefix
        self._incrementing = settings.incrementing_column
        self._columns: dict[str, types.ColumnMapping] | None = None
        self._conn: sa.Connection | None = None
        self._result: CursorResult[Any] | None = None
        self._mappings: list[types.ColumnMapping | None] = []
        self._schema: Any = None
        self._converters: list[tuple[int, Any]] = []
        self._keep: list[int] | None = None
        self._ts_index: list[int] = []
        self._inc_index = -1
        self._held: list[SourceRecord] = []

    # ------------------------------------------------------------------ metadata
    def _describe(self, conn: sa.Connection) -> None:
        """Read the table's columns once: types, nullability, auto-increment column."""
        assert self.table is not None
        owner = self.table.schema or self.table.catalog
        try:
            columns = sa.inspect(conn).get_columns(self.table.name, schema=owner)
        except sa.exc.NoSuchTableError as exc:
            raise ConnectError(f"Table {self.table.fqn} does not exist") from exc
        sqlite = isinstance(self.dialect, SqliteDialect)
        mapped: dict[str, types.ColumnMapping] = {}
        for column in columns:
            mapping = types.column_mapping(
                column["name"],
                column["type"],
                bool(column["nullable"]),
                numeric_mapping=self.settings.numeric_mapping,
                db_timezone=self.settings.db_timezone,
                sqlite=sqlite,
            )
            if mapping is not None:
                mapped[column["name"]] = mapping
        if self.settings.mode in (MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING):
            if not self._incrementing:
                self._incrementing = _auto_increment(conn, self.dialect, self.table, columns)
            if not self._incrementing:
                raise ConnectError(
                    f"Cannot find an auto-increment column in table {self.table.fqn}: set "
                    "incrementing.column.name"
                )
        # SQLite reports its rowid alias (INTEGER PRIMARY KEY) nullable; it never is.
        self._check_non_null(
            {
                c["name"]: bool(c["nullable"]) and not (sqlite and c.get("primary_key"))
                for c in columns
            }
        )
        self._columns = mapped

    def _check_non_null(self, nullable: dict[str, bool]) -> None:
        if not self.settings.validate_non_null or self.table is None:
            return
        fqn = self.table.fqn
        if self._incrementing and self.settings.mode != MODE_BULK:
            if self._incrementing not in nullable:
                raise ConnectError(f"Incrementing column {self._incrementing} not found in {fqn}")
            if nullable[self._incrementing]:
                raise ConnectError(
                    f"Cannot make incremental queries using incrementing column "
                    f"{self._incrementing} on {fqn} because this column is nullable."
                )
        timestamps = self.settings.timestamp_columns
        if self.settings.mode in (MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING) and timestamps:
            missing = [c for c in timestamps if c not in nullable]
            if missing:
                raise ConnectError(f"Timestamp columns {missing} not found in {fqn}")
            if all(nullable[c] for c in timestamps):
                raise ConnectError(
                    f"Cannot make incremental queries using timestamp columns "
                    f"{list(timestamps)} on {fqn} because all of these columns nullable."
                )

    # ------------------------------------------------------------------ the query
    def statement(self, end: datetime.datetime | None) -> tuple[str, tuple[Any, ...]]:
        """The SQL and parameters of the next query (``end``: upper timestamp bound)."""
        d = self.dialect
        if self.table is not None:
            sql = f"SELECT * FROM {d.table(self.table)}"
        else:
            assert self.query is not None
            sql = self.query
        # The drivers %-format every statement they are given parameters for, even none.
        escape = d.paramstyle == "%s"
        if escape:
            sql = sql.replace("%", "%%")
        mode = self.settings.mode
        params: tuple[Any, ...] = ()
        mark = d.paramstyle
        if mode != MODE_BULK:
            ts = self._timestamp_expression()
            inc = d.quote(self._incrementing) if self._incrementing else ""
            begin = self._param(self.offset.timestamp or _EPOCH)
            last_inc = -1 if self.offset.incrementing is None else self.offset.incrementing
            if mode == MODE_INCREMENTING:
                sql += f" WHERE {inc} > {mark} ORDER BY {inc} ASC"
                params = (last_inc,)
            elif mode == MODE_TIMESTAMP:
                assert end is not None
                sql += f" WHERE {ts} > {mark} AND {ts} < {mark} ORDER BY {ts} ASC"
                params = (begin, self._param(end))
            else:
                assert end is not None
                sql += (
                    f" WHERE {ts} < {mark} AND (({ts} = {mark} AND {inc} > {mark}) OR "
                    f"{ts} > {mark}) ORDER BY {ts},{inc} ASC"
                )
                params = (self._param(end), begin, last_inc, begin)
        suffix = self.settings.query_suffix
        if suffix:
            sql += " " + (suffix.replace("%", "%%") if escape else suffix)
        return sql, params

    def _timestamp_expression(self) -> str:
        cols = [self.dialect.quote(c) for c in self.settings.timestamp_columns]
        if len(cols) == 1:
            return cols[0]
        return f"COALESCE({', '.join(cols)})"

    def _param(self, value: datetime.datetime) -> Any:
        """A UTC instant as the database's naive ``db.timezone`` value (text for SQLite)."""
        zone = types._zone(self.settings.db_timezone)
        naive = value.astimezone(zone).replace(tzinfo=None)
        if isinstance(self.dialect, SqliteDialect):
            return types.sqlite_timestamp(naive)
        return naive

    def _open(self) -> None:
        conn = self.engine.connect()
        try:
            if self.table is not None and self._columns is None:
                self._describe(conn)
            end = None
            if self.settings.mode in (MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING):
                delay = datetime.timedelta(milliseconds=self.settings.timestamp_delay_ms)
                end = self.dialect.now(conn) - delay
            sql, params = self.statement(end)
            log.debug("%s: %s %s", self.topic, sql, params)
            streaming = conn.execution_options(stream_results=True)
            result = (
                streaming.exec_driver_sql(sql, params)
                if params
                else (streaming.exec_driver_sql(sql))
            )
        except BaseException:
            conn.close()
            raise
        self._conn, self._result = conn, result
        self._mappings = []

    def _prepare(self, names: Sequence[str], first: Sequence[Any]) -> None:
        """Map the result's columns once per query (the schema may change between queries)."""
        columns = self._columns
        mappings: list[types.ColumnMapping | None] = []
        for i, name in enumerate(names):
            if columns is not None:
                mappings.append(columns.get(name))
            else:
                mappings.append(
                    types.query_mapping(
                        self._result,
                        i,
                        name,
                        first[i],
                        self.settings.numeric_mapping,
                        self.settings.db_timezone,
                    )
                )
        self._mappings = mappings
        kept = [m for m in mappings if m is not None]
        builder = SchemaBuilder.struct()
        if self.table is not None:
            builder.name(self.table.name)
        for m in kept:
            builder.field(m.name, m.schema)
        self._schema = builder.build()
        self._keep = (
            None
            if len(kept) == len(mappings)
            else [i for i, m in enumerate(mappings) if m is not None]
        )
        positions = {m.name: j for j, m in enumerate(kept)}
        self._converters = [(j, m.convert) for j, m in enumerate(kept) if m.convert is not None]
        self._ts_index = [positions[c] for c in self.settings.timestamp_columns if c in positions]
        self._inc_index = positions.get(self._incrementing, -1) if self._incrementing else -1
        if (
            self.settings.mode != MODE_BULK
            and self._incrementing
            and self._inc_index < 0
            and (self.settings.mode != MODE_TIMESTAMP)
        ):
            raise ConnectError(f"Incrementing column {self._incrementing} is not in the result")

    # ------------------------------------------------------------------ reading
    def fetch(self, max_rows: int) -> tuple[list[SourceRecord], bool]:
        """Up to ``max_rows`` records; ``True`` when the result is exhausted (closed)."""
        if self._result is None:
            self._open()
        result = self._result
        assert result is not None
        rows = result.fetchmany(max_rows)
        if rows and not self._mappings:
            self._prepare(list(result.keys()), rows[0])
        start = self.offset
        records = self._records(rows) if rows else []
        done = len(rows) < max_rows
        if self.settings.mode == MODE_TIMESTAMP:
            records = self._whole_timestamp_groups(records, done, start)
        if done:
            self.close()
        return records, done

    def _whole_timestamp_groups(
        self, records: list[SourceRecord], done: bool, start: Offset
    ) -> list[SourceRecord]:
        """``mode=timestamp``: hand out rows that share a timestamp together.

        The next query asks for rows *later* than the stored timestamp, so an offset stored in
        the middle of a group of equal timestamps (the lease ends, or the query fails, before the
        result is read to its end) would skip the group's other rows. While the result is open
        the trailing group is held back and handed out with the next fetch; closing the result
        early drops it, and the offset stays at the last row handed out, so the next query reads
        the whole group again. (``timestamp+incrementing`` needs none of this: its offset is
        exact.) A group is held in memory until it ends.
        """
        records = self._held + records
        self._held = []
        if done or not records:
            if records:
                self.offset = Offset.from_map(records[-1].source_offset)
            return records
        last = records[-1].source_offset
        cut = len(records)
        while cut and records[cut - 1].source_offset == last:
            cut -= 1
        self._held = records[cut:]
        emitted = records[:cut]
        # The offset a re-opened query would start from: the last row handed out.
        self.offset = Offset.from_map(emitted[-1].source_offset) if emitted else start
        return emitted

    def _records(self, rows: Sequence[Any]) -> list[SourceRecord]:
        schema, keep, converters = self._schema, self._keep, self._converters
        partition, topic, mode = self.partition, self.topic, self.settings.mode
        from_values = Struct.from_valid_values
        records: list[SourceRecord] = []
        append = records.append
        ts_index, inc_index = self._ts_index, self._inc_index
        offset = self.offset
        # The common mode gets its offset map straight from the column (no Offset objects).
        incrementing_only = mode == MODE_INCREMENTING and inc_index >= 0
        last: Any = None
        for row in rows:
            values = list(row) if keep is None else [row[i] for i in keep]
            for j, convert in converters:
                values[j] = convert(values[j])
            offset_map = None
            if incrementing_only:
                value = values[inc_index]
                if value is not None:
                    last = value if value.__class__ is int else int(value)
                offset_map = {INCREMENTING_FIELD: last} if last is not None else offset.to_map()
            elif mode != MODE_BULK:
                offset = _advance(offset, values, ts_index, inc_index)
                offset_map = offset.to_map()
            append(
                SourceRecord(
                    partition,
                    offset_map,
                    topic,
                    None,
                    None,
                    None,
                    schema,
                    from_values(schema, values),
                )
            )
        if incrementing_only and last is not None:
            offset = Offset(last, offset.timestamp)
        self.offset = offset
        return records

    def close(self) -> None:
        result, conn = self._result, self._conn
        self._result = self._conn = None
        self._held = []
        try:
            if result is not None:
                result.close()
        finally:
            if conn is not None:
                conn.close()


def _advance(offset: Offset, values: list[Any], ts_index: list[int], inc_index: int) -> Offset:
    incrementing = offset.incrementing
    if inc_index >= 0 and values[inc_index] is not None:
        incrementing = int(values[inc_index])
    timestamp = offset.timestamp
    for i in ts_index:
        if values[i] is not None:
            timestamp = values[i]
            break
    return Offset(incrementing, timestamp)


def _auto_increment(
    conn: sa.Connection, dialect: Dialect, table: TableId, columns: list[Any]
) -> str:
    for column in columns:
        if column.get("autoincrement") is True:
            return str(column["name"])
    if dialect.name == "PostgreSqlDatabaseDialect":
        for column in columns:
            default = str(column.get("default") or "")
            if default.startswith("nextval(") or column.get("identity"):
                return str(column["name"])
    owner = table.schema or table.catalog
    pk = sa.inspect(conn).get_pk_constraint(table.name, schema=owner)
    names = pk.get("constrained_columns") or []
    if isinstance(dialect, SqliteDialect) and len(names) == 1:
        # SQLite's INTEGER PRIMARY KEY is the rowid: it increments.
        return str(names[0])
    return ""


__all__ = ["Querier", "QuerySettings"]
