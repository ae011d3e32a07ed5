"""Zombie fencing (KIP-618) with the real config store and broker: the leader's round fences
the previous generation's producers, aborts their open transactions and writes the
``tasks-fencing-<c>`` record."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.exactly_once import fence_zombies, ready_to_start
from sparkcat.runtime.stores.configs import TargetState
from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
from sparkcat.runtime.tasks.exactly_once import transactional_id
from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

pytestmark = pytest.mark.broker

CONNECTOR = {"name": "c", "connector.class": "FileStreamSource", "topic": "t", "file": "f"}


@pytest.fixture
def cluster(kafka_broker: Any, unique_topic: Callable[[str], str]) -> Iterator[Any]:
    """What fencing needs of a leader: its worker config and a real config store."""
    servers = kafka_broker.bootstrap_servers
    config = DistributedConfig(
        {
            "bootstrap.servers": servers,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "config.storage.topic": unique_topic("configs"),
            "config.storage.replication.factor": "1",
            "offset.storage.topic": unique_topic("offsets"),
            "status.storage.topic": unique_topic("status"),
            "exactly.once.source.support": "enabled",
        }
    )
    store = KafkaConfigBackingStore(config.originals())
    store.start()
    leader = SimpleNamespace(config=config, configs=store, is_leader=lambda: True)
    yield leader
    store.stop()


def open_transaction(servers: str, tid: str, topic: str, value: bytes) -> Producer:
    producer = Producer({"bootstrap.servers": servers, "transactional.id": tid, "linger.ms": 0})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value)
    producer.flush(30)
    return producer


def test_new_generation_fences_the_old_one(
    cluster: Any, kafka_broker: Any, unique_topic: Callable[[str], str]
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = unique_topic("data")
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    store, group = cluster.configs, cluster.config.group_id
    store.put_connector_config("c", CONNECTOR, None)

    # Generation 1, two tasks: the first round only writes the task count (nothing to fence).
    store.put_task_configs("c", [CONNECTOR, CONNECTOR])
    assert store.snapshot().pending_fencing("c")
    # The leader runs the round itself (nothing to fence yet) and may start the tasks at once.
    assert ready_to_start(cluster, "c", "source")  # type: ignore[arg-type]
    snapshot = store.snapshot()
    assert snapshot.task_count_record("c") == 2 and not snapshot.pending_fencing("c")

    # Its tasks run, each with an open transaction; then generation 2 (one task) is committed.
    zombies = [
        open_transaction(servers, transactional_id(group, "c", n), topic, f"old-{n}".encode())
        for n in range(2)
    ]
    store.put_task_configs("c", [CONNECTOR])
    assert store.snapshot().pending_fencing("c")
    fence_zombies(cluster, "c")  # type: ignore[arg-type]

    snapshot = store.snapshot()
    assert not snapshot.pending_fencing("c") and snapshot.task_count_record("c") == 1
    view = read_topic(servers, topic)
    assert sorted(r.value for r in view.aborted) == [b"old-0", b"old-1"]
    assert view.records == [] and view.open == []
    for zombie in zombies:  # a zombie's next write is refused
        errors: list[KafkaError] = []
        zombie.produce(topic, b"late", on_delivery=lambda err, _, e=errors: e.append(err))
        zombie.flush(10)
        assert [e.code() for e in errors] == [KafkaError.PRODUCER_FENCED]
    assert read_topic(servers, topic).records == []


def test_sink_connectors_and_disabled_workers_need_no_fencing(cluster: Any) -> None:
    store = cluster.configs
    store.put_connector_config("c", CONNECTOR, None)
    store.put_task_configs("c", [CONNECTOR])
    assert ready_to_start(cluster, "c", "sink")  # type: ignore[arg-type]
    assert store.snapshot().pending_fencing("c")


def test_a_zombie_leaders_config_writes_are_fenced(cluster: Any) -> None:
    config, old = cluster.config, cluster.configs
    old.claim_write_privileges(config.transactional_producer_id)
    old.put_connector_config("a", CONNECTOR, None)
    new = KafkaConfigBackingStore(config.originals())
    new.start()
    try:
        new.claim_write_privileges(config.transactional_producer_id)  # the next leader
        with pytest.raises(ConnectError):
            old.put_connector_config("zombie", CONNECTOR, None)
        new.put_connector_config("b", CONNECTOR, None)
        old.put_target_state("b", TargetState.PAUSED)  # any worker may still write these
        new.refresh()
        snapshot = new.snapshot()
        assert snapshot.connectors() == ["a", "b"]
        assert snapshot.target_state("b") is TargetState.PAUSED
    finally:
        new.stop()
