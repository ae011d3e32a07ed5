"""The group leader's assignors: Kafka's ``IncrementalCooperativeAssignor`` and ``EagerAssignor``.

Pure Python over plain data; the leader's :class:`~sparkcat.runtime.distributed.membership.
WorkerGroupMember` runs one of them on each rebalance it leads.

Incremental cooperative (``compatible``/``sessioned``), as Kafka's algorithm:

- every member reports what it runs now; the leader compares that with its previous
  assignment and the configured connectors/tasks (``ClusterConfigSnapshot``);
- only what moves is revoked: deleted connectors/tasks, duplicates (work reported by two
  members: each copy is revoked and the work is assigned again), and — when the load is
  unbalanced — the surplus of over-loaded members (load-balancing revocations; a revoking
  rebalance right after another one is delayed by an exponential backoff of at most
  ``scheduled.rebalance.max.delay.ms``);
- new work goes to the least-loaded members, round-robin (connectors, then tasks);
- work whose member disappeared ("lost") is held for ``scheduled.rebalance.max.delay.ms``:
  the assignment carries ``delay`` = ms left, members rejoin when it expires; a member that
  came back in time gets its work again (it reports it), otherwise the lost work goes to
  members that joined empty-handed during the delay, or is spread like new work.

Eager (``connect.protocol=eager``): every rebalance revokes everything; the leader assigns
all connectors, then all tasks, round-robin over the sorted member ids.

Both answer CONFIG_MISMATCH to every member (with no work) when the leader's config is
behind the highest config offset a member reported, even after re-reading it.

Public API:

- :class:`ConfigSnapshot` — what the leader assigns from (``offset``, ``connectors()``,
  ``tasks(connector)``): the config store's ``ClusterConfigState`` fits as is;
  :class:`ClusterConfigSnapshot` is a plain one (task counts) for tests and tools.
- :class:`IncrementalCooperativeAssignor` (one per worker: it keeps state between the
  rebalances it leads) and :class:`EagerAssignor`; both have
  ``perform_assignment(leader_id, protocol, members, snapshot, fresh_snapshot,
  last_completed_generation, generation) -> GroupAssignment``.
- :class:`GroupAssignment` — ``assignments`` (member id -> :class:`ExtendedAssignment`),
  ``leader_state`` (owner urls, ``None`` on CONFIG_MISMATCH), ``snapshot`` used, and
  :meth:`~GroupAssignment.serialize` to the bytes sent in SyncGroup.
- :class:`ClusterAssignment` — :meth:`IncrementalCooperativeAssignor.perform_task_assignment`'s
  result per worker (newly assigned, newly revoked, all assigned); used by tests.
"""

# The decisions of Kafka's IncrementalCooperativeAssignor.java, in its order, so the two read
# side by side; the set arithmetic they use is in worker_loads.py.

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from sparkcat.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    CONNECT_PROTOCOL_V0,
    NO_ERROR,
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    serialize_assignment,
)
from sparkcat.runtime.distributed.worker_loads import (
    ConnectorsAndTasks,
    WorkerLoad,
    add_all,
    assign,
    connectors_of,
    diff,
    duplicates_of,
    intersection,
    load_balancing_revocations,
    map_diff,
    remove_all,
    task_key,
    tasks_of,
)
from sparkcat.runtime.rest.entities import ConnectorTaskId

Clock = Callable[[], int]
T = TypeVar("T")


def _now_ms() -> int:
    return int(time.time() * 1000)


class ConfigSnapshot(Protocol):
    """What the assignors read of the config: Kafka's ``ClusterConfigState`` has this shape
    (``offset``, sorted ``connectors()``, the committed ``tasks(connector)`` — empty while a
    connector's task configs are inconsistent), so the herder may pass its config store's
    snapshot as is; tasks may be ``ConnectorTaskId`` or ``(connector, task)`` tuples."""

    @property
    def offset(self) -> int: ...

    def connectors(self) -> list[str]: ...

    def tasks(self, connector: str) -> Sequence[Any]: ...


@dataclass(frozen=True, slots=True)
class ClusterConfigSnapshot:
    """A plain :class:`ConfigSnapshot`: the config at ``offset`` as task counts."""

    offset: int
    task_counts: Mapping[str, int] = field(default_factory=dict)

    def connectors(self) -> list[str]:
        return sorted(self.task_counts)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]


def _task_ids(snapshot: ConfigSnapshot, connector: str) -> list[ConnectorTaskId]:
    result = []
    for task in snapshot.tasks(connector):
        if isinstance(task, ConnectorTaskId):
            result.append(task)
        else:
            name, number = task
            result.append(ConnectorTaskId(str(name), int(number)))
    return sorted(result, key=task_key)


def _exponential_backoff(max_delay: int, attempts: int) -> int:
    # Kafka's ExponentialBackoff(initial=1 (0 if max_delay is 0), multiplier=40, max, jitter=0).
    initial = 0 if max_delay == 0 else min(max_delay, 1)
    if max_delay <= initial:
        return initial
    exp_max = math.log(max_delay / max(initial, 1)) / math.log(40)
    return min(int(initial * 40 ** min(attempts, exp_max)), max_delay)


@dataclass(frozen=True, slots=True)
class ClusterAssignment:
    """Per worker: what is newly assigned, newly revoked, and everything it will run."""

    newly_assigned_connectors: dict[str, list[str]]
    newly_assigned_tasks: dict[str, list[ConnectorTaskId]]
    newly_revoked_connectors: dict[str, list[str]]
    newly_revoked_tasks: dict[str, list[ConnectorTaskId]]
    all_assigned_connectors: dict[str, list[str]]
    all_assigned_tasks: dict[str, list[ConnectorTaskId]]


_EMPTY_CLUSTER_ASSIGNMENT = ClusterAssignment({}, {}, {}, {}, {}, {})


@dataclass(frozen=True, slots=True)
class LeaderState:
    """What the leader knows after assigning: members' urls and who runs what (Kafka's
    ``LeaderState``, used to forward requests to a connector's or task's owner)."""

    members: Mapping[str, ExtendedWorkerState]
    connector_owners: Mapping[str, str]
    task_owners: Mapping[ConnectorTaskId, str]

    @classmethod
    def of(
        cls,
        members: Mapping[str, ExtendedWorkerState],
        connectors: Mapping[str, Iterable[str]],
        tasks: Mapping[str, Iterable[ConnectorTaskId]],
    ) -> LeaderState:
        return cls(
            dict(members),
            {c: worker for worker, owned in connectors.items() for c in owned},
            {t: worker for worker, owned in tasks.items() for t in owned},
        )

    def owner_url(self, target: str | ConnectorTaskId) -> str | None:
        if isinstance(target, ConnectorTaskId):
            owner = self.task_owners.get(target)
        else:
            owner = self.connector_owners.get(target)
        return None if owner is None else self.members[owner].url


@dataclass(frozen=True, slots=True)
class GroupAssignment:
    """The leader's answer for one rebalance."""

    version: int
    assignments: dict[str, ExtendedAssignment]
    leader_state: LeaderState | None
    snapshot: ConfigSnapshot

    def serialize(self) -> dict[str, bytes]:
        """Member id -> assignment bytes for SyncGroup (Kafka's ``serializeAssignments``)."""
        result = {}
        for member, assignment in self.assignments.items():
            data = serialize_assignment(assignment, self.version)
            result[member] = b"" if data is None else data
        return result


def _ensure_leader_config(
    max_offset: int,
    snapshot: ConfigSnapshot,
    fresh_snapshot: Callable[[], ConfigSnapshot],
) -> ConfigSnapshot | None:
    """The snapshot to assign from, or None when the leader is behind a member even after
    re-reading its config (then every member gets CONFIG_MISMATCH and re-syncs)."""
    if snapshot.offset >= max_offset:
        return snapshot
    fresh = fresh_snapshot()
    return fresh if fresh.offset >= max_offset else None


def _mismatch(
    version: int,
    leader_id: str,
    members: Mapping[str, ExtendedWorkerState],
    max_offset: int,
    snapshot: ConfigSnapshot,
) -> GroupAssignment:
    leader_url = members[leader_id].url
    assignments = {
        m: ExtendedAssignment(version, CONFIG_MISMATCH, leader_id, leader_url, max_offset)
        for m in members
    }
    return GroupAssignment(version, assignments, None, snapshot)


class EagerAssignor:
    """Kafka's ``EagerAssignor`` (``connect.protocol=eager``): assigns everything each time."""

    def perform_assignment(
        self,
        leader_id: str,
        protocol: str,
        members: Mapping[str, ExtendedWorkerState],
        snapshot: ConfigSnapshot,
        fresh_snapshot: Callable[[], ConfigSnapshot],
        last_completed_generation: int = -1,
        generation: int = -1,
    ) -> GroupAssignment:
        max_offset = max(state.config_offset for state in members.values())
        used = _ensure_leader_config(max_offset, snapshot, fresh_snapshot)
        if used is None:
            return _mismatch(CONNECT_PROTOCOL_V0, leader_id, members, max_offset, snapshot)
        offset = max_offset if used is snapshot else used.offset
        ring = sorted(members)
        connectors: dict[str, list[str]] = {}
        tasks: dict[str, list[ConnectorTaskId]] = {}
        position = 0
        for connector in used.connectors():
            connectors.setdefault(ring[position % len(ring)], []).append(connector)
            position += 1
        for connector in used.connectors():
            for task in _task_ids(used, connector):
                tasks.setdefault(ring[position % len(ring)], []).append(task)
                position += 1
        leader_url = members[leader_id].url
        assignments = {
            m: ExtendedAssignment(
                CONNECT_PROTOCOL_V0,
                NO_ERROR,
                leader_id,
                leader_url,
                offset,
                tuple(connectors.get(m, ())),
                tuple(tasks.get(m, ())),
            )
            for m in members
        }
        state = LeaderState.of(members, connectors, tasks)
        return GroupAssignment(CONNECT_PROTOCOL_V0, assignments, state, used)


class IncrementalCooperativeAssignor:
    """Kafka's ``IncrementalCooperativeAssignor``; keeps its bookkeeping between rebalances.

    ``max_delay_ms`` is ``scheduled.rebalance.max.delay.ms``; ``clock`` returns epoch ms.
    Not thread-safe: only the membership's rebalance path calls it.
    """

    def __init__(self, max_delay_ms: int, clock: Clock = _now_ms) -> None:
        self.max_delay = max_delay_ms
        self._clock = clock
        self._previous_assignment = ConnectorsAndTasks()
        self._previous_revocation = ConnectorsAndTasks()
        self._revoked_in_previous = False
        self.candidate_workers_for_reassignment: dict[str, None] = {}
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation_id = -1
        self.previous_members: set[str] = set()
        self._num_successive_revoking_rebalances = 0

    def perform_assignment(
        self,
        leader_id: str,
        protocol: str,
        members: Mapping[str, ExtendedWorkerState],
        snapshot: ConfigSnapshot,
        fresh_snapshot: Callable[[], ConfigSnapshot],
        last_completed_generation: int,
        generation: int,
    ) -> GroupAssignment:
        """Assign for one rebalance. ``snapshot`` is the leader's config when it joined,
        ``fresh_snapshot`` re-reads it (used when a member reported a newer offset)."""
        version = ConnectProtocolCompatibility.from_protocol(protocol).version
        max_offset = max(state.config_offset for state in members.values())
        used = _ensure_leader_config(max_offset, snapshot, fresh_snapshot)
        if used is None:
            return _mismatch(version, leader_id, members, max_offset, snapshot)
        offset = max_offset if used is snapshot else used.offset
        current = {
            member: ConnectorsAndTasks(
                state.assignment.connectors if state.assignment else (),
                state.assignment.tasks if state.assignment else (),
            )
            for member, state in sorted(members.items())
        }
        cluster = self._perform_task_assignment(
            used, last_completed_generation, generation, current
        )
        leader_url = members[leader_id].url
        assignments = {
            m: ExtendedAssignment(
                version,
                NO_ERROR,
                leader_id,
                leader_url,
                offset,
                tuple(cluster.newly_assigned_connectors.get(m, ())),
                tuple(cluster.newly_assigned_tasks.get(m, ())),
                tuple(cluster.newly_revoked_connectors.get(m, ())),
                tuple(cluster.newly_revoked_tasks.get(m, ())),
                self.delay,
            )
            for m in members
        }
        state = LeaderState.of(members, cluster.all_assigned_connectors, cluster.all_assigned_tasks)
        return GroupAssignment(version, assignments, state, used)

    def perform_task_assignment(
        self,
        snapshot: ConfigSnapshot,
        last_completed_generation: int,
        generation: int,
        member_assignments: Mapping[str, tuple[Iterable[str], Iterable[ConnectorTaskId]]],
    ) -> ClusterAssignment:
        """The core of the algorithm over plain data: member id -> (connectors, tasks) it
        runs now. Visible for tests, as in Kafka."""
        current = {
            member: ConnectorsAndTasks(connectors, tasks)
            for member, (connectors, tasks) in member_assignments.items()
        }
        return self._perform_task_assignment(
            snapshot, last_completed_generation, generation, current
        )

    def _perform_task_assignment(
        self,
        snapshot: ConfigSnapshot,
        last_completed_generation: int,
        generation: int,
        members: Mapping[str, ConnectorsAndTasks],
    ) -> ClusterAssignment:
        if self.previous_generation_id != last_completed_generation:
            # The leader's view of the previous round may be stale (e.g. a failed sync).
            self._previous_assignment = ConnectorsAndTasks()
        connectors = snapshot.connectors()
        configured = ConnectorsAndTasks(
            connectors, (t for c in connectors for t in _task_ids(snapshot, c))
        )
        active = ConnectorsAndTasks()
        for owned in members.values():
            active.add_all(owned)
        revocation = self._previous_revocation
        if not revocation.is_empty():
            # A previous revocation did not take effect: start again from what runs now.
            if any(c in active.connectors for c in revocation.connectors) or any(
                t in active.tasks for t in revocation.tasks
            ):
                self._previous_assignment = ConnectorsAndTasks(active.connectors, active.tasks)
            revocation.clear()

        deleted = diff(self._previous_assignment, configured)
        duplicated = duplicates_of(members)
        lost = diff(self._previous_assignment, active, deleted)
        created = diff(configured, self._previous_assignment, active)
        current_loads = [
            WorkerLoad(
                w,
                (c for c in owned.connectors if c not in deleted.connectors),
                (t for t in owned.tasks if t not in deleted.tasks),
            )
            for w, owned in members.items()
        ]
        to_revoke: dict[str, ConnectorsAndTasks] = {}
        deleted_to_revoke = intersection(deleted, members)
        duplicated_to_revoke = intersection(duplicated, members)
        add_all(to_revoke, deleted_to_revoke)
        add_all(to_revoke, duplicated_to_revoke)
        next_loads = [WorkerLoad(w, o.connectors, o.tasks) for w, o in members.items()]
        remove_all(next_loads, deleted_to_revoke)
        remove_all(next_loads, duplicated_to_revoke)

        lost_to_reassign = ConnectorsAndTasks()
        self._handle_lost_assignments(lost, lost_to_reassign, next_loads)
        self._balance(configured, next_loads, to_revoke)

        to_assign = ConnectorsAndTasks(created.connectors, created.tasks)
        to_assign.add_all(lost_to_reassign)
        assign(next_loads, list(to_assign.connectors), connectors_of)
        assign(next_loads, list(to_assign.tasks), tasks_of)

        next_connectors = {w.worker: list(w.connectors) for w in next_loads}
        next_tasks = {w.worker: list(w.tasks) for w in next_loads}
        current_connectors = {w.worker: w.connectors for w in current_loads}
        current_tasks = {w.worker: w.tasks for w in current_loads}
        self._previous_assignment = self._compute_previous_assignment(
            to_revoke, next_connectors, next_tasks, lost
        )
        self.previous_generation_id = generation
        self.previous_members = set(members)
        revoked_connectors = {w: list(r.connectors) for w, r in to_revoke.items()}
        revoked_tasks = {w: list(r.tasks) for w, r in to_revoke.items()}
        return ClusterAssignment(
            map_diff(next_connectors, current_connectors),
            map_diff(next_tasks, current_tasks),
            revoked_connectors,
            revoked_tasks,
            map_diff(next_connectors, revoked_connectors),
            map_diff(next_tasks, revoked_tasks),
        )

    def _balance(
        self,
        configured: ConnectorsAndTasks,
        next_loads: list[WorkerLoad],
        to_revoke: dict[str, ConnectorsAndTasks],
    ) -> None:
        # No load-balancing revocations while a delayed rebalance is pending.
        if self.delay != 0:
            self._revoked_in_previous = False
            return
        revocations = load_balancing_revocations(configured, next_loads)
        if self._revoked_in_previous and revocations:
            self._num_successive_revoking_rebalances += 1
            self.delay = _exponential_backoff(
                self.max_delay, self._num_successive_revoking_rebalances
            )
            if self.delay != 0:
                self.scheduled_rebalance = self._clock() + self.delay
                return
            add_all(to_revoke, revocations)
            remove_all(next_loads, revocations)
        elif revocations:
            add_all(to_revoke, revocations)
            remove_all(next_loads, revocations)
            self._revoked_in_previous = True
        elif self._revoked_in_previous:
            # Converged to a balanced load: reset the backoff.
            self._revoked_in_previous = False
            self._num_successive_revoking_rebalances = 0

    def _compute_previous_assignment(
        self,
        to_revoke: Mapping[str, ConnectorsAndTasks],
        connectors: Mapping[str, list[str]],
        tasks: Mapping[str, list[ConnectorTaskId]],
        lost: ConnectorsAndTasks,
    ) -> ConnectorsAndTasks:
        previous = ConnectorsAndTasks(
            (c for owned in connectors.values() for c in owned),
            (t for owned in tasks.values() for t in owned),
        )
        for revoked in to_revoke.values():
            for c in revoked.connectors:
                previous.connectors.pop(c, None)
            for t in revoked.tasks:
                previous.tasks.pop(t, None)
            self._previous_revocation.add_all(revoked)
        # Lost work stays "previously assigned" so that it is still seen as lost next time.
        previous.add_all(lost)
        return previous

    def _handle_lost_assignments(
        self,
        lost: ConnectorsAndTasks,
        to_reassign: ConnectorsAndTasks,
        loads: list[WorkerLoad],
    ) -> None:
        if lost.is_empty() and not self._revoked_in_previous:
            self._reset_delay()
            return
        now = self._clock()
        active = {load.worker for load in loads}
        if self.scheduled_rebalance <= 0 and active >= self.previous_members:
            # Nobody left: members probably missed the previous assignment. Reassign now.
            to_reassign.add_all(lost)
            return
        if self.max_delay == 0:
            to_reassign.add_all(lost)
            return
        if self.scheduled_rebalance > 0 and now >= self.scheduled_rebalance:
            candidates = [
                load
                for worker in self.candidate_workers_for_reassignment
                for load in loads
                if load.worker == worker
            ]
            if candidates:
                for i, connector in enumerate(lost.connectors):
                    candidates[i % len(candidates)].connectors.append(connector)
                for i, task in enumerate(lost.tasks):
                    candidates[i % len(candidates)].tasks.append(task)
            else:
                to_reassign.add_all(lost)
            self._reset_delay()
            # The full delay has passed: successive revoking rebalances are allowed again.
            self._revoked_in_previous = False
            return
        for load in loads:
            if load.is_empty():
                self.candidate_workers_for_reassignment[load.worker] = None
        if now < self.scheduled_rebalance:
            self.delay = _calculate_delay(self.scheduled_rebalance, now, self.max_delay)
        else:
            self.delay = self.max_delay
        self.scheduled_rebalance = now + self.delay

    def _reset_delay(self) -> None:
        self.candidate_workers_for_reassignment.clear()
        self.scheduled_rebalance = 0
        self.delay = 0


def _calculate_delay(scheduled: int, now: int, max_delay: int) -> int:
    ahead = scheduled - now
    return min(ahead, max_delay) if ahead > 0 else 0


__all__ = [
    "ClusterAssignment",
    "ClusterConfigSnapshot",
    "ConfigSnapshot",
    "EagerAssignor",
    "GroupAssignment",
    "IncrementalCooperativeAssignor",
    "LeaderState",
]
