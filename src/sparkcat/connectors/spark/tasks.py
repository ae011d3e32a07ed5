"""The task classes of the Spark-native connectors.

The engine never runs instances of these: it sees ``sparkcat.native`` in the task configs
and moves the records with Spark's own readers and writers (``docs/spark-connectors.md``).
They exist because every Connect connector names a task class (``task.class`` in its task
configs, shown by ``GET /connectors/{name}/tasks``); an engine without the native path fails
them with a clear message instead of copying nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SinkRecord, SourceRecord
from sparkcat.api.sink import SinkTask
from sparkcat.api.source import SourceTask
from sparkcat.connectors.spark.config import VERSION

_ONLY_SPARK = "{} runs only on sparkcat's Spark engine, which copies with Spark's own {}"


class SparkSinkTask(SinkTask):
    """Placeholder task of :class:`~sparkcat.connectors.spark.SparkSinkConnector`."""

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSinkConnector", "writers"))

    def put(self, records: Sequence[SinkRecord]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSinkConnector", "writers"))

    def stop(self) -> None:
        """Nothing to release."""


class SparkSourceTask(SourceTask):
    """Placeholder task of :class:`~sparkcat.connectors.spark.SparkSourceConnector`."""

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        raise ConnectError(_ONLY_SPARK.format("SparkSourceConnector", "readers"))

    def poll(self) -> list[SourceRecord] | None:
        raise ConnectError(_ONLY_SPARK.format("SparkSourceConnector", "readers"))

    def stop(self) -> None:
        """Nothing to release."""
