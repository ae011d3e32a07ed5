"""Status stores: the contract every status store keeps (memory here; Kafka in integration)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sparkcat.runtime.stores.statuses import (
    ConnectorStatus,
    State,
    StatusStore,
    TaskStatus,
    TopicStatus,
)


@pytest.fixture
def store() -> Iterator[Any]:
    yield StatusStore()


def _connector(state: State, worker: str = "w1:8083", generation: int = 1) -> ConnectorStatus:
    return ConnectorStatus("conn", state, worker, generation)


def _task(task: int, state: State, worker: str = "w1:8083", generation: int = 1) -> TaskStatus:
    return TaskStatus("conn", task, state, worker, generation)


def test_connector_status_is_stored(store: Any) -> None:
    assert store.get("conn") is None
    store.put(_connector(State.RUNNING))
    assert store.get("conn") == _connector(State.RUNNING)
    assert store.connectors() == {"conn"}


def test_failed_status_keeps_its_trace(store: Any) -> None:
    failed = ConnectorStatus("conn", State.FAILED, "w1:8083", 3, "Traceback: boom")
    store.put(failed)
    assert store.get("conn") == failed


def test_task_statuses_are_listed_by_task_id(store: Any) -> None:
    store.put_task(_task(1, State.RUNNING))
    store.put_task(_task(0, State.PAUSED))
    assert store.get_task("conn", 1) == _task(1, State.RUNNING)
    assert store.get_task("conn", 7) is None
    assert store.get_all("conn") == [_task(0, State.PAUSED), _task(1, State.RUNNING)]
    assert store.get_all("nobody") == []


def test_put_safe_keeps_a_newer_generation_of_another_worker(store: Any) -> None:
    store.put(_connector(State.RUNNING, "w2:8083", generation=5))
    store.put_safe(_connector(State.UNASSIGNED, "w1:8083", generation=4))
    assert store.get("conn") == _connector(State.RUNNING, "w2:8083", generation=5)
    store.put_safe(_connector(State.RUNNING, "w1:8083", generation=6))
    assert store.get("conn") == _connector(State.RUNNING, "w1:8083", generation=6)


def test_put_task_safe_keeps_a_newer_generation_of_another_worker(store: Any) -> None:
    store.put_task(_task(0, State.RUNNING, "w2:8083", generation=5))
    store.put_task_safe(_task(0, State.UNASSIGNED, "w1:8083", generation=4))
    assert store.get_task("conn", 0) == _task(0, State.RUNNING, "w2:8083", generation=5)
    store.put_task_safe(_task(0, State.FAILED, "w1:8083", generation=5))
    assert store.get_task("conn", 0) == _task(0, State.FAILED, "w1:8083", generation=5)


def test_remove_tasks_keeps_lower_ids(store: Any) -> None:
    for task in range(3):
        store.put_task(_task(task, State.RUNNING))
    store.remove_tasks("conn", keep_below=1)
    assert store.get_all("conn") == [_task(0, State.RUNNING)]
    store.remove_tasks("conn")
    assert store.get_all("conn") == []


def test_remove_forgets_the_connector_and_its_tasks(store: Any) -> None:
    store.put(_connector(State.RUNNING))
    store.put_task(_task(0, State.RUNNING))
    store.remove("conn")
    assert store.get("conn") is None
    assert store.get_all("conn") == []
    assert store.connectors() == set()


def test_topic_statuses_are_listed_by_topic_and_deleted_one_by_one(store: Any) -> None:
    store.put_topic(TopicStatus("orders", "conn", 1, 5))
    store.put_topic(TopicStatus("audit", "conn", 0, 7))
    assert store.get_topic("conn", "orders") == TopicStatus("orders", "conn", 1, 5)
    assert [s.topic for s in store.get_all_topics("conn")] == ["audit", "orders"]
    store.remove("conn")  # a connector's statuses go; its topics stay until deleted
    store.delete_topic("conn", "audit")
    assert store.get_all_topics("conn") == [TopicStatus("orders", "conn", 1, 5)]
    assert store.get_topic("other", "orders") is None and store.get_all_topics("other") == []


def test_a_destroyed_status_is_not_kept(store: Any) -> None:
    store.put(_connector(State.RUNNING))
    store.put_task(_task(0, State.RUNNING))
    store.put_task(_task(1, State.RUNNING))
    store.put(_connector(State.DESTROYED))
    store.put_task(_task(0, State.DESTROYED))
    assert store.get("conn") is None
    assert store.connectors() == set()
    assert store.get_task("conn", 0) is None
    assert store.get_all("conn") == [_task(1, State.RUNNING)]


def test_reads_of_an_unknown_connector_find_nothing(store: Any) -> None:
    store.put(_connector(State.RUNNING))
    assert store.get("other") is None
    assert store.get_task("other", 0) is None
    assert store.get_all("other") == []
    assert store.get_topic("other", "orders") is None
    assert store.get_all_topics("other") == []
    store.remove("other")  # nothing to forget: no error, nothing else goes
    store.remove_tasks("other")
    store.delete_topic("other", "orders")
    assert store.connectors() == {"conn"}
