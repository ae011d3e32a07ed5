"""SparkSinkConnector and SparkSourceConnector: any Spark data source as a Connect sink or
source (sparkcat's own connectors; ``docs/spark-connectors.md``).

Written against :mod:`sparkcat.api` only: config, validation and task configs. The copying
itself is Spark's (``sparkcat.engine.native_sink`` / ``native_source``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import SinkConnector
from sparkcat.api.source import SourceConnector, SourceOffset, SourcePartition
from sparkcat.connectors.spark import config as c
from sparkcat.connectors.spark.tasks import SparkSinkTask, SparkSourceTask


class _SparkConnector:
    """Shared by both: one task config per task, each marked for the engine."""

    _kind = ""
    _props: dict[str, str]

    def version(self) -> str:
        return c.VERSION

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing to release."""

    def _task_configs(self, count: int) -> list[dict[str, str]]:
        return [dict(self._props, **{c.NATIVE_KEY: self._kind}) for _ in range(count)]


class SparkSinkConnector(_SparkConnector, SinkConnector):
    """Kafka -> a Spark writer. ``tasks.max`` tasks share the topic partitions; each task is
    one Spark partition of every write."""

    _kind = "sink"

    def task_class(self) -> type[Task]:
        return SparkSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return self._task_configs(max_tasks)

    def config(self) -> ConfigDef:
        return c.SINK_CONFIG_DEF

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        return c.check_target(result, connector_configs, sink=True)

    def alter_offsets(
        self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Offsets live in the consumer group; a path target's commit log only moves them
        forward (see docs/spark-connectors.md)."""
        return True


class SparkSourceConnector(_SparkConnector, SourceConnector):
    """A Spark reader -> Kafka: new files of a path, or new rows of a table. One task: the
    reads are Spark jobs, which spread over the executors themselves."""

    _kind = "source"

    def task_class(self) -> type[Task]:
        return SparkSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return self._task_configs(1)

    def config(self) -> ConfigDef:
        return c.SOURCE_CONFIG_DEF

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        return c.check_target(result, connector_configs, sink=False)

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Sequence[tuple[SourcePartition, SourceOffset | None]],
    ) -> bool:
        """Offsets are the last file or row copied, kept in Connect's offset store."""
        return True
