"""The assignors' behaviours, after the scenarios of Kafka's IncrementalCooperativeAssignorTest:
a small cluster model applies each round's assignment the way workers do (stop what is
revoked, start what is assigned) and checks allocations, delays and balance."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkcat.runtime.distributed.assignor import (
    ClusterAssignment,
    ClusterConfigSnapshot,
    EagerAssignor,
    IncrementalCooperativeAssignor,
)
from sparkcat.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_assignment,
)
from sparkcat.runtime.rest.entities import ConnectorTaskId

DEFAULT_DELAY = 300_000


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now

    def sleep(self, ms: int) -> None:
        self.now += ms


class Cluster:
    """Kafka's test harness, in Python: connectors with task counts, workers with what they
    run, one assignor, and a generation counter."""

    def __init__(self, max_delay: int = DEFAULT_DELAY) -> None:
        self.clock = Clock()
        self.connectors = {"connector1": 4, "connector2": 4}
        self.workers: dict[str, tuple[list[str], list[ConnectorTaskId]]] = {"worker1": ([], [])}
        self.generation = 1000
        self.assignor = IncrementalCooperativeAssignor(max_delay, self.clock)
        self.assignor.previous_generation_id = self.generation
        self.result: ClusterAssignment | None = None

    def rebalance(self, *, apply: bool = True, generation_mismatch: bool = False) -> None:
        self.generation += 1
        last_completed = self.generation - (2 if generation_mismatch else 1)
        current = {w: (list(c), list(t)) for w, (c, t) in self.workers.items()}
        result = self.assignor.perform_task_assignment(
            ClusterConfigSnapshot(618, dict(self.connectors)),
            last_completed,
            self.generation,
            current,
        )
        self.result = result
        self._assert_no_redundant_assignments(result)
        if not apply:
            return
        for worker, (connectors, tasks) in self.workers.items():
            revoked_c = result.newly_revoked_connectors.get(worker, [])
            revoked_t = result.newly_revoked_tasks.get(worker, [])
            connectors[:] = [c for c in connectors if c not in revoked_c]
            connectors += result.newly_assigned_connectors.get(worker, [])
            tasks[:] = [t for t in tasks if t not in revoked_t]
            tasks += result.newly_assigned_tasks.get(worker, [])
            assert set(connectors) == set(result.all_assigned_connectors[worker])
            assert set(tasks) == set(result.all_assigned_tasks[worker])

    @staticmethod
    def _assert_no_redundant_assignments(result: ClusterAssignment) -> None:
        everything = [c for cs in result.all_assigned_connectors.values() for c in cs]
        assert len(everything) == len(set(everything)), everything
        tasks = [t for ts in result.all_assigned_tasks.values() for t in ts]
        assert len(tasks) == len(set(tasks)), tasks

    def add_workers(self, *names: str) -> None:
        for name in names:
            self.workers[name] = ([], [])

    def remove_workers(self, *names: str) -> None:
        for name in names:
            del self.workers[name]

    def connector_allocations(self) -> list[int]:
        return sorted(len(c) for c, _ in self.workers.values())

    def task_allocations(self) -> list[int]:
        return sorted(len(t) for _, t in self.workers.values())

    def assert_allocations(self, connectors: list[int], tasks: list[int]) -> None:
        assert self.connector_allocations() == connectors
        assert self.task_allocations() == tasks

    def assert_delay(self, delay: int) -> None:
        assert self.assignor.delay == delay

    def assert_empty_assignment(self) -> None:
        assert self.result is not None
        for per_worker in (
            self.result.newly_assigned_connectors, self.result.newly_assigned_tasks,
            self.result.newly_revoked_connectors, self.result.newly_revoked_tasks,
        ):  # fmt: skip
            assert [x for xs in per_worker.values() for x in xs] == []

    def assert_no_revocations(self) -> None:
        assert self.result is not None
        assert not any(self.result.newly_revoked_connectors.values())
        assert not any(self.result.newly_revoked_tasks.values())

    def assert_balanced_and_complete(self) -> None:
        connectors = [c for cs, _ in self.workers.values() for c in cs]
        tasks = [t for _, ts in self.workers.values() for t in ts]
        assert sorted(connectors) == sorted(self.connectors)
        expected = {ConnectorTaskId(c, i) for c, n in self.connectors.items() for i in range(n)}
        assert set(tasks) == expected and len(tasks) == len(expected)
        for sizes in (self.connector_allocations(), self.task_allocations()):
            assert max(sizes) - min(sizes) <= 1


def test_worker_joins() -> None:
    cluster = Cluster()
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()

    # A new worker: the first revokes its surplus, nothing is assigned to the newcomer yet.
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 1], [0, 4])

    # The follow-up rebalance hands the revoked work to the newcomer.
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_delay(0)
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()

    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_empty_assignment()


def test_workers_join_after_revocations_back_off() -> None:
    cluster = Cluster()
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.assert_allocations([3], [12])
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([0, 2], [0, 6])
    # A second revoking rebalance in a row is delayed (exponential backoff).
    cluster.add_workers("worker3")
    cluster.rebalance()
    assert cluster.assignor.delay > 0
    cluster.assert_allocations([0, 1, 2], [3, 3, 6])

    cluster.clock.sleep(cluster.assignor.delay)
    cluster.add_workers("worker4")
    cluster.rebalance()
    cluster.assert_allocations([0, 0, 1, 1], [0, 3, 3, 3])

    cluster.add_workers("worker5")
    cluster.rebalance()
    assert cluster.assignor.delay > 40
    cluster.assert_allocations([0, 0, 1, 1, 1], [1, 2, 3, 3, 3])

    cluster.clock.sleep(cluster.assignor.delay)
    cluster.add_workers("worker6")
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 0, 0, 1, 1, 1], [0, 1, 2, 2, 2, 2])

    cluster.rebalance()
    cluster.assert_allocations([0, 0, 0, 1, 1, 1], [2, 2, 2, 2, 2, 2])
    cluster.assert_balanced_and_complete()


def test_immediate_revocations_when_max_delay_is_0() -> None:
    cluster = Cluster(max_delay=0)
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([0, 2], [0, 6])
    cluster.add_workers("worker3")
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 1, 1], [3, 3, 4])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1, 1], [4, 4, 4])
    cluster.assert_balanced_and_complete()


def test_successive_revocations_when_max_delay_equals_initial_backoff() -> None:
    cluster = Cluster(max_delay=1)
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.add_workers("worker3")
    cluster.rebalance()
    cluster.assert_delay(1)
    cluster.assert_allocations([0, 1, 2], [3, 3, 6])


def test_worker_leaves_permanently() -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([1, 1], [4, 4])

    # worker2's work is lost: held back for the scheduled rebalance delay.
    cluster.remove_workers("worker2")
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY)
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY // 2)
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2 + 1)
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()


@pytest.mark.parametrize("leaving", ["worker1", "worker2"])  # the leader, then a follower
def test_worker_bounces_within_the_delay(leaving: str) -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([1, 1], [4, 4])

    cluster.remove_workers(leaving)
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY)
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY // 2)

    # It comes back (empty-handed, as after a restart) before the delay expires.
    cluster.clock.sleep(DEFAULT_DELAY // 4)
    cluster.add_workers(leaving)
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY // 4)
    cluster.assert_empty_assignment()

    # When the delay expires, its lost work goes back to it; nothing else moves.
    cluster.clock.sleep(DEFAULT_DELAY // 4)
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()
    assert cluster.workers[leaving] != ([], [])


def test_failed_assignment_then_recovery() -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.add_workers("worker3")
    # The leader computed an assignment but the sync failed: nobody applied it.
    cluster.rebalance(apply=False)
    cluster.assert_allocations([0, 1, 1], [0, 4, 4])

    cluster.rebalance()
    assert cluster.assignor.delay > 0
    cluster.assert_allocations([0, 1, 1], [0, 4, 4])

    cluster.clock.sleep(cluster.assignor.delay)
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 1, 1], [0, 3, 3])

    cluster.rebalance()
    cluster.assert_allocations([0, 1, 1], [2, 3, 3])
    cluster.assert_balanced_and_complete()


def test_generation_mismatch_discards_previous_view() -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.remove_workers("worker2")
    # The leader missed a generation: its previous view is unreliable, so nothing is "lost";
    # worker2's work is unaccounted for and assigned as new.
    cluster.rebalance(generation_mismatch=True)
    cluster.assert_delay(0)
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()


def test_deleted_connector_is_revoked() -> None:
    cluster = Cluster()
    cluster.connectors["connector3"] = 4
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([1, 2], [6, 6])
    del cluster.connectors["connector3"]
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


def test_new_connector_goes_to_least_loaded() -> None:
    cluster = Cluster()
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    cluster.assert_allocations([0, 1, 1], [2, 3, 3])
    cluster.connectors["connector3"] = 1
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1, 1], [3, 3, 3])
    cluster.assert_balanced_and_complete()


def test_duplicated_tasks_are_revoked_then_reassigned() -> None:
    cluster = Cluster()
    cluster.rebalance()
    cluster.assert_allocations([2], [8])
    # worker2 joins claiming connector1 and its tasks, which worker1 runs too.
    cluster.workers["worker2"] = (
        ["connector1"],
        [ConnectorTaskId("connector1", i) for i in range(4)],
    )
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 1], [0, 4])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()
    cluster.rebalance()
    cluster.assert_empty_assignment()


def test_duplicated_assignments_of_a_deleted_connector() -> None:
    cluster = Cluster()
    cluster.rebalance()
    del cluster.connectors["connector1"]
    cluster.workers["worker2"] = (
        ["connector1"],
        [ConnectorTaskId("connector1", i) for i in range(4)],
    )
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_allocations([0, 1], [0, 2])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 1], [2, 2])
    cluster.assert_balanced_and_complete()


def test_lost_work_goes_to_a_worker_that_joined_during_the_delay() -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    kept = (list(cluster.workers["worker1"][0]), list(cluster.workers["worker1"][1]))
    cluster.remove_workers("worker2")
    cluster.rebalance()
    cluster.assert_delay(DEFAULT_DELAY)
    cluster.add_workers("worker3")  # a replacement machine joins during the delay
    cluster.rebalance()
    cluster.assert_empty_assignment()
    cluster.clock.sleep(DEFAULT_DELAY)
    cluster.rebalance()
    cluster.assert_delay(0)
    cluster.assert_no_revocations()
    assert cluster.workers["worker1"] == kept
    connectors, tasks = cluster.workers["worker3"]
    assert (len(connectors), len(tasks)) == (1, 4)
    cluster.assert_balanced_and_complete()


# --- the leader's entry point: metadata in, assignments out --------------------------------


def _state(
    url: str, offset: int, connectors: tuple[str, ...] = (), tasks: tuple = ()
) -> ExtendedWorkerState:
    assignment = ExtendedAssignment(2, 0, "m1", "http://w1/", offset, connectors, tasks)
    return ExtendedWorkerState(url, offset, assignment)


def test_perform_assignment_encodes_for_each_member() -> None:
    assignor = IncrementalCooperativeAssignor(DEFAULT_DELAY)
    members = {"m1": _state("http://w1/", 5), "m2": _state("http://w2/", 5)}
    snapshot = ClusterConfigSnapshot(5, {"c": 2})
    result = assignor.perform_assignment(
        "m1", "sessioned", members, snapshot, lambda: snapshot, -1, 0
    )
    assert result.version == 2
    decoded = {m: deserialize_assignment(data) for m, data in result.serialize().items()}
    assert decoded == result.assignments
    assigned = [a for a in result.assignments.values()]
    assert all(a.leader == "m1" and a.leader_url == "http://w1/" for a in assigned)
    assert sorted(c for a in assigned for c in a.connectors) == ["c"]
    assert sorted((t.connector, t.task) for a in assigned for t in a.tasks) == [("c", 0), ("c", 1)]
    assert result.leader_state is not None
    owner = result.leader_state.owner_url("c")
    assert owner in ("http://w1/", "http://w2/")
    assert result.leader_state.owner_url(ConnectorTaskId("c", 0)) in ("http://w1/", "http://w2/")
    assert result.leader_state.owner_url("missing") is None


@pytest.mark.parametrize(
    "assignor", [IncrementalCooperativeAssignor(DEFAULT_DELAY), EagerAssignor()]
)
def test_config_mismatch_when_leader_is_behind(assignor: object) -> None:
    members = {"m1": _state("http://w1/", 3), "m2": _state("http://w2/", 9)}
    snapshot = ClusterConfigSnapshot(3, {"c": 1})
    result = assignor.perform_assignment(  # type: ignore[attr-defined]
        "m1", "compatible", members, snapshot, lambda: snapshot, -1, 0
    )
    for assignment in result.assignments.values():
        assert assignment.error == CONFIG_MISMATCH and assignment.failed
        assert assignment.config_offset == 9
        assert assignment.connectors == () and assignment.tasks == ()
    assert result.leader_state is None


def test_leader_catches_up_with_a_fresh_snapshot() -> None:
    members = {"m1": _state("http://w1/", 3), "m2": _state("http://w2/", 9)}
    stale, fresh = ClusterConfigSnapshot(3, {}), ClusterConfigSnapshot(10, {"c": 1})
    result = IncrementalCooperativeAssignor(DEFAULT_DELAY).perform_assignment(
        "m1", "sessioned", members, stale, lambda: fresh, -1, 0
    )
    assert result.snapshot is fresh
    assert all(not a.failed and a.config_offset == 10 for a in result.assignments.values())
    assert sum(len(a.connectors) for a in result.assignments.values()) == 1


def test_eager_round_robin_connectors_then_tasks() -> None:
    members = {m: ExtendedWorkerState(f"http://{m}/", 4) for m in ("b", "a", "c")}
    snapshot = ClusterConfigSnapshot(4, {"x": 2, "y": 2})
    result = EagerAssignor().perform_assignment("a", "default", members, snapshot, lambda: snapshot)
    assert result.version == 0
    got = {
        m: (a.connectors, [(t.connector, t.task) for t in a.tasks])
        for m, a in result.assignments.items()
    }
    assert got == {
        "a": (("x",), [("x", 1)]),
        "b": (("y",), [("y", 0)]),
        "c": ((), [("x", 0), ("y", 1)]),
    }
    data = result.serialize()["c"]
    assert data[:2] == b"\x00\x00"
    assert deserialize_assignment(data) == result.assignments["c"]


# --- properties over random histories -------------------------------------------------------

events = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.integers(0, 5)),
        st.tuples(st.just("leave"), st.integers(0, 5)),
        st.tuples(st.just("connector"), st.integers(0, 5), st.integers(0, 6)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(events)
def test_converges_to_complete_balanced_assignment(history: list[tuple[Any, ...]]) -> None:
    """With scheduled.rebalance.max.delay.ms=0, whatever happens, every rebalance keeps
    each connector/task on at most one worker, and two follow-up rebalances (what workers do
    after a revocation) restore a complete and balanced allocation."""
    cluster = Cluster(max_delay=0)
    cluster.rebalance()
    for event in history:
        if event[0] == "join":
            cluster.workers.setdefault(f"w{event[1]}", ([], []))
        elif event[0] == "leave" and len(cluster.workers) > 1:
            cluster.workers.pop(f"w{event[1]}", None)
        elif event[0] == "connector":
            name = f"c{event[1]}"
            if event[2]:
                cluster.connectors[name] = event[2]
            else:
                cluster.connectors.pop(name, None)
        for _ in range(3):
            cluster.rebalance()
        cluster.assert_balanced_and_complete()


class StoreLikeSnapshot:
    """The config store's ClusterConfigState shape: tasks as (connector, n) tuples, and an
    inconsistent connector with no tasks."""

    offset = 7

    def connectors(self) -> list[str]:
        return ["x", "y"]

    def tasks(self, connector: str) -> list[tuple[str, int]]:
        return [("x", 1), ("x", 0)] if connector == "x" else []


def test_any_config_snapshot_shape() -> None:
    members = {"m1": _state("http://w1/", 7)}
    snapshot = StoreLikeSnapshot()
    result = IncrementalCooperativeAssignor(DEFAULT_DELAY).perform_assignment(
        "m1", "sessioned", members, snapshot, lambda: snapshot, -1, 0
    )
    assignment = result.assignments["m1"]
    assert sorted(assignment.connectors) == ["x", "y"]
    assert assignment.tasks == (ConnectorTaskId("x", 0), ConnectorTaskId("x", 1))
