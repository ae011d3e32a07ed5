"""Config stores: the ConfigBackingStore contract (memory here; Kafka in integration), and
ClusterConfigState."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from sparkcat.runtime.stores.configs import (
    ClusterConfigState,
    ConfigBackingStore,
    ConfigUpdateListener,
    ConnectorTaskId,
    MemoryConfigBackingStore,
    RestartRequest,
    SessionKey,
    TargetState,
)

SOURCE = {"name": "src", "connector.class": "FileStreamSource", "tasks.max": "2"}


class Recorder:
    """A ConfigUpdateListener that records every callback as a tuple."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.threads: set[str] = set()

    def _record(self, *event: Any) -> None:
        self.events.append(event)
        self.threads.add(threading.current_thread().name)

    def on_connector_config_update(self, connector: str) -> None:
        self._record("config", connector)

    def on_connector_config_remove(self, connector: str) -> None:
        self._record("remove", connector)

    def on_task_config_update(self, tasks: Sequence[ConnectorTaskId]) -> None:
        self._record("tasks", sorted(tasks))

    def on_connector_target_state_change(self, connector: str) -> None:
        self._record("target", connector)

    def on_session_key_update(self, key: SessionKey) -> None:
        self._record("session-key", key)

    def on_restart_request(self, request: RestartRequest) -> None:
        self._record("restart", request)

    def on_task_count_record(self, connector: str, task_count: int) -> None:
        self._record("task-count", connector, task_count)


@pytest.fixture
def listener() -> Recorder:
    return Recorder()


@pytest.fixture
def store(listener: Recorder) -> Iterator[ConfigBackingStore]:
    made = MemoryConfigBackingStore()
    made.set_update_listener(listener)
    made.start()
    yield made
    made.stop()


# -- the contract -------------------------------------------------------------------------


def test_protocols_are_implemented(store: ConfigBackingStore, listener: Recorder) -> None:
    assert isinstance(store, ConfigBackingStore)
    assert isinstance(listener, ConfigUpdateListener)


def test_connector_config_is_stored_and_started_by_default(
    store: ConfigBackingStore, listener: Recorder
) -> None:
    assert not store.contains("src")
    store.put_connector_config("src", SOURCE, None)
    snapshot = store.snapshot()
    assert store.contains("src") and snapshot.contains("src")
    assert snapshot.connectors() == ["src"]
    assert snapshot.connector_config("src") == SOURCE
    assert snapshot.target_state("src") is TargetState.STARTED
    assert snapshot.tasks("src") == []
    assert listener.events == [("config", "src")]


def test_initial_target_state_is_written_with_the_config(store: ConfigBackingStore) -> None:
    store.put_connector_config("src", SOURCE, TargetState.STOPPED)
    assert store.snapshot().target_state("src") is TargetState.STOPPED
    store.put_connector_config("src", {**SOURCE, "tasks.max": "1"}, None)
    snapshot = store.snapshot()
    assert snapshot.target_state("src") is TargetState.STOPPED
    assert snapshot.connector_config("src") == {**SOURCE, "tasks.max": "1"}


def test_target_state_changes_are_stored_and_announced(
    store: ConfigBackingStore, listener: Recorder
) -> None:
    store.put_connector_config("src", SOURCE, None)
    for state in (TargetState.PAUSED, TargetState.STOPPED, TargetState.STARTED):
        store.put_target_state("src", state)
        assert store.snapshot().target_state("src") is state
    assert listener.events == [("config", "src")] + [("target", "src")] * 3


def test_task_configs_apply_together(store: ConfigBackingStore, listener: Recorder) -> None:
    store.put_connector_config("src", SOURCE, None)
    store.put_task_configs("src", [{"task": "0"}, {"task": "1"}])
    snapshot = store.snapshot()
    assert snapshot.tasks("src") == [("src", 0), ("src", 1)]
    assert snapshot.task_count("src") == 2
    assert snapshot.task_config(("src", 1)) == {"task": "1"}
    assert snapshot.all_task_configs("src") == [{"task": "0"}, {"task": "1"}]
    assert snapshot.inconsistent_connectors == frozenset()
    assert snapshot.task_config_generation("src") == 0
    assert listener.events[-1] == ("tasks", [("src", 0), ("src", 1)])


def test_fewer_tasks_replace_more(store: ConfigBackingStore) -> None:
    store.put_connector_config("src", SOURCE, None)
    store.put_task_configs("src", [{"task": "0"}, {"task": "1"}])
    store.put_task_configs("src", [{"task": "only"}])
    snapshot = store.snapshot()
    assert snapshot.tasks("src") == [("src", 0)]
    assert snapshot.all_task_configs("src") == [{"task": "only"}]
    assert snapshot.task_config_generation("src") == 1


def test_zero_tasks_commit(store: ConfigBackingStore) -> None:
    store.put_connector_config("src", SOURCE, None)
    store.put_task_configs("src", [])
    assert store.snapshot().tasks("src") == []
    assert store.snapshot().task_count("src") == 0


def test_removing_a_connector_drops_config_state_and_tasks(
    store: ConfigBackingStore, listener: Recorder
) -> None:
    store.put_connector_config("src", SOURCE, TargetState.PAUSED)
    store.put_task_configs("src", [{"task": "0"}])
    store.remove_connector_config("src")
    snapshot = store.snapshot()
    assert not store.contains("src")
    assert snapshot.connectors() == []
    assert snapshot.target_state("src") is None
    assert snapshot.tasks("src") == [] and snapshot.task_config(("src", 0)) is None
    assert listener.events[-1] == ("remove", "src")


def test_session_key_is_stored_and_announced(store: ConfigBackingStore, listener: Recorder) -> None:
    key = SessionKey(bytes(range(32)), "HmacSHA256", 1_700_000_000_123)
    store.put_session_key(key)
    assert store.snapshot().session_key == key
    assert listener.events == [("session-key", key)]
    assert "\\x00" not in repr(key)  # the secret stays out of logs


def test_restart_requests_reach_the_listener(store: ConfigBackingStore, listener: Recorder) -> None:
    store.put_connector_config("src", SOURCE, None)
    request = RestartRequest("src", only_failed=True, include_tasks=True)
    store.put_restart_request(request)
    assert listener.events[-1] == ("restart", request)


def test_task_count_record_clears_pending_fencing(
    store: ConfigBackingStore, listener: Recorder
) -> None:
    store.put_connector_config("src", SOURCE, None)
    store.put_task_count_record("src", 3)
    snapshot = store.snapshot()
    assert snapshot.task_count_record("src") == 3
    assert not snapshot.pending_fencing("src")
    assert listener.events[-1] == ("task-count", "src", 3)


def test_snapshots_do_not_change_after_writes(store: ConfigBackingStore) -> None:
    store.put_connector_config("src", SOURCE, None)
    before = store.snapshot()
    store.put_connector_config("other", SOURCE, None)
    store.put_target_state("src", TargetState.PAUSED)
    assert before.connectors() == ["src"]
    assert before.target_state("src") is TargetState.STARTED


# -- memory store specifics -----------------------------------------------------------------


def test_memory_store_removes_task_configs(listener: Recorder) -> None:
    store = MemoryConfigBackingStore()
    store.set_update_listener(listener)
    store.put_connector_config("src", SOURCE, None)
    store.put_task_configs("src", [{"task": "0"}])
    store.remove_task_configs("src")
    assert store.snapshot().tasks("src") == []
    assert listener.events[-1] == ("tasks", [("src", 0)])


# -- ClusterConfigState -----------------------------------------------------------------------


def test_inconsistent_connector_has_no_tasks() -> None:
    state = ClusterConfigState(
        connector_task_counts={"c": 2},
        connector_configs={"c": {"name": "c"}},
        task_configs={("c", 0): {"t": "0"}},
        inconsistent_connectors=frozenset({"c"}),
    )
    assert state.tasks("c") == [] and state.all_task_configs("c") == []
    assert state.task_count("c") == 2


def test_empty_state() -> None:
    state = ClusterConfigState()
    assert state.offset == -1 and state.session_key is None
    assert state.connectors() == [] and state.connector_config("x") is None
