"""Connector and task statuses (Kafka's ``AbstractStatus``) and an in-memory store.

Standalone mode keeps statuses in memory (Kafka's ``MemoryStatusBackingStore``); the status
topic store of distributed mode (:mod:`.kafka_statuses`) implements the same
:class:`StatusBackingStore` protocol, and both read from one :class:`StatusView`.
``DESTROYED`` is never stored: deleting a connector removes its entries, as the tombstone does
in Kafka.

Topic statuses (KIP-558, :class:`TopicStatus`) are kept apart: removing a connector's statuses
leaves them, the herder deletes them one by one (a reset, or the connector was deleted).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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


Status = ConnectorStatus | TaskStatus


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


MayReplace = Callable[[Status, Status], bool]
"""``(stored status, new status) -> whether the new one replaces it``."""


class StatusView:
    """What every status store reads from: the statuses of connectors, tasks and topics in
    memory, under one lock. The memory store is this view plus its writes; the Kafka store
    feeds the same view from its own writes and from the records it reads back, so the
    lookups and the rules for applying a status are written once.

    ``_set_*`` and ``_forget_*`` take the lock; a status in state ``DESTROYED`` is never kept
    (setting it forgets the entry, as Kafka's tombstone does).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    # -- reads -------------------------------------------------------------------------------

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

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def get_all_topics(self, connector: str) -> list[TopicStatus]:
        """The topics ``connector`` used, sorted by name."""
        with self._lock:
            topics = self._topics.get(connector, {})
            return [topics[name] for name in sorted(topics)]

    # -- applying statuses (for the stores) ----------------------------------------------------

    def _set_connector(
        self, status: ConnectorStatus, may_replace: MayReplace | None = None
    ) -> bool:
        """Apply ``status`` unless ``may_replace`` refuses to replace the stored one; whether
        it was applied."""
        with self._lock:
            old = self._connectors.get(status.connector)
            if old is not None and may_replace is not None and not may_replace(old, status):
                return False
            if status.state is State.DESTROYED:
                self._connectors.pop(status.connector, None)
            else:
                self._connectors[status.connector] = status
            return True

    def _set_task(self, status: TaskStatus, may_replace: MayReplace | None = None) -> bool:
        """Apply ``status`` unless ``may_replace`` refuses to replace the stored one; whether
        it was applied."""
        with self._lock:
            tasks = self._tasks.setdefault(status.connector, {})
            old = tasks.get(status.task)
            if old is not None and may_replace is not None and not may_replace(old, status):
                return False
            if status.state is State.DESTROYED:
                tasks.pop(status.task, None)
            else:
                tasks[status.task] = status
            return True

    def _forget_connector(self, connector: str) -> list[int]:
        """Forget the connector's status and its tasks'; the ids of the tasks, sorted."""
        with self._lock:
            self._connectors.pop(connector, None)
            return sorted(self._tasks.pop(connector, {}))

    def _forget_tasks(self, connector: str, keep_below: int = 0) -> list[int]:
        """Forget the statuses of tasks with id >= ``keep_below``; their ids."""
        with self._lock:
            tasks = self._tasks.get(connector, {})
            gone = [task for task in tasks if task >= keep_below]
            for task in gone:
                del tasks[task]
            return gone

    def _forget_task(self, connector: str, task: int) -> None:
        with self._lock:
            self._tasks.get(connector, {}).pop(task, None)

    def _set_topic(self, connector: str, topic: str, status: TopicStatus) -> None:
        with self._lock:
            self._topics.setdefault(connector, {})[topic] = status

    def _forget_topic(self, connector: str, topic: str) -> None:
        with self._lock:
            self._topics.get(connector, {}).pop(topic, None)


def _not_older(old: Status, new: Status) -> bool:
    return old.generation <= new.generation


class StatusStore(StatusView):
    """Thread-safe in-memory statuses of connectors and their tasks."""

    def put(self, status: ConnectorStatus) -> None:
        """Write a connector status unconditionally (Kafka's ``put``)."""
        self._set_connector(status)

    def put_safe(self, status: ConnectorStatus) -> None:
        """Write unless a status of a newer generation is already stored (``putSafe``)."""
        self._set_connector(status, _not_older)

    def put_task(self, status: TaskStatus) -> None:
        self._set_task(status)

    def put_task_safe(self, status: TaskStatus) -> None:
        """Write unless the stored status of this task has a newer generation."""
        self._set_task(status, _not_older)

    def remove_tasks(self, connector: str, keep_below: int = 0) -> None:
        """Drop the statuses of tasks with id ≥ ``keep_below`` (all by default)."""
        self._forget_tasks(connector, keep_below)

    def remove(self, connector: str) -> None:
        """Forget the connector and its tasks (Kafka writes DESTROYED tombstones)."""
        self._forget_connector(connector)

    def put_topic(self, status: TopicStatus) -> None:
        self._set_topic(status.connector, status.topic, status)

    def delete_topic(self, connector: str, topic: str) -> None:
        self._forget_topic(connector, topic)


__all__ = [
    "ConnectorStatus",
    "State",
    "StatusBackingStore",
    "StatusStore",
    "StatusView",
    "TaskStatus",
    "TopicStatus",
]
