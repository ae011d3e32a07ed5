"""JdbcSinkConnector (Confluent's ``io.confluent.connect.jdbc.JdbcSinkConnector``, alias
``JdbcSink``): writes the records of ``topics`` to tables of a database."""

from __future__ import annotations

from collections.abc import Mapping

from sparkcat.api.config import AbstractConfig, ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import SinkConnector
from sparkcat.connectors.jdbc import tables
from sparkcat.connectors.jdbc.config import (
    CONNECTION_URL,
    DELETE_ENABLED,
    INSERT_MODE,
    PK_MODE,
    SINK_CONFIG_DEF,
    VERSION,
)
from sparkcat.connectors.jdbc.sink_task import JdbcSinkTask


class JdbcSinkConnector(SinkConnector):
    """``tasks.max`` identical tasks; Kafka spreads the topic partitions over them."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release: the connector has no background work."""

    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        if any(v.error_messages for v in result):
            return result
        values = {v.name: v for v in result}
        config = AbstractConfig(SINK_CONFIG_DEF, dict(connector_configs))
        if config.get(DELETE_ENABLED) and config.get_string(PK_MODE).lower() != "record_key":
            values[PK_MODE].add_error_message("Deletes are only supported for pk.mode record_key")
        if config.get_string(INSERT_MODE).lower() == "upsert" and (
            config.get_string(PK_MODE).lower() == "none"
        ):
            values[PK_MODE].add_error_message("insert.mode upsert requires a primary key mode")
        error = tables.connection_error(config)
        if error:
            values[CONNECTION_URL].add_error_message(error)
        return result

    def alter_offsets(
        self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Offsets live only in the consumer group, so any change is complete."""
        return True


__all__ = ["JdbcSinkConnector"]
