"""Plugins for bench/bench_cluster.py: a CPU-bound generating source and a counting sink.

``GenSourceTask`` produces ``batch`` records per poll as fast as it can (no sleeps), each to
partition ``task.id % partitions`` of its topic, with its own source offset (so a lease that
re-runs resumes where the committed one ended). ``CountSinkTask`` only counts what it is given:
what the bench measures is sparkcat's own per-record path, not an external system.
"""

from __future__ import annotations

from sparkcat.api import (
    ConfigDef,
    SinkConnector,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from sparkcat.api.data import STRING_SCHEMA


class GenSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return GenSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"task.id": str(i)}) for i in range(max_tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef()

    def stop(self) -> None:
        pass


class GenSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._task = props["task.id"]
        self._topic = props["topic"]
        self._batch = int(props.get("batch", "500"))
        self._partition = int(self._task) % int(props.get("partitions", "4"))
        self._payload = "x" * int(props.get("size", "100"))
        stored = self.context.offset_storage_reader().offset({"task": self._task})
        self._next = int(stored["n"]) + 1 if stored else 0

    def poll(self) -> list[SourceRecord]:
        first = self._next
        self._next += self._batch
        part, topic, payload = {"task": self._task}, self._topic, self._payload
        return [
            SourceRecord(part, {"n": n}, topic, self._partition, None, None, STRING_SCHEMA,
                         f"{n} {payload}")
            for n in range(first, first + self._batch)
        ]  # fmt: skip

    def stop(self) -> None:
        pass


class CountSinkConnector(SinkConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SinkTask]:
        return CountSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef()

    def stop(self) -> None:
        pass


class CountSinkTask(SinkTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.count = 0

    def put(self, records: list) -> None:  # type: ignore[type-arg]
        self.count += len(records)

    def stop(self) -> None:
        pass
