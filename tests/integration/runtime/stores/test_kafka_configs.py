"""KafkaConfigBackingStore: the ConfigBackingStore contract, Kafka's exact records, records
written by Kafka Connect, two workers, the one-partition rule."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.runtime.stores.configs import (
    ConfigBackingStore,
    RestartRequest,
    SessionKey,
    TargetState,
)
from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore

from .conftest import create_topic, load_tests_of, raw_records

pytestmark = pytest.mark.broker

_UNIT = "unit/runtime/stores/test_configs.py"
_CONTRACT = load_tests_of(
    _UNIT,
    [
        "test_protocols_are_implemented",
        "test_connector_config_is_stored_and_started_by_default",
        "test_initial_target_state_is_written_with_the_config",
        "test_target_state_changes_are_stored_and_announced",
        "test_task_configs_apply_together",
        "test_fewer_tasks_replace_more",
        "test_zero_tasks_commit",
        "test_removing_a_connector_drops_config_state_and_tasks",
        "test_session_key_is_stored_and_announced",
        "test_restart_requests_reach_the_listener",
        "test_task_count_record_clears_pending_fencing",
        "test_snapshots_do_not_change_after_writes",
    ],
)
globals().update(_CONTRACT)
Recorder = load_tests_of(_UNIT, ["Recorder"])["Recorder"]

SOURCE = {"name": "src", "connector.class": "FileStreamSource", "tasks.max": "2"}


def _worker(worker: dict[str, str], topic: str) -> dict[str, str]:
    return {**worker, "config.storage.topic": topic, "config.storage.replication.factor": "1"}


@pytest.fixture
def listener() -> object:
    return Recorder()


@pytest.fixture
def store(
    worker: dict[str, str], unique_topic: Callable[[str], str], listener: object
) -> Iterator[ConfigBackingStore]:
    made = KafkaConfigBackingStore(_worker(worker, unique_topic("configs")))
    made.set_update_listener(listener)  # type: ignore[arg-type]
    made.start()
    yield made
    made.stop()


def _decoded(servers: str, topic: str) -> list[tuple[str, object]]:
    return [
        (key.decode() if key else "", None if value is None else orjson.loads(value))
        for _, key, value in raw_records(servers, topic)
    ]


def test_records_have_kafkas_keys_and_json_values(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("configs")
    store = KafkaConfigBackingStore(_worker(worker, topic))
    store.start()
    try:
        store.put_connector_config("src", SOURCE, TargetState.STOPPED)
        store.put_task_configs("src", [{"task.id": "0"}, {"task.id": "1"}])
        store.put_target_state("src", TargetState.PAUSED)
        store.put_target_state("src", TargetState.STARTED)
        store.put_session_key(SessionKey(b"\x01\x02secret", "HmacSHA256", 1_700_000_000_123))
        store.put_restart_request(RestartRequest("src", only_failed=True, include_tasks=False))
        store.put_task_count_record("src", 2)
        store.remove_connector_config("src")
    finally:
        store.stop()
    assert len(kafka_admin.topic_partitions(admin, topic)) == 1
    assert kafka_admin.describe_configs(admin, topic)["cleanup.policy"] == "compact"
    raw = raw_records(worker["bootstrap.servers"], topic)
    # Byte-exact values: compact JSON, fields in Kafka's schema order.
    assert [(k, v) for _, k, v in raw] == [
        (b"target-state-src", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (b"connector-src", orjson.dumps({"properties": SOURCE})),
        (b"task-src-0", b'{"properties":{"task.id":"0"}}'),
        (b"task-src-1", b'{"properties":{"task.id":"1"}}'),
        (b"commit-src", b'{"tasks":2}'),
        (b"target-state-src", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (b"target-state-src", b'{"state":"STARTED","state.v2":"STARTED"}'),
        (
            b"session-key",
            b'{"key":"' + base64.b64encode(b"\x01\x02secret") + b'","algorithm":"HmacSHA256",'
            b'"creation-timestamp":1700000000123}',
        ),
        (b"restart-connector-src", b'{"include-tasks":false,"only-failed":true}'),
        (b"tasks-fencing-src", b'{"task-count":2}'),
        (b"connector-src", None),
        (b"target-state-src", None),
    ]


def _produce(servers: str, topic: str, records: list[tuple[str, object]]) -> None:
    producer = Producer({"bootstrap.servers": servers})
    for key, value in records:
        producer.produce(
            topic, key=key.encode(), value=None if value is None else orjson.dumps(value)
        )
    producer.flush()


def test_records_written_by_kafka_connect_are_read(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    # As Kafka Connect 3.x/4.x writes them, including an older worker's target state
    # (no state.v2), a property map with a null value, and records we must skip.
    topic = unique_topic("configs")
    create_topic(admin, topic)
    secret = base64.b64encode(b"k" * 32).decode()
    _produce(
        worker["bootstrap.servers"],
        topic,
        [
            ("connector-my-conn", {"properties": {"name": "my-conn", "tasks.max": "2"}}),
            ("target-state-my-conn", {"state": "PAUSED"}),
            ("task-my-conn-0", {"properties": {"a": "0", "b": None}}),
            ("task-my-conn-1", {"properties": {"a": "1"}}),
            ("commit-my-conn", {"tasks": 2}),
            ("connector-stopped", {"properties": {"name": "stopped"}}),
            ("target-state-stopped", {"state": "PAUSED", "state.v2": "STOPPED"}),
            ("commit-ghost", {"tasks": 1}),  # no connector config: ignored
            ("session-key", {"key": secret, "algorithm": "HmacSHA256", "creation-timestamp": 7}),
            ("tasks-fencing-my-conn", {"task-count": 2}),
            ("logger-cluster-org.apache", {"level": "DEBUG"}),  # not handled here
            ("bogus-key", {"x": 1}),
            ("connector-broken", ["not", "a", "map"]),
        ],
    )
    store = KafkaConfigBackingStore(_worker(worker, topic))
    listener = Recorder()
    store.set_update_listener(listener)
    store.start()
    try:
        snapshot = store.snapshot()
        assert snapshot.connectors() == ["my-conn", "stopped"]
        assert snapshot.target_state("my-conn") is TargetState.PAUSED
        assert snapshot.target_state("stopped") is TargetState.STOPPED
        assert snapshot.all_task_configs("my-conn") == [{"a": "0", "b": None}, {"a": "1"}]
        assert snapshot.tasks("ghost") == [] and not snapshot.contains("ghost")
        assert snapshot.session_key == SessionKey(b"k" * 32, "HmacSHA256", 7)
        assert snapshot.task_count_record("my-conn") == 2
        assert not snapshot.pending_fencing("my-conn")
        assert snapshot.offset == 13
        assert listener.events == []  # records read at start-up are not announced
    finally:
        store.stop()


def test_task_configs_without_their_commit_are_not_applied(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("configs")
    create_topic(admin, topic)
    servers = worker["bootstrap.servers"]
    _produce(
        servers,
        topic,
        [
            ("connector-c", {"properties": {"name": "c"}}),
            ("task-c-0", {"properties": {"v": "1"}}),
            ("commit-c", {"tasks": 1}),
            ("task-c-0", {"properties": {"v": "2"}}),  # a leader died before the commit
        ],
    )
    store = KafkaConfigBackingStore(_worker(worker, topic))
    store.start()
    try:
        assert store.snapshot().all_task_configs("c") == [{"v": "1"}]
        # A commit that counts tasks never written (compaction) makes the connector
        # inconsistent: no tasks until a full set is committed.
        _produce(servers, topic, [("commit-c", {"tasks": 2})])
        store.refresh(30)
        snapshot = store.snapshot()
        assert snapshot.inconsistent_connectors == frozenset({"c"})
        assert snapshot.tasks("c") == []
        store.put_task_configs("c", [{"v": "a"}, {"v": "b"}])
        snapshot = store.snapshot()
        assert snapshot.inconsistent_connectors == frozenset()
        assert snapshot.all_task_configs("c") == [{"v": "a"}, {"v": "b"}]
    finally:
        store.stop()


def test_two_workers_see_each_others_writes_after_refresh(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("configs"))
    first, second = KafkaConfigBackingStore(config), KafkaConfigBackingStore(config)
    seen = Recorder()
    second.set_update_listener(seen)
    first.start()
    second.start()
    try:
        first.put_connector_config("src", SOURCE, None)
        first.put_task_configs("src", [{"t": "0"}])
        first.put_target_state("src", TargetState.PAUSED)
        second.refresh(30)
        assert second.snapshot().all_task_configs("src") == [{"t": "0"}]
        assert second.snapshot().target_state("src") is TargetState.PAUSED
        assert seen.events == [
            ("config", "src"),
            ("tasks", [("src", 0)]),
            ("target", "src"),
        ]
        assert seen.threads == {f"KafkaBasedLog-{config['config.storage.topic']}-reader"}
        second.remove_connector_config("src")
        first.refresh(30)
        assert not first.contains("src")
    finally:
        first.stop()
        second.stop()


def test_config_topic_with_two_partitions_is_refused_with_kafkas_message(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("configs")
    create_topic(admin, topic, partitions=2)
    store = KafkaConfigBackingStore(_worker(worker, topic))
    with pytest.raises(ConfigError) as caught:
        store.start()
    assert str(caught.value) == (
        f"Topic '{topic}' supplied via the 'config.storage.topic' property is required to have "
        "a single partition in order to guarantee consistency of connector configurations, "
        "but found 2 partitions."
    )


def test_task_removal_is_not_supported_as_in_kafka(store: ConfigBackingStore) -> None:
    with pytest.raises(ConnectError, match="Removal of tasks is not currently supported"):
        store.remove_task_configs("src")
