"""JdbcSourceConnector (Confluent's ``io.confluent.connect.jdbc.JdbcSourceConnector``, alias
``JdbcSource``): copies tables, or one query, of a database to Kafka."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.config import AbstractConfig, ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.api.source import ExactlyOnceSupport, SourceConnector
from sparkcat.connectors.jdbc import tables as table_lookup
from sparkcat.connectors.jdbc.config import (
    CONNECTION_URL,
    MODE,
    QUERY,
    SOURCE_CONFIG_DEF,
    TABLE_BLACKLIST,
    TABLE_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TABLE_POLL_INTERVAL_MS,
    TABLE_WHITELIST,
    TABLES,
    VERSION,
)
from sparkcat.connectors.jdbc.offsets import check_offset
from sparkcat.connectors.jdbc.source_task import JdbcSourceTask

log = logging.getLogger(__name__)


class JdbcSourceConnector(SourceConnector):
    """Finds the tables to copy (``table.whitelist``/``table.blacklist``/``table.include.list``
    /``table.exclude.list``, ``catalog.pattern``, ``schema.pattern``, ``table.types``) and
    spreads them over the tasks as Kafka's ``ConnectorUtils.groupPartitions`` does; a
    background thread looks for new or dropped tables every ``table.poll.interval.ms`` and
    asks for a task reconfiguration when the set changes. With ``query`` there is one task."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._tables: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_CONFIG_DEF, props)
        _, problem = _cross_check(config)
        if problem:
            raise ConnectError(
                f"Couldn't start JdbcSourceConnector due to configuration error: {problem}"
            )
        self._props = dict(props)
        self._stop = threading.Event()
        if config.get_string(QUERY):
            return
        self._tables = table_lookup.find_tables(config)
        interval_s = int(config.get(TABLE_POLL_INTERVAL_MS)) / 1000.0
        self._monitor = threading.Thread(
            target=self._watch,
            args=(config, interval_s),
            name="jdbc-table-monitor",
            daemon=True,
        )
        self._monitor.start()

    def _watch(self, config: AbstractConfig, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                found = table_lookup.find_tables(config)
            except Exception:
                log.warning("Could not list the tables of the database", exc_info=True)
                continue
            with self._lock:
                changed = found != self._tables
                if changed:
                    log.info("Tables changed from %s to %s", self._tables, found)
                    self._tables = found
            if changed and not self._stop.is_set():
                self.context.request_task_reconfiguration()

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._props.get(QUERY):
            return [dict(self._props)]
        with self._lock:
            tables = list(self._tables)
        if not tables:
            log.warning("No tasks will be run because no tables were found")
            return []
        groups = group_partitions(tables, min(len(tables), max_tasks))
        return [{**self._props, TABLES: ",".join(group)} for group in groups]

    def stop(self) -> None:
        self._stop.set()
        monitor, self._monitor = self._monitor, None
        if monitor is not None:
            monitor.join(5)

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        values = {v.name: v for v in result}
        if any(v.error_messages for v in result):
            return result
        config = AbstractConfig(SOURCE_CONFIG_DEF, dict(connector_configs))
        key, problem = _cross_check(config)
        if problem:
            values[key].add_error_message(problem)
        error = table_lookup.connection_error(config)
        if error:
            values[CONNECTION_URL].add_error_message(error)
        return result

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport:
        mode = config.get(MODE, "")
        return (
            ExactlyOnceSupport.UNSUPPORTED
            if mode in ("", "bulk")
            else (ExactlyOnceSupport.SUPPORTED)
        )

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Accept Confluent's partition and offset shapes only."""
        for partition, offset in offsets:
            check_offset(partition, offset)
        return True


def _cross_check(config: AbstractConfig) -> tuple[str, str]:
    """The first cross-key problem: ``(key it belongs to, message)``, or ``("", "")``."""
    query = config.get_string(QUERY)
    listed = any(
        config.get_list(k)
        for k in (TABLE_WHITELIST, TABLE_BLACKLIST, TABLE_INCLUDE_LIST, TABLE_EXCLUDE_LIST)
    )
    if query and listed:
        return QUERY, f"{QUERY} may not be combined with whole-table copying settings."
    if config.get_list(TABLE_WHITELIST) and config.get_list(TABLE_BLACKLIST):
        return TABLE_BLACKLIST, f"{TABLE_WHITELIST} and {TABLE_BLACKLIST} may not be combined"
    if not config.get_string(MODE):
        return MODE, "mode must be one of bulk, timestamp, incrementing, timestamp+incrementing"
    return "", ""


def group_partitions(elements: list[str], groups: int) -> list[list[str]]:
    """Kafka's ``ConnectorUtils.groupPartitions``: contiguous, as even as possible."""
    if groups <= 0:
        raise ConfigError("Number of groups must be positive.")
    per, extra = divmod(len(elements), groups)
    result: list[list[str]] = []
    start = 0
    for i in range(groups):
        size = per + (1 if i < extra else 0)
        result.append(elements[start : start + size])
        start += size
    return result


__all__ = ["JdbcSourceConnector", "group_partitions"]
