"""JdbcSinkTask: writes records to tables, Confluent's
``io.confluent.connect.jdbc.sink.JdbcSinkTask``.

Each ``put`` is one transaction: records are grouped into runs of one table and one
key/value schema, each run is executed as batches of ``batch.size`` rows (``executemany``)
with the dialect's insert, upsert (native statement), update or delete. A failed write is
retried ``max.retries`` times after ``retry.backoff.ms`` (``RetriableError``); then, when the
task has an errant record reporter (DLQ or error log), the records are written one by one and
those that still fail are reported, else the task fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from sparkcat.api.config import AbstractConfig
from sparkcat.api.data import Schema
from sparkcat.api.errors import ConnectError, RetriableError
from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import SinkTask
from sparkcat.connectors.jdbc import types
from sparkcat.connectors.jdbc.config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    BATCH_SIZE,
    CONNECTION_PASSWORD,
    CONNECTION_URL,
    CONNECTION_USER,
    DB_TIMEZONE,
    DELETE_ENABLED,
    DIALECT_NAME,
    FIELDS_WHITELIST,
    INSERT_MODE,
    MAX_RETRIES,
    PK_FIELDS,
    PK_MODE,
    QUOTE_SQL_IDENTIFIERS,
    RETRY_BACKOFF_MS,
    SINK_CONFIG_DEF,
    TABLE_NAME_FORMAT,
    VERSION,
)
from sparkcat.connectors.jdbc.dialect import (
    Dialect,
    TableId,
    dialect_for,
    engine_for,
    to_sqlalchemy_url,
)
from sparkcat.connectors.jdbc.writer import Column, SinkSettings, TableStructure, columns_for

log = logging.getLogger(__name__)


class _Plan:
    """The statement and parameter extraction for one table and schema pair."""

    __slots__ = ("columns", "delete", "extract", "keys", "sql")

    def __init__(
        self, dialect: Dialect, table: str, columns: list[Column], mode: str, db_timezone: str
    ) -> None:
        keys = [c.name for c in columns if c.is_key]
        values = [c.name for c in columns if not c.is_key]
        self.columns = columns
        self.keys = [c for c in columns if c.is_key]
        if mode == "upsert":
            if not keys:
                raise ConnectError(
                    f"Write to table '{table}' in UPSERT mode requires key field "
                    "names to be known, check the primary key configuration"
                )
            self.sql = dialect.upsert(table, keys, values)
            order = columns
        elif mode == "update":
            self.sql = dialect.update(table, keys, values)
            order = [c for c in columns if not c.is_key] + self.keys
        else:
            self.sql = dialect.insert(table, [c.name for c in columns])
            order = columns
        self.delete = dialect.delete(table, keys) if keys else ""
        self.extract = _extractor(dialect.name, order, db_timezone)


def _extractor(dialect: str, order: list[Column], db_timezone: str) -> Any:
    getters = [c.get for c in order]
    converters = [types.param_converter(dialect, c.schema, db_timezone) for c in order]
    if not any(converters):
        return lambda r: tuple([g(r) for g in getters])
    pairs = list(zip(getters, converters, strict=True))
    return lambda r: tuple([g(r) if f is None else f(g(r)) for g, f in pairs])


class JdbcSinkTask(SinkTask):
    """Writes each record's value (and key, per ``pk.mode``) as a row of its table."""

    def __init__(self) -> None:
        self._plans: dict[tuple[str, Schema | None, Schema | None], tuple[TableId, _Plan]] = {}
        self._remaining_retries = 0

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SINK_CONFIG_DEF, props)
        password = config.get(CONNECTION_PASSWORD)
        url = to_sqlalchemy_url(
            config.get_string(CONNECTION_URL),
            config.get(CONNECTION_USER),
            None if password is None else str(password.value),
        )
        self._dialect = dialect_for(
            url, config.get_string(DIALECT_NAME), config.get_string(QUOTE_SQL_IDENTIFIERS)
        )
        self._engine = engine_for(url)
        self._settings = SinkSettings(
            insert_mode=config.get_string(INSERT_MODE).lower(),
            pk_mode=config.get_string(PK_MODE).lower(),
            pk_fields=tuple(f.strip() for f in config.get_list(PK_FIELDS) if f.strip()),
            fields_whitelist=frozenset(
                f.strip() for f in config.get_list(FIELDS_WHITELIST) if f.strip()
            ),
            auto_create=bool(config.get(AUTO_CREATE)),
            auto_evolve=bool(config.get(AUTO_EVOLVE)),
            delete_enabled=bool(config.get(DELETE_ENABLED)),
            db_timezone=config.get_string(DB_TIMEZONE),
        )
        if self._settings.delete_enabled and self._settings.pk_mode != "record_key":
            raise ConnectError(
                "Primary key mode must be 'record_key' when delete support is enabled"
            )
        self._table_format = config.get_string(TABLE_NAME_FORMAT)
        self._batch_size = max(1, int(config.get(BATCH_SIZE)))
        self._max_retries = int(config.get(MAX_RETRIES))
        self._backoff_ms = int(config.get(RETRY_BACKOFF_MS))
        self._remaining_retries = self._max_retries
        self._structure = TableStructure(self._engine, self._dialect, self._settings)

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        runs = self._runs(records)
        try:
            with self._engine.begin() as conn:
                for plan, deletes, batch in runs:
                    self._execute(conn, plan, deletes, batch)
        except sa.exc.DBAPIError as exc:
            self._failed(records, exc)
            return
        self._remaining_retries = self._max_retries

    def _runs(self, records: Sequence[SinkRecord]) -> list[tuple[_Plan, bool, list[SinkRecord]]]:
        """Consecutive records with one table, schema pair and kind (write or delete)."""
        runs: list[tuple[_Plan, bool, list[SinkRecord]]] = []
        last: tuple[Any, ...] | None = None
        for record in records:
            deleting = record.value is None
            if deleting and not self._settings.delete_enabled:
                raise ConnectError(
                    f"Sink connector is configured with '{DELETE_ENABLED}=false' and therefore "
                    "requires records with a non-null Struct value and non-null Struct schema, "
                    f"but found record at (topic='{record.topic}',partition="
                    f"{record.kafka_partition},offset={record.kafka_offset}) with a null value"
                )
            ident = (record.topic, record.key_schema, record.value_schema, deleting)
            if ident != last:
                plan = self._plan(record)
                runs.append((plan, deleting, []))
                last = ident
            runs[-1][2].append(record)
        return runs

    def _plan(self, record: SinkRecord) -> _Plan:
        cache_key = (record.topic, record.key_schema, record.value_schema)
        found = self._plans.get(cache_key)
        if found is None:
            name = self._table_format.replace("${topic}", record.topic)
            table = self._dialect.parse_table(name, None, None)
            value_schema = record.value_schema if record.value is not None else None
            columns = columns_for(name, self._settings, record.key_schema, value_schema)
            if value_schema is not None:
                self._structure.ensure(table, columns)
            sql_table = self._dialect.table(table)
            plan = _Plan(
                self._dialect,
                sql_table,
                columns,
                self._settings.insert_mode,
                self._settings.db_timezone,
            )
            if record.value is not None:
                self._plans[cache_key] = (table, plan)
            return plan
        return found[1]

    def _execute(
        self, conn: sa.Connection, plan: _Plan, deleting: bool, batch: list[SinkRecord]
    ) -> None:
        if deleting:
            keys = plan.keys
            params: list[tuple[Any, ...]] = [tuple(c.get(r) for c in keys) for r in batch]
            sql = plan.delete
        else:
            extract = plan.extract
            params = [extract(r) for r in batch]
            sql = plan.sql
        size = self._batch_size
        for start in range(0, len(params), size):
            conn.exec_driver_sql(sql, params[start : start + size])

    def _failed(self, records: Sequence[SinkRecord], exc: sa.exc.DBAPIError) -> None:
        cause = exc.orig if exc.orig is not None else exc
        log.warning(
            "Write of %d records failed (%d retries left): %s",
            len(records),
            self._remaining_retries,
            cause,
        )
        if self._remaining_retries > 0:
            self._remaining_retries -= 1
            self.context.timeout(self._backoff_ms)
            raise RetriableError(f"Write of {len(records)} records failed: {cause}") from exc
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise ConnectError(f"Write of {len(records)} records failed: {cause}") from exc
        for record in records:
            try:
                with self._engine.begin() as conn:
                    for plan, deleting, batch in self._runs([record]):
                        self._execute(conn, plan, deleting, batch)
            except sa.exc.DBAPIError as single:
                reporter.report(record, ConnectError(str(single.orig or single)))
        self._remaining_retries = self._max_retries

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        """Every ``put`` committed its transaction: nothing is buffered."""

    def stop(self) -> None:
        """The engine's pool is per process and outlives the lease."""


__all__ = ["JdbcSinkTask"]
