"""Connector and task statuses (Kafka's ``AbstractStatus``) and an in-memory store.

Standalone mode keeps statuses in memory (Kafka's ``MemoryStatusBackingStore``); the status
topic store of distributed mode (:mod:`.kafka_statuses`) implements the same
:class:`StatusBackingStore` protocol. ``DESTROYED`` is never
stored: deleting a connector removes its entries, as the tombstone does in Kafka.

Topic statuses (KIP-558, :class:`TopicStatus`) are kept apart: removing a connector's statuses
leaves them, the herder deletes them one by one (a reset, or the connector was deleted).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable


class State(Enum):
    """Kafka's ``AbstractStatus.State``; ``value`` is the name the REST API shows."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"


@dataclass(frozen=True, slots=True)
class ConnectorStatus:
    """The state of one connector instance; ``trace`` is set when it FAILED."""

    connector: str
    state: State
    worker_id: str
    generation: int = 0
    trace: str | None = None


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """The state of one task (``connector``-``task``); ``trace`` is set when it FAILED."""

    connector: str
    task: int
    state: State
    worker_id: str
    generation: int = 0
    trace: str | None = None


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic a connector's task used (KIP-558), first seen at ``discover_timestamp`` ms."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int


@runtime_checkable
class StatusBackingStore(Protocol):
    """What the herders need of a status store (Kafka's ``StatusBackingStore``)."""

    def put(self, status: ConnectorStatus) -> None: ...

    def put_safe(self, status: ConnectorStatus) -> None: ...

    def put_task(self, status: TaskStatus) -> None: ...

    def put_task_safe(self, status: TaskStatus) -> None: ...

    def get(self, connector: str) -> ConnectorStatus | None: ...

    def get_task(self, connector: str, task: int) -> TaskStatus | None: ...

    def get_all(self, connector: str) -> list[TaskStatus]: ...

    def remove_tasks(self, connector: str, keep_below: int = 0) -> None: ...

    def remove(self, connector: str) -> None: ...

    def connectors(self) -> set[str]: ...

    def put_topic(self, status: TopicStatus) -> None: ...

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None: ...

    def get_all_topics(self, connector: str) -> list[TopicStatus]: ...

    def delete_topic(self, connector: str, topic: str) -> None: ...


class StatusStore:
    """Thread-safe in-memory statuses of connectors and their tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    def put(self, status: ConnectorStatus) -> None:
        """Write a connector status unconditionally (Kafka's ``put``)."""
        with self._lock:
            self._connectors[status.connector] = status

    def put_safe(self, status: ConnectorStatus) -> None:
        """Write unless a status of a newer generation is already stored (``putSafe``)."""
        with self._lock:
            old = self._connectors.get(status.connector)
            if old is None or old.generation <= status.generation:
                self._connectors[status.connector] = status

    def put_task(self, status: TaskStatus) -> None:
        with self._lock:
            self._tasks.setdefault(status.connector, {})[status.task] = status

    def put_task_safe(self, status: TaskStatus) -> None:
        """Write unless the stored status of this task has a newer generation."""
        with self._lock:
            tasks = self._tasks.setdefault(status.connector, {})
            old = tasks.get(status.task)
            if old is None or old.generation <= status.generation:
                tasks[status.task] = status

    def get(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            return self._connectors.get(connector)

    def get_task(self, connector: str, task: int) -> TaskStatus | None:
        with self._lock:
            return self._tasks.get(connector, {}).get(task)

    def get_all(self, connector: str) -> list[TaskStatus]:
        """The task statuses of ``connector``, sorted by task id."""
        with self._lock:
            tasks = self._tasks.get(connector, {})
            return [tasks[task] for task in sorted(tasks)]

    def remove_tasks(self, connector: str, keep_below: int = 0) -> None:
        """Drop the statuses of tasks with id ≥ ``keep_below`` (all by default)."""
        with self._lock:
            tasks = self._tasks.get(connector, {})
            for task in [t for t in tasks if t >= keep_below]:
                del tasks[task]

    def remove(self, connector: str) -> None:
        """Forget the connector and its tasks (Kafka writes DESTROYED tombstones)."""
        with self._lock:
            self._connectors.pop(connector, None)
            self._tasks.pop(connector, None)

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def put_topic(self, status: TopicStatus) -> None:
        with self._lock:
            self._topics.setdefault(status.connector, {})[status.topic] = status

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def get_all_topics(self, connector: str) -> list[TopicStatus]:
        """The topics ``connector`` used, sorted by name."""
        with self._lock:
            topics = self._topics.get(connector, {})
            return [topics[name] for name in sorted(topics)]

    def delete_topic(self, connector: str, topic: str) -> None:
        with self._lock:
            self._topics.get(connector, {}).pop(topic, None)


__all__ = [
    "ConnectorStatus",
    "State",
    "StatusBackingStore",
    "StatusStore",
    "TaskStatus",
    "TopicStatus",
]
