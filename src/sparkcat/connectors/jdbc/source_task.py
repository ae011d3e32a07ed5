"""JdbcSourceTask: reads its tables (or the query) into records, Confluent's
``io.confluent.connect.jdbc.source.JdbcSourceTask``.

Runs on an executor for one lease: ``start`` builds one querier per table, resuming from the
committed offsets (protocol 1 partitions, falling back to protocol 0 ones written by older
Confluent versions); ``poll`` serves the querier whose next poll is due, ``batch.max.rows``
rows at a time, and returns ``[]`` promptly while none is due.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from typing import Any

import sqlalchemy as sa

from sparkcat.api.config import AbstractConfig
from sparkcat.api.errors import ConnectError, RetriableError
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import SourceTask
from sparkcat.connectors.jdbc.config import (
    BATCH_MAX_ROWS,
    CATALOG_PATTERN,
    CONNECTION_PASSWORD,
    CONNECTION_URL,
    CONNECTION_USER,
    DB_TIMEZONE,
    DIALECT_NAME,
    INCREMENTING_COLUMN_NAME,
    MODE,
    MODE_BULK,
    NUMERIC_MAPPING,
    NUMERIC_PRECISION_MAPPING,
    POLL_INTERVAL_MS,
    QUERY,
    QUERY_SUFFIX,
    QUOTE_SQL_IDENTIFIERS,
    SCHEMA_PATTERN,
    SOURCE_CONFIG_DEF,
    TABLES,
    TIMESTAMP_COLUMN_NAME,
    TIMESTAMP_DELAY_INTERVAL_MS,
    TIMESTAMP_INITIAL,
    TOPIC_PREFIX,
    VALIDATE_NON_NULL,
    VERSION,
)
from sparkcat.connectors.jdbc.dialect import dialect_for, engine_for, to_sqlalchemy_url
from sparkcat.connectors.jdbc.offsets import Offset, legacy_partition, table_partition
from sparkcat.connectors.jdbc.querier import Querier, QuerySettings

log = logging.getLogger(__name__)

_LAST_QUERIES: dict[tuple[str, str], float] = {}
"""When this process last finished a query per (URL, partition): lets a lease honour
``poll.interval.ms`` across the previous lease in the same process (an optimisation only)."""


class JdbcSourceTask(SourceTask):
    """Copies rows of its tables (task config ``tables``) or of ``query`` to Kafka."""

    max_wait_s: float = 0.5
    """The longest one ``poll()`` sleeps waiting for a querier to be due."""

    def __init__(self) -> None:
        self._queriers: list[Querier] = []
        self._batch_max_rows = 1000
        self._poll_interval_s = 5.0
        self._stopping = threading.Event()
        self._url_key = ""

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_CONFIG_DEF, props)
        url = to_sqlalchemy_url(
            config.get_string(CONNECTION_URL), config.get(CONNECTION_USER), _password(config)
        )
        self._url_key = url.render_as_string(hide_password=True)
        dialect = dialect_for(
            url, config.get_string(DIALECT_NAME), config.get_string(QUOTE_SQL_IDENTIFIERS)
        )
        engine = engine_for(url)
        mode = config.get_string(MODE)
        if not mode:
            raise ConnectError(
                "Invalid mode: mode must be set (bulk, timestamp, incrementing "
                "or timestamp+incrementing)"
            )
        numeric = config.get(NUMERIC_MAPPING) or (
            "precision_only" if config.get(NUMERIC_PRECISION_MAPPING) else "none"
        )
        settings = QuerySettings(
            mode=mode,
            incrementing_column=config.get_string(INCREMENTING_COLUMN_NAME),
            timestamp_columns=tuple(c for c in config.get_list(TIMESTAMP_COLUMN_NAME) if c),
            topic_prefix=config.get_string(TOPIC_PREFIX),
            query_suffix=config.get_string(QUERY_SUFFIX),
            numeric_mapping=numeric,
            db_timezone=config.get_string(DB_TIMEZONE),
            timestamp_delay_ms=int(config.get(TIMESTAMP_DELAY_INTERVAL_MS)),
            validate_non_null=bool(config.get(VALIDATE_NON_NULL)),
        )
        self._batch_max_rows = int(config.get(BATCH_MAX_ROWS))
        self._poll_interval_s = int(config.get(POLL_INTERVAL_MS)) / 1000.0
        initial = _initial_offset(config.get(TIMESTAMP_INITIAL))
        reader = self.context.offset_storage_reader()
        query = config.get_string(QUERY)
        if query:
            querier = Querier(settings, dialect, engine, None, query, initial)
            assert querier.partition is not None
            stored = reader.offset(querier.partition)
            if stored:
                querier.offset = Offset.from_map(stored)
            self._queriers = [querier]
        else:
            tables = [t for t in props.get(TABLES, "").split(",") if t]
            if not tables:
                raise ConnectError(
                    "Invalid configuration: each JdbcSourceTask must have at "
                    "least one table assigned to it"
                )
            catalog, schema = config.get(CATALOG_PATTERN), config.get(SCHEMA_PATTERN)
            for fqn in tables:
                table = dialect.parse_table(fqn, catalog, schema)
                querier = Querier(settings, dialect, engine, table, None, initial)
                if mode != MODE_BULK:
                    stored = reader.offset(table_partition(table.fqn)) or reader.offset(
                        legacy_partition(table.name)
                    )
                    if stored:
                        querier.offset = Offset.from_map(stored)
                self._queriers.append(querier)
        now = time.monotonic()
        for querier in self._queriers:
            last = _LAST_QUERIES.get(self._key(querier))
            if last is not None and last <= now:
                querier.next_poll = last + self._poll_interval_s

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set() or not self._queriers:
            return None
        querier = min(self._queriers, key=lambda q: q.next_poll)
        wait = querier.next_poll - time.monotonic()
        if wait > 0:
            self._stopping.wait(min(wait, self.max_wait_s))
            return []
        try:
            records, done = querier.fetch(self._batch_max_rows)
        except sa.exc.DBAPIError as exc:
            querier.close()
            if isinstance(exc, sa.exc.OperationalError) or exc.connection_invalidated:
                # A lost connection or an unavailable server: poll again (from the offset of
                # the last record handed out), as Confluent retries its queries.
                raise RetriableError(f"Query of {querier.topic} failed: {exc.orig}") from exc
            raise
        if done:
            finished = time.monotonic()
            querier.next_poll = finished + self._poll_interval_s
            _LAST_QUERIES[self._key(querier)] = finished
        return records

    def _key(self, querier: Querier) -> tuple[str, str]:
        return (self._url_key, repr(sorted((querier.partition or {}).items())))

    def stop(self) -> None:
        self._stopping.set()

    def stopped(self) -> None:
        for querier in self._queriers:
            try:
                querier.close()
            except Exception:
                log.warning("Failed to close the query of %s", querier.topic, exc_info=True)


def _password(config: AbstractConfig) -> str | None:
    password: Any = config.get(CONNECTION_PASSWORD)
    if password is None:
        return None
    return str(password.value if hasattr(password, "value") else password)


def _initial_offset(initial: int | None) -> Offset:
    if initial is None:
        return Offset()
    if initial == -1:
        return Offset(None, datetime.datetime.now(datetime.UTC))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    return Offset(None, epoch + datetime.timedelta(milliseconds=initial))


__all__ = ["JdbcSourceTask"]
