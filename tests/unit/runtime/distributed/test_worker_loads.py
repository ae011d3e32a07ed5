"""The assignor's work-load arithmetic: Kafka's round-robin fill and balancing revocations."""

from __future__ import annotations

from sparkcat.runtime.distributed.worker_loads import (
    ConnectorsAndTasks,
    WorkerLoad,
    assign,
    connectors_of,
    diff,
    duplicates_of,
    load_balancing_revocations,
)
from sparkcat.runtime.rest.entities import ConnectorTaskId


def test_new_work_fills_the_least_loaded_workers_first_round_robin() -> None:
    loads = [WorkerLoad("w1", ["a", "b", "c"], []), WorkerLoad("w2", [], []),
             WorkerLoad("w3", ["d"], [])]  # fmt: skip
    assign(loads, ["e", "f", "g", "h"], connectors_of)
    by_worker = {load.worker: load.connectors for load in loads}
    # w2 alone until it reaches w3's load, then both in turn; w1 (3) never reached
    assert by_worker == {"w1": ["a", "b", "c"], "w2": ["e", "f", "h"], "w3": ["d", "g"]}


def test_only_the_surplus_of_over_loaded_workers_is_revoked() -> None:
    configured = ConnectorsAndTasks(["a", "b", "c", "d", "e", "f"])
    loads = [WorkerLoad("w1", ["a", "b", "c", "d", "e"], []), WorkerLoad("w2", ["f"], []),
             WorkerLoad("w3", [], [])]  # fmt: skip
    revoked = load_balancing_revocations(configured, loads)
    assert list(revoked) == ["w1"]
    assert list(revoked["w1"].connectors) == ["a", "b", "c"]  # w1 keeps 2 of 6 / 3 workers


def test_balanced_loads_revoke_nothing() -> None:
    configured = ConnectorsAndTasks(["a", "b", "c"])
    loads = [WorkerLoad("w1", ["a", "b"], []), WorkerLoad("w2", ["c"], [])]
    assert load_balancing_revocations(configured, loads) == {}


def test_work_reported_by_two_members_is_a_duplicate_and_diffs_are_sorted() -> None:
    t0, t1 = ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)
    members = {"w1": ConnectorsAndTasks(["c"], [t0, t1]), "w2": ConnectorsAndTasks([], [t1])}
    duplicates = duplicates_of(members)
    assert list(duplicates.connectors) == [] and list(duplicates.tasks) == [t1]
    left = diff(ConnectorsAndTasks(["z", "c", "a"], [t1, t0]), ConnectorsAndTasks(["c"]))
    assert list(left.connectors) == ["a", "z"] and list(left.tasks) == [t0, t1]
