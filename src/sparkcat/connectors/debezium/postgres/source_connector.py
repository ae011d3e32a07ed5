"""PostgresConnector (``io.debezium.connector.postgresql.PostgresConnector``, aliases
``PostgresConnector`` and ``Postgres``): Debezium-compatible change data capture of one
PostgreSQL database through logical decoding with ``pgoutput``. One task, as Debezium."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import psycopg2

from sparkcat.api.config import AbstractConfig, ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.source import ExactlyOnceSupport, SourceConnector
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium.postgres import config as pg
from sparkcat.connectors.debezium.postgres import database
from sparkcat.connectors.debezium.postgres.offsets import partition
from sparkcat.connectors.debezium.postgres.source_task import PostgresConnectorTask, fingerprint

log = logging.getLogger(__name__)


class PostgresConnector(SourceConnector):
    """Checks the server and the config, and hands its one task the config."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return common.VERSION

    def config(self) -> ConfigDef:
        return pg.CONFIG_DEF

    def task_class(self) -> type[Task]:
        return PostgresConnectorTask

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(pg.CONFIG_DEF, props)
        self._props = dict(props)
        if str(config.get(common.SNAPSHOT_MODE)).lower() == pg.SNAPSHOT_ALWAYS:
            committed = self.context.offset_storage_reader().offset(
                partition(str(config.get(common.TOPIC_PREFIX)))
            )
            self._props[pg.SNAPSHOT_EPOCH] = fingerprint(committed)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        props, self._props = self._props, {}
        if not props:
            return
        config = AbstractConfig(pg.CONFIG_DEF, props)
        if not config.get(pg.SLOT_DROP_ON_STOP):
            return
        slot = str(config.get(pg.SLOT_NAME))
        settings = pg.ConnectionSettings.of(config)
        try:
            conn = database.connect(settings)
            try:
                database.wait_until_inactive(conn, slot, settings.dbname, 10.0)
                database.drop_slot(conn, slot)
                log.info("Dropped replication slot %s (slot.drop.on.stop=true)", slot)
            finally:
                conn.close()
        except psycopg2.Error:
            log.warning("Could not drop replication slot %s", slot, exc_info=True)

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        values = {v.name: v for v in result}
        if any(v.error_messages for v in result):
            return result
        config = AbstractConfig(pg.CONFIG_DEF, dict(connector_configs))
        for key, problem in _config_problems(config):
            values[key].add_error_message(problem)
        if any(v.error_messages for v in result):
            return result
        settings = pg.ConnectionSettings.of(config)
        try:
            conn = database.connect(settings)
        except psycopg2.Error as exc:
            values[common.DATABASE_HOSTNAME].add_error_message(
                f"Unable to connect: {str(exc).strip()}"
            )
            return result
        try:
            for problem in database.server_problems(conn, settings.user):
                key = common.DATABASE_USER if "privilege" in problem else common.DATABASE_HOSTNAME
                values[key].add_error_message(problem)
        finally:
            conn.close()
        return result

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED


def _config_problems(config: AbstractConfig) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    slot = str(config.get(pg.SLOT_NAME))
    if not slot.replace("_", "").isalnum() or slot.lower() != slot:
        problems.append((pg.SLOT_NAME, f"Slot name '{slot}' must hold only lower-case "
                         "letters, digits and underscores"))  # fmt: skip
    return problems + common.common_problems(
        config, (pg.SCHEMA_INCLUDE_LIST, pg.SCHEMA_EXCLUDE_LIST)
    )


__all__ = ["PostgresConnector"]
