"""Test-only plugins, loaded through ``plugin.path`` so Spark's Python workers can import them.

``RecordingSourceTask`` appends one line per lifecycle call to ``events.file`` (one ``write``
per line on an O_APPEND file, so lines from many processes never interleave):
``<instance-id> <event>``. Tests read the file to check the KIP-419 guarantees.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from sparkcat.api import (
    ConfigDef,
    SinkConnector,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from sparkcat.api.data import STRING_SCHEMA


def _record_event(path: str, instance: str, event: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{instance} {event}\n".encode())
    finally:
        os.close(fd)


def _hang(events: str, instance: str) -> None:
    """An external call that never returns and ignores everything (``block.file``)."""
    _record_event(events, instance, "blocked")
    while True:
        time.sleep(1)


class RecordingSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return RecordingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"task.id": str(i)}) for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


class RecordingSourceTask(SourceTask):
    """Emits ``records.per.poll`` records per poll; ``fail.on.poll=true`` makes poll raise;
    while the file ``block.file`` exists, poll hangs for good (a task stuck in ``poll()``)."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._instance = uuid.uuid4().hex[:12]
        self._events = props["events.file"]
        self._topic = props["topic"]
        self._task = props.get("task.id", "0")
        self._per_poll = int(props.get("records.per.poll", "5"))
        self._fail = props.get("fail.on.poll", "false") == "true"
        self._block_file = props.get("block.file", "")
        stored = self.context.offset_storage_reader().offset({"task": self._task})
        self._next = int(stored["n"]) + 1 if stored else 0
        _record_event(self._events, self._instance, f"start {self._next}")

    def poll(self) -> list[SourceRecord] | None:
        _record_event(self._events, self._instance, "poll")
        if self._fail:
            raise RuntimeError("poll failed on purpose")
        if self._block_file and os.path.exists(self._block_file):
            _hang(self._events, self._instance)
        time.sleep(0.05)
        records = []
        for _ in range(self._per_poll):
            n = self._next
            self._next += 1
            records.append(
                SourceRecord(
                    {"task": self._task},
                    {"n": n},
                    self._topic,
                    None,
                    None,
                    None,
                    STRING_SCHEMA,
                    f"{self._task}-{n}",
                )
            )
        return records

    def commit(self) -> None:
        _record_event(self._events, self._instance, "commit")

    def stop(self) -> None:
        _record_event(self._events, self._instance, "stop")

    def stopped(self) -> None:
        _record_event(self._events, self._instance, "stopped")


class BlockingSinkConnector(SinkConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SinkTask]:
        return BlockingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"task.id": str(i)}) for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


class BlockingSinkTask(SinkTask):
    """Appends each record's value to ``out.file`` and records its lifecycle in
    ``events.file``; while the file ``block.file`` exists, put hangs for good."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._instance = uuid.uuid4().hex[:12]
        self._events = props["events.file"]
        self._out = props["out.file"]
        self._block_file = props.get("block.file", "")
        _record_event(self._events, self._instance, "start")

    def put(self, records: Any) -> None:
        if self._block_file and os.path.exists(self._block_file):
            _hang(self._events, self._instance)
        with open(self._out, "a", encoding="utf-8") as f:
            f.writelines(f"{record.value}\n" for record in records)

    def stop(self) -> None:
        _record_event(self._events, self._instance, "stop")


def read_events(path: str) -> dict[str, list[str]]:
    """Events per task instance, in the order they happened."""
    per_instance: dict[str, list[str]] = {}
    if not os.path.exists(path):
        return per_instance
    with open(path, encoding="utf-8") as f:
        for line in f:
            instance, _, event = line.rstrip("\n").partition(" ")
            per_instance.setdefault(instance, []).append(event)
    return per_instance


def instance_count(path: str) -> int:
    return len(read_events(path))


__all__: list[Any] = [
    "BlockingSinkConnector",
    "BlockingSinkTask",
    "RecordingSourceConnector",
    "RecordingSourceTask",
    "instance_count",
    "read_events",
]
