"""MySqlConnector (``io.debezium.connector.mysql.MySqlConnector``, aliases ``MySqlConnector``
and ``MySql``) and MariaDbConnector (``io.debezium.connector.mariadb.MariaDbConnector``,
aliases ``MariaDbConnector`` and ``MariaDb``): Debezium-compatible change data capture of a
MySQL or MariaDB server from its ROW binlog. One task, as Debezium."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from sparkcat.api.config import AbstractConfig, ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.source import SourceConnector
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium.mysql import config as my
from sparkcat.connectors.debezium.mysql.offsets import source_partition
from sparkcat.connectors.debezium.mysql.server import binlog_problems, current_position
from sparkcat.connectors.debezium.mysql.source_task import (
    MariaDbConnectorTask,
    MySqlConnectorTask,
    fingerprint,
)


class MySqlConnector(SourceConnector):
    """Checks the server and the config, and hands its one task the config."""

    task: ClassVar[type[MySqlConnectorTask]] = MySqlConnectorTask

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return common.VERSION

    def config(self) -> ConfigDef:
        return my.CONFIG_DEF

    def task_class(self) -> type[Task]:
        return self.task

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(my.CONFIG_DEF, props)
        self._props = dict(props)
        mode = my.snapshot_mode(config)
        committed = self.context.offset_storage_reader().offset(
            source_partition(str(config.get(common.TOPIC_PREFIX)))
        )
        if mode == my.SNAPSHOT_ALWAYS:
            self._props[my.SNAPSHOT_EPOCH] = fingerprint(committed)
        elif mode == my.SNAPSHOT_NO_DATA and not committed:
            conn = my.connect(my.connection_settings(config))
            try:
                self._props[my.STREAM_START] = json.dumps(current_position(conn).to_dict())
            finally:
                conn.close()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        self._props = {}

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        values = {v.name: v for v in result}
        if any(v.error_messages for v in result):
            return result
        config = AbstractConfig(my.CONFIG_DEF, dict(connector_configs))
        for key, problem in _config_problems(config):
            values[key].add_error_message(problem)
        if any(v.error_messages for v in result):
            return result
        try:
            conn = my.connect(my.connection_settings(config),
                              int(config.get(my.CONNECT_TIMEOUT_MS)) / 1000.0)  # fmt: skip
        except Exception as exc:
            values[common.DATABASE_HOSTNAME].add_error_message(f"Unable to connect: {exc}")
            return result
        try:
            for problem in binlog_problems(conn):
                values[common.DATABASE_HOSTNAME].add_error_message(problem)
            privileges = _privilege_problem(conn)
            if privileges:
                values[common.DATABASE_USER].add_error_message(privileges)
        finally:
            conn.close()
        return result


def _privilege_problem(conn: Any) -> str | None:
    with conn.cursor() as cur:
        cur.execute("SHOW GRANTS")
        grants = " ".join(str(row[0]).upper() for row in cur.fetchall())
    if "ALL PRIVILEGES ON *.*" in grants:
        return None
    missing = []
    if not any(p in grants for p in ("REPLICATION SLAVE", "REPLICATION REPLICA")):
        missing.append("REPLICATION SLAVE")
    if not any(p in grants for p in ("REPLICATION CLIENT", "BINLOG MONITOR", "SUPER")):
        missing.append("REPLICATION CLIENT")
    if missing:
        return (f"The user lacks the {' and '.join(missing)} privilege(s) the binlog "
                "reader needs (GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.*)")  # fmt: skip
    return None


def _config_problems(config: AbstractConfig) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if config.get(my.SCHEMA_HISTORY_TOPIC) and not config.get(my.SCHEMA_HISTORY_SERVERS):
        problems.append((my.SCHEMA_HISTORY_SERVERS, "A value is required when "
                         f"{my.SCHEMA_HISTORY_TOPIC} is set"))  # fmt: skip
    return problems + common.common_problems(
        config, (my.DATABASE_INCLUDE_LIST, my.DATABASE_EXCLUDE_LIST)
    )


class MariaDbConnector(MySqlConnector):
    """The same for MariaDB (``source.connector`` is ``mariadb``)."""

    task: ClassVar[type[MySqlConnectorTask]] = MariaDbConnectorTask


__all__ = ["MariaDbConnector", "MySqlConnector"]
