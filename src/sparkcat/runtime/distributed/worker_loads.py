"""The work-load bookkeeping of the incremental cooperative assignor (Kafka's
``ConnectorsAndTasks`` and ``WorkerLoad`` with the set arithmetic and the round-robin fill of
``IncrementalCooperativeAssignor``), kept apart from its decision logic in
:mod:`~sparkcat.runtime.distributed.assignor`. Plain data, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from sparkcat.runtime.rest.entities import ConnectorTaskId

T = TypeVar("T")


def task_key(task: ConnectorTaskId) -> tuple[str, int]:
    return (task.connector, task.task)


class ConnectorsAndTasks:
    """Kafka's ``ConnectorsAndTasks``: two insertion-ordered sets."""

    __slots__ = ("connectors", "tasks")

    def __init__(
        self, connectors: Iterable[str] = (), tasks: Iterable[ConnectorTaskId] = ()
    ) -> None:
        self.connectors: dict[str, None] = dict.fromkeys(connectors)
        self.tasks: dict[ConnectorTaskId, None] = dict.fromkeys(tasks)

    def add_all(self, other: ConnectorsAndTasks) -> None:
        self.connectors.update(other.connectors)
        self.tasks.update(other.tasks)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks

    def clear(self) -> None:
        self.connectors.clear()
        self.tasks.clear()


class WorkerLoad:
    __slots__ = ("connectors", "tasks", "worker")

    def __init__(self, worker: str, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]):
        self.worker = worker
        self.connectors = list(connectors)
        self.tasks = list(tasks)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks

    def remove(self, other: ConnectorsAndTasks) -> None:
        self.connectors = [c for c in self.connectors if c not in other.connectors]
        self.tasks = [t for t in self.tasks if t not in other.tasks]


def diff(base: ConnectorsAndTasks, *subtract: ConnectorsAndTasks) -> ConnectorsAndTasks:
    # Kafka builds these from TreeSets: the result is sorted.
    connectors = set(base.connectors)
    tasks = set(base.tasks)
    for sub in subtract:
        connectors.difference_update(sub.connectors)
        tasks.difference_update(sub.tasks)
    return ConnectorsAndTasks(sorted(connectors), sorted(tasks, key=task_key))


def intersection(
    part: ConnectorsAndTasks, members: Mapping[str, ConnectorsAndTasks]
) -> dict[str, ConnectorsAndTasks]:
    return {
        worker: ConnectorsAndTasks(
            (c for c in owned.connectors if c in part.connectors),
            (t for t in owned.tasks if t in part.tasks),
        )
        for worker, owned in members.items()
    }


def add_all(base: dict[str, ConnectorsAndTasks], more: Mapping[str, ConnectorsAndTasks]) -> None:
    for worker, assignment in more.items():
        base.setdefault(worker, ConnectorsAndTasks()).add_all(assignment)


def remove_all(loads: list[WorkerLoad], remove: Mapping[str, ConnectorsAndTasks]) -> None:
    for load in loads:
        if load.worker in remove:
            load.remove(remove[load.worker])


def duplicates_of(members: Mapping[str, ConnectorsAndTasks]) -> ConnectorsAndTasks:
    connector_counts: dict[str, int] = {}
    task_counts: dict[ConnectorTaskId, int] = {}
    for owned in members.values():
        for c in owned.connectors:
            connector_counts[c] = connector_counts.get(c, 0) + 1
        for t in owned.tasks:
            task_counts[t] = task_counts.get(t, 0) + 1
    return ConnectorsAndTasks(
        (c for c, n in connector_counts.items() if n > 1),
        (t for t, n in task_counts.items() if n > 1),
    )


def map_diff(base: Mapping[str, list[T]], subtract: Mapping[str, list[T]]) -> dict[str, list[T]]:
    result: dict[str, list[T]] = {}
    for worker, values in base.items():
        remove = set(subtract.get(worker, ()))
        result[worker] = [v for v in values if v not in remove]
    return result


def connectors_of(load: WorkerLoad) -> list[Any]:
    return load.connectors


def tasks_of(load: WorkerLoad) -> list[Any]:
    return load.tasks


def assign(
    loads: list[WorkerLoad], items: list[Any], allocation: Callable[[WorkerLoad], list[Any]]
) -> None:
    """Kafka's ``assignConnectors``/``assignTasks``: fill the least-loaded workers first,
    round-robin, never past the next load level in one pass."""
    if not items:
        return
    loads.sort(key=lambda load: (len(allocation(load)), load.worker))
    first = loads[0]
    pending = iter(items)
    remaining = len(items)
    while remaining:
        first_load = len(allocation(first))
        up_to = next(
            (i for i, load in enumerate(loads) if len(allocation(load)) > first_load), len(loads)
        )
        for load in loads[:up_to]:
            allocation(load).append(next(pending))
            remaining -= 1
            if not remaining:
                break


def load_balancing_revocations(
    configured: ConnectorsAndTasks, loads: list[WorkerLoad]
) -> dict[str, ConnectorsAndTasks]:
    if all(load.is_empty() for load in loads) or configured.is_empty():
        return {}
    result: dict[str, ConnectorsAndTasks] = {}
    for worker, revoked in revocations(len(configured.connectors), loads, connectors_of).items():
        result.setdefault(worker, ConnectorsAndTasks()).connectors.update(dict.fromkeys(revoked))
    for worker, revoked in revocations(len(configured.tasks), loads, tasks_of).items():
        result.setdefault(worker, ConnectorsAndTasks()).tasks.update(dict.fromkeys(revoked))
    return result


def revocations(
    total: int, loads: list[WorkerLoad], allocation: Callable[[WorkerLoad], list[Any]]
) -> dict[str, list[Any]]:
    """How many (and which) of one kind to revoke from each over-loaded worker: each keeps
    ``total // workers``, and ``total % workers`` of them one more."""
    minimum, extra = divmod(total, len(loads))
    sizes = [len(allocation(load)) for load in loads]
    at_min = sum(1 for n in sizes if n == minimum)
    at_extra = sum(1 for n in sizes if n == minimum + 1)
    if at_extra == extra and at_min + at_extra == len(loads):
        return {}
    result: dict[str, list[Any]] = {}
    allocated_extras = 0
    for load, current in zip(loads, sizes, strict=True):
        if current <= minimum:
            continue
        if allocated_extras < extra:
            allocated_extras += 1
            if current == minimum + 1:
                continue
            limit = minimum + 1
        else:
            limit = minimum
        result[load.worker] = list(allocation(load)[: current - limit])
    return result


__all__ = [
    "ConnectorsAndTasks",
    "WorkerLoad",
    "add_all",
    "assign",
    "connectors_of",
    "diff",
    "duplicates_of",
    "intersection",
    "load_balancing_revocations",
    "map_diff",
    "remove_all",
    "revocations",
    "task_key",
    "tasks_of",
]
