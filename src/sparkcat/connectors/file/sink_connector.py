"""FileStreamSinkConnector (Kafka's ``org.apache.kafka.connect.file``, alias
``FileStreamSink``): appends the values of the records of ``topics`` to a file."""

from __future__ import annotations

from collections.abc import Mapping

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Task
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import SinkConnector
from sparkcat.connectors.file.config import SINK_CONFIG_DEF, VERSION
from sparkcat.connectors.file.sink_task import FileStreamSinkTask


class FileStreamSinkConnector(SinkConnector):
    """Writes each record's value as a line of ``file`` (standard output when unset).

    ``topics``/``topics.regex`` are handled by the framework. ``tasks.max`` identical tasks
    all append to the same file, as in Kafka.
    """

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release: the connector has no background work."""

    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    def alter_offsets(
        self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Offsets live only in the consumer group, so any change is complete."""
        return True


__all__ = ["FileStreamSinkConnector"]
