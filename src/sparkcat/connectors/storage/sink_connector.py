"""S3SinkConnector (Confluent's ``io.confluent.connect.s3.S3SinkConnector``, alias
``S3Sink``) and FileSystemSinkConnector (sparkcat's own, alias ``FileSystemSink``: the same
files on a local or mounted filesystem)."""

from __future__ import annotations

from collections.abc import Mapping

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import SinkConnector
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.sink_task import FileSystemSinkTask, S3SinkTask
from sparkcat.connectors.storage.store import filesystem_store


class _StorageSinkConnector(SinkConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return c.VERSION

    def start(self, props: dict[str, str]) -> None:
        c.parse(self.config(), props)
        self._props = dict(props)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release."""

    def alter_offsets(
        self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Offsets live only in the consumer group; object names follow from them."""
        return True


class S3SinkConnector(_StorageSinkConnector):
    """Writes topics to S3 objects in Parquet, JSON, Avro or raw bytes (see
    docs/connectors/storage.md)."""

    def task_class(self) -> type[Task]:
        return S3SinkTask

    def config(self) -> ConfigDef:
        return c.S3_CONFIG_DEF


class FileSystemSinkConnector(_StorageSinkConnector):
    """Writes topics to files under a ``file://`` ``store.url``, as S3SinkConnector would."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        filesystem_store(c.parse(self.config(), props).values)  # a bad store.url fails here

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        """As the ConfigDef, plus: ``store.url`` is required (it is optional in the shared
        definition, whose other keys tests and tools parse without one)."""
        config = super().validate(connector_configs)
        if not connector_configs.get(c.STORE_URL_CONFIG):
            for value in config.config_values:
                if value.name == c.STORE_URL_CONFIG and not value.error_messages:
                    value.add_error_message(c.STORE_URL_MISSING)
        return config

    def task_class(self) -> type[Task]:
        return FileSystemSinkTask

    def config(self) -> ConfigDef:
        return c.FILESYSTEM_CONFIG_DEF


__all__ = ["FileSystemSinkConnector", "S3SinkConnector"]
