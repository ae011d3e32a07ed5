"""SparkSinkConnector and SparkSourceConnector: any Spark data source as a Connect sink or
source (sparkcat's own connectors; ``docs/spark-connectors.md``).

They live in the engine with their data plane (:mod:`sparkcat.engine.native_sink`,
:mod:`sparkcat.engine.native_source`) and config (:mod:`sparkcat.engine.native_config`):
unlike a plugin connector they do not run on their own, the engine copies their records with
Spark's readers and writers. This module imports no pyspark, so the herder validates their
configs and computes their task configs without a Spark session. Their names stay
``sparkcat.connectors.spark.*`` in the plugin registry, which is where configs name them.

The task classes are placeholders: the engine never runs instances of them (it sees
``sparkcat.native`` in the task configs). They exist because every Connect connector names a
task class (``task.class`` in its task configs, shown by ``GET /connectors/{name}/tasks``); an
engine without the native path fails them with a clear message instead of copying nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SinkRecord, SourceRecord, TopicPartition
from sparkcat.api.sink import SinkConnector, SinkTask
from sparkcat.api.source import SourceConnector, SourceOffset, SourcePartition, SourceTask
from sparkcat.engine import native_config as c

_ONLY_SPARK = "{} runs only on sparkcat's Spark engine, which copies with Spark's own {}"


class SparkSinkTask(SinkTask):
    """Placeholder task of :class:`SparkSinkConnector`."""

    def version(self) -> str:
        return c.VERSION

    def start(self, props: dict[str, str]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSinkConnector", "writers"))

    def put(self, records: Sequence[SinkRecord]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSinkConnector", "writers"))

    def stop(self) -> None:
        """Nothing to release."""


class SparkSourceTask(SourceTask):
    """Placeholder task of :class:`SparkSourceConnector`."""

    def version(self) -> str:
        return c.VERSION

    def start(self, props: dict[str, str]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSourceConnector", "readers"))

    def poll(self) -> list[SourceRecord] | None:
        raise ConnectError(_ONLY_SPARK.format("SparkSourceConnector", "readers"))

    def stop(self) -> None:
        """Nothing to release."""


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


__all__ = ["SparkSinkConnector", "SparkSinkTask", "SparkSourceConnector", "SparkSourceTask"]
