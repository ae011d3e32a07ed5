"""KafkaStatusBackingStore: the status store contract, Kafka's exact records, Kafka's
generation rules, topic statuses, two workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConfigError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore, TopicStatus
from sparkcat.runtime.stores.statuses import ConnectorStatus, State, TaskStatus

from .conftest import create_topic, load_tests_of, raw_records

pytestmark = pytest.mark.broker

_CONTRACT = load_tests_of(
    "unit/runtime/stores/test_statuses.py",
    [
        "test_connector_status_is_stored",
        "test_failed_status_keeps_its_trace",
        "test_task_statuses_are_listed_by_task_id",
        "test_put_safe_keeps_a_newer_generation_of_another_worker",
        "test_put_task_safe_keeps_a_newer_generation_of_another_worker",
        "test_remove_tasks_keeps_lower_ids",
        "test_remove_forgets_the_connector_and_its_tasks",
        "test_topic_statuses_are_listed_by_topic_and_deleted_one_by_one",
        "test_a_destroyed_status_is_not_kept",
        "test_reads_of_an_unknown_connector_find_nothing",
    ],
)
globals().update(_CONTRACT)


def _worker(worker: dict[str, str], topic: str) -> dict[str, str]:
    return {
        **worker,
        "status.storage.topic": topic,
        "status.storage.partitions": "5",
        "status.storage.replication.factor": "1",
    }


@pytest.fixture
def store(worker: dict[str, str], unique_topic: Callable[[str], str]) -> Iterator[Any]:
    made = KafkaStatusBackingStore(_worker(worker, unique_topic("status")))
    made.start()
    yield made
    made.stop()


def test_records_have_kafkas_keys_and_json_values(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("status")
    store = KafkaStatusBackingStore(_worker(worker, topic))
    store.start()
    try:
        store.put(ConnectorStatus("my-conn", State.RUNNING, "10.0.0.1:8083", 5))
        store.put_task(TaskStatus("my-conn", 0, State.FAILED, "10.0.0.2:8083", 5, "Trace\n\tat x"))
        store.put_topic(TopicStatus("orders", "my-conn", 0, 1_700_000_000_123))
        store.put_task(TaskStatus("my-conn", 1, State.DESTROYED, "10.0.0.2:8083", 6))
        store.delete_topic("my-conn", "old-topic")
        store.remove("gone")
        store.flush()
    finally:
        store.stop()
    assert len(kafka_admin.topic_partitions(admin, topic)) == 5
    assert kafka_admin.describe_configs(admin, topic)["cleanup.policy"] == "compact"
    records = {key: value for _, key, value in raw_records(worker["bootstrap.servers"], topic)}
    assert records == {
        b"status-connector-my-conn": (
            b'{"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":5}'
        ),
        b"status-task-my-conn-0": (
            b'{"state":"FAILED","trace":"Trace\\n\\tat x","worker_id":"10.0.0.2:8083",'
            b'"generation":5}'
        ),
        b"status-topic-orders:connector-my-conn": (
            b'{"topic":{"name":"orders","connector":"my-conn","task":0,'
            b'"discoverTimestamp":1700000000123}}'
        ),
        b"status-task-my-conn-1": None,
        b"status-topic-old-topic:connector-my-conn": None,
        b"status-connector-gone": None,
    }


def test_statuses_written_by_kafka_connect_are_read(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("status")
    create_topic(admin, topic, partitions=5)
    producer = Producer({"bootstrap.servers": worker["bootstrap.servers"]})
    for key, value in [
        (
            "status-connector-a-b",
            {"state": "RUNNING", "trace": None, "worker_id": "h:1", "generation": 2},
        ),
        (
            "status-task-a-b-3",
            {"state": "PAUSED", "trace": None, "worker_id": "h:2", "generation": 2},
        ),
        (
            "status-task-x-0",
            {"state": "RUNNING", "trace": None, "worker_id": "h:2", "generation": 1},
        ),
        ("status-task-x-0", None),
        (
            "status-topic-t.1:connector-a-b",
            {"topic": {"name": "t.1", "connector": "a-b", "task": 3, "discoverTimestamp": 9}},
        ),
        (
            "status-task-a-b-4",
            {"state": "FAILED", "trace": "org.x.Boom\n\tat y", "worker_id": "h:2", "generation": 3},
        ),
        ("status-task-bad", {"state": "RUNNING"}),
        ("something-else", {"x": 1}),
    ]:
        producer.produce(
            topic, key=key.encode(), value=None if value is None else orjson.dumps(value)
        )
    producer.flush()
    store = KafkaStatusBackingStore(_worker(worker, topic))
    store.start()
    try:
        assert store.get("a-b") == ConnectorStatus("a-b", State.RUNNING, "h:1", 2)
        assert store.get_all("a-b") == [
            TaskStatus("a-b", 3, State.PAUSED, "h:2", 2),
            TaskStatus("a-b", 4, State.FAILED, "h:2", 3, "org.x.Boom\n\tat y"),
        ]
        assert store.get_all("x") == []
        assert store.get_all_topics("a-b") == [TopicStatus("t.1", "a-b", 3, 9)]
        assert store.connectors() == {"a-b"}
    finally:
        store.stop()


def test_two_workers_see_each_others_statuses_after_read_to_end(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("status"))
    first, second = KafkaStatusBackingStore(config), KafkaStatusBackingStore(config)
    first.start()
    second.start()
    try:
        first.put(ConnectorStatus("c", State.RUNNING, "w1:8083", 1))
        second.put_task(TaskStatus("c", 0, State.RUNNING, "w2:8083", 1))
        second.put_topic(TopicStatus("in", "c", 0, 5))
        first.flush()
        second.flush()
        first.read_to_end()
        second.read_to_end()
        for store in (first, second):
            assert store.get("c") == ConnectorStatus("c", State.RUNNING, "w1:8083", 1)
            assert store.get_all("c") == [TaskStatus("c", 0, State.RUNNING, "w2:8083", 1)]
            assert store.get_topic("c", "in") == TopicStatus("in", "c", 0, 5)
        second.remove("c")
        second.delete_topic("c", "in")
        second.flush()
        first.read_to_end()
        assert first.get("c") is None and first.get_all("c") == []
        assert first.get_all_topics("c") == []
    finally:
        first.stop()
        second.stop()


def test_a_stale_unassigned_task_status_read_from_the_topic_is_ignored(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("status"))
    runner, laggard = KafkaStatusBackingStore(config), KafkaStatusBackingStore(config)
    runner.start()
    laggard.start()
    try:
        runner.put_task(TaskStatus("c", 0, State.RUNNING, "w1:8083", 4))
        runner.flush()
        # A worker that had not read the RUNNING status reports UNASSIGNED for gen 4.
        laggard.put_task(TaskStatus("c", 0, State.UNASSIGNED, "w2:8083", 4))
        laggard.flush()
        runner.read_to_end()
        assert runner.get_task("c", 0) == TaskStatus("c", 0, State.RUNNING, "w1:8083", 4)
        laggard.put_task(TaskStatus("c", 0, State.UNASSIGNED, "w2:8083", 5))
        laggard.flush()
        runner.read_to_end()
        assert runner.get_task("c", 0) == TaskStatus("c", 0, State.UNASSIGNED, "w2:8083", 5)
    finally:
        runner.stop()
        laggard.stop()


def test_put_safe_lets_the_same_worker_overwrite_an_older_generation(store: Any) -> None:
    # Kafka's canWriteSafely: the worker that wrote the status may always replace it.
    store.put(ConnectorStatus("c", State.RUNNING, "w1:8083", 5))
    store.put_safe(ConnectorStatus("c", State.UNASSIGNED, "w1:8083", 4))
    assert store.get("c") == ConnectorStatus("c", State.UNASSIGNED, "w1:8083", 4)


def test_destroyed_status_is_a_tombstone(store: Any) -> None:
    store.put(ConnectorStatus("c", State.RUNNING, "w1:8083", 1))
    store.put(ConnectorStatus("c", State.DESTROYED, "w1:8083", 1))
    assert store.get("c") is None
    store.flush()
    store.read_to_end()
    assert store.get("c") is None


def test_a_restarted_store_reads_back_the_statuses(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("status"))
    first = KafkaStatusBackingStore(config)
    first.start()
    for task in range(10):
        first.put_task(TaskStatus("c", task, State.RUNNING, "w1:8083", 2))
    first.remove_tasks("c", keep_below=8)
    first.stop()
    second = KafkaStatusBackingStore(config)
    second.start()
    try:
        assert [s.task for s in second.get_all("c")] == list(range(8))
    finally:
        second.stop()


def test_missing_topic_name_is_refused(worker: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"Must specify topic for connector status\."):
        KafkaStatusBackingStore(worker)
