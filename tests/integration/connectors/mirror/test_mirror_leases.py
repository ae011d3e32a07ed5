"""MirrorMaker 2 connectors between two real brokers, tasks run as leases (no Spark)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from tests.support.mirror import (
    commit,
    committed,
    create,
    partitions,
    produce,
    read_all,
    read_to_end,
    signature,
)

from sparkcat.api.connector import ConnectorContext
from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror import (
    MirrorCheckpointConnector,
    MirrorHeartbeatConnector,
    MirrorSourceConnector,
)
from sparkcat.connectors.mirror.client import translate_offsets
from sparkcat.connectors.mirror.formats import Checkpoint, Heartbeat, OffsetSync
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
PACKAGE = "org.apache.kafka.connect.mirror."


class Context(ConnectorContext):
    """Counts reconfiguration requests, as the herder would act on them."""

    def __init__(self) -> None:
        self.reconfigurations = threading.Event()

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations.set()

    def raise_error(self, exc: BaseException) -> None:
        raise AssertionError(f"connector failed: {exc}")


def flow(a: str, b: str, **extra: str) -> dict[str, str]:
    return {
        "name": "MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "refresh.topics.enabled": "false",
        "refresh.groups.enabled": "false",
        # Other tests' MirrorMakers write heartbeats to the session's broker: not ours to count.
        "heartbeats.replication.enabled": "false",
        **extra,
    }


def started(connector: Any, config: dict[str, str]) -> Any:
    context = Context()
    connector.initialize(context)
    connector.start(config)
    connector.test_context = context
    return connector


def lease(servers: str, task: str, task_config: dict[str, str], max_ms: int = 4000) -> LeaseResult:
    result = run_lease(
        LeaseSpec(
            connector=task_config.get("name", "mm2"),
            task=0,
            generation=1,
            kind="source",
            task_config={**task_config, "task.class": PACKAGE + task},
            connector_config={},
            worker_config={
                "bootstrap.servers": servers,
                "key.converter": BYTES,
                "value.converter": BYTES,
                "header.converter": BYTES,
            },
            max_ms=max_ms,
            max_records=1_000_000,
            control=None,
        )
    )
    assert result.trace is None, result.trace
    return result


def test_records_are_mirrored_byte_exact_into_the_same_partitions(
    kafka_broker: Any, second_broker: str, unique_topic: Any
) -> None:
    a, b = str(kafka_broker), second_broker
    topic, skipped = unique_topic("orders"), unique_topic("skipped")
    create(a, (topic, 3), (skipped, 1))
    produce(a, topic, 3, 20)
    produce(a, skipped, 1, 5)
    config = flow(a, b, topics=f"{topic}, {skipped}", **{"topics.exclude": skipped})
    connector = started(MirrorSourceConnector(), config)
    assert partitions(b)[f"A.{topic}"] == 3
    assert f"A.{skipped}" not in partitions(b)
    (task_config,) = connector.task_configs(1)
    result = lease(b, "MirrorSourceTask", task_config)
    connector.stop()
    assert result.records == 60
    mirrored = read_all(b, f"A.{topic}", 60, 3)
    original = read_all(a, topic, 60, 3)
    assert sorted(map(signature, mirrored)) == sorted(map(signature, original))
    offsets = {tuple(p.values()): o for p, o in result.source_offsets}
    assert offsets[("A", 0, topic)] == {"offset": 19}
    syncs = read_to_end(a, "mm2-offset-syncs.B.internal", 1)
    decoded = [OffsetSync.deserialize(m.key(), m.value()) for m in syncs]
    assert OffsetSync(TopicPartition(topic, 0), 0, 0) in decoded


@pytest.mark.parametrize("location", ["source", "target"])
def test_offset_syncs_follow_offset_lag_max_in_kafkas_format(
    kafka_broker: Any, second_broker: str, unique_topic: Any, location: str
) -> None:
    a, b = str(kafka_broker), second_broker
    topic, other = unique_topic("synced"), unique_topic("also")
    create(a, (topic, 2), (other, 1))
    produce(a, topic, 2, 40)
    produce(a, other, 1, 3)
    settings = {"topics": f"{topic},{other}", "offset.lag.max": "10",
                "offset-syncs.topic.location": location}  # fmt: skip
    connector = started(MirrorSourceConnector(), flow(a, b, **settings))
    (task_config,) = connector.task_configs(1)
    result = lease(b, "MirrorSourceTask", task_config)
    connector.stop()
    assert result.records == 83
    # Kafka names the topic after the other cluster: B's on the source, A's on the target.
    syncs_on, other_alias = (a, "B") if location == "source" else (b, "A")
    syncs = [
        OffsetSync.deserialize(m.key(), m.value())
        for m in read_to_end(syncs_on, f"mm2-offset-syncs.{other_alias}.internal", 1)
    ]
    # Kafka's rule: the first record, then each record offset.lag.max past the last sync
    # + 1; the last record of each partition when the task commits.
    for partition in (0, 1):
        assert [
            (s.upstream_offset, s.downstream_offset)
            for s in syncs
            if s.topic_partition == TopicPartition(topic, partition)
        ] == [(0, 0), (11, 11), (22, 22), (33, 33), (39, 39)]
    assert [
        (s.upstream_offset, s.downstream_offset)
        for s in syncs
        if s.topic_partition == TopicPartition(other, 0)
    ] == [(0, 0), (2, 2)]


def test_checkpoints_translate_a_groups_offsets_and_sync_them(
    kafka_broker: Any, second_broker: str, unique_topic: Any
) -> None:
    a, b = str(kafka_broker), second_broker
    topic = unique_topic("clicks")
    group = unique_topic("app")
    create(a, (topic, 2))
    produce(a, topic, 2, 40)
    common = {"topics": topic, "offset.lag.max": "0", "groups": group}
    source = started(MirrorSourceConnector(), flow(a, b, **common))
    lease(b, "MirrorSourceTask", source.task_configs(1)[0])
    source.stop()
    commit(a, group, topic, {0: 30, 1: 40})
    settings = flow(
        a,
        b,
        **common,
        name="MirrorCheckpointConnector",
        **{"emit.checkpoints.interval.seconds": "1", "sync.group.offsets.enabled": "true"},
    )
    checkpoints = started(MirrorCheckpointConnector(), settings)
    (task_config,) = checkpoints.task_configs(4)
    assert task_config["task.assigned.groups"] == group
    lease(b, "MirrorCheckpointTask", task_config, max_ms=5000)
    checkpoints.stop()
    records = read_all(b, "A.checkpoints.internal", 2, 1)
    decoded = {
        c.topic_partition: c
        for c in (Checkpoint.deserialize(m.key(), m.value()) for m in records)
        if c.consumer_group_id == group
    }
    remote = f"A.{topic}"
    assert decoded[TopicPartition(remote, 0)].upstream_offset == 30
    assert decoded[TopicPartition(remote, 0)].downstream_offset == 30
    assert decoded[TopicPartition(remote, 1)].downstream_offset == 40
    assert translate_offsets({"bootstrap.servers": b}, "A", group) == {
        TopicPartition(remote, 0): 30,
        TopicPartition(remote, 1): 40,
    }
    consumer = Consumer({"bootstrap.servers": b, "group.id": group})
    committed = consumer.committed([KafkaTopicPartition(remote, 0), KafkaTopicPartition(remote, 1)])
    consumer.close()
    assert [tp.offset for tp in committed] == [30, 40]


def test_group_offsets_are_synced_to_idle_groups_only(
    kafka_broker: Any, second_broker: str, unique_topic: Any, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = str(kafka_broker), second_broker
    topic, idle, busy = unique_topic("views"), unique_topic("idle"), unique_topic("busy")
    remote = f"A.{topic}"
    create(a, (topic, 1))
    produce(a, topic, 1, 30)
    common = {"topics": topic, "offset.lag.max": "0", "groups": f"{idle}, {busy}"}
    source = started(MirrorSourceConnector(), flow(a, b, **common))
    lease(b, "MirrorSourceTask", source.task_configs(1)[0])
    source.stop()
    commit(a, idle, topic, {0: 20})
    commit(a, busy, topic, {0: 25})
    # A consumer of the busy group on B, reading from 5 and committing nothing: a sync would
    # move its position under it.
    consumer = Consumer({"bootstrap.servers": b, "group.id": busy, "session.timeout.ms": 6000,
                         "enable.auto.commit": False})  # fmt: skip
    assigned, stop = threading.Event(), threading.Event()

    def on_assign(c: Any, tps: list[Any]) -> None:
        c.assign([KafkaTopicPartition(tp.topic, tp.partition, 5) for tp in tps])
        assigned.set()

    def keep_polling() -> None:  # the only thread using the consumer: it stays a member
        consumer.subscribe([remote], on_assign=on_assign)
        while not stop.is_set():
            consumer.poll(0.2)
        consumer.close()

    polling = threading.Thread(target=keep_polling)
    polling.start()
    try:
        assert assigned.wait(30), "the busy group never became active on B"
        settings = flow(
            a, b, **common, name="MirrorCheckpointConnector",
            **{"emit.checkpoints.interval.seconds": "1", "sync.group.offsets.enabled": "true"},
        )  # fmt: skip
        checkpoints = started(MirrorCheckpointConnector(), settings)
        with caplog.at_level(logging.INFO, "sparkcat.connectors.mirror"):
            lease(b, "MirrorCheckpointTask", checkpoints.task_configs(1)[0], max_ms=5000)
        checkpoints.stop()
    finally:
        stop.set()
        polling.join(10)
    assert committed(b, idle, remote, 1) == [20]
    assert committed(b, busy, remote, 1) == [-1001]  # nothing committed: left alone
    # Not even tried: not every broker refuses offsets for a group with members.
    assert f"Not syncing the offsets of group {busy}: it is STABLE" in caplog.text
    assert f"Synced offsets of group {idle}" in caplog.text
    assert busy not in caplog.text.replace(f"Not syncing the offsets of group {busy}", "")
    assert translate_offsets({"bootstrap.servers": b}, "A", busy)[TopicPartition(remote, 0)] == 25


def test_heartbeats(kafka_broker: Any, second_broker: str) -> None:
    a, b = str(kafka_broker), second_broker
    settings = flow(a, b, name="MirrorHeartbeatConnector")
    connector = started(MirrorHeartbeatConnector(), settings)
    (task_config,) = connector.task_configs(1)
    result = lease(b, "MirrorHeartbeatTask", task_config, max_ms=2500)
    assert result.records >= 2
    beats = [Heartbeat.deserialize(m.key(), m.value()) for m in read_all(b, "heartbeats", 2, 1)]
    assert {(h.source_cluster_alias, h.target_cluster_alias) for h in beats} == {("A", "B")}
    assert all(h.timestamp > 1_700_000_000_000 for h in beats)


def test_no_cycles_and_new_topics_are_picked_up(
    kafka_broker: Any, second_broker: str, unique_topic: Any
) -> None:
    a, b = str(kafka_broker), second_broker
    local, came_from_a = unique_topic("local"), f"A.{unique_topic('remote')}"
    create(b, (local, 1), (came_from_a, 1))
    back = flow(b, a, **{"source.cluster.alias": "B", "target.cluster.alias": "A"})
    back.update(topics=f"{local}, {came_from_a}, later-.*", **{"refresh.topics.enabled": "true"})
    back["heartbeats.replication.enabled"] = "true"
    back["refresh.topics.interval.seconds"] = "1"
    connector = started(MirrorSourceConnector(), back)
    (task_config,) = connector.task_configs(1)
    # Heartbeats are replicated whatever the topic filter says (heartbeats.replication.enabled).
    assert set(task_config["task.assigned.partitions"].split(",")) - {"heartbeats-0"} == {
        f"{local}-0"
    }
    later = "later-" + unique_topic("t")
    create(b, (later, 2))
    assert connector.test_context.reconfigurations.wait(10)
    (task_config,) = connector.task_configs(1)
    connector.stop()
    assigned = set(task_config["task.assigned.partitions"].split(",")) - {"heartbeats-0"}
    assert assigned == {f"{local}-0", f"{later}-0", f"{later}-1"}
    assert partitions(a)[f"B.{later}"] == 2
    assert f"B.{came_from_a}" not in partitions(a)


def test_identity_policy_keeps_topic_names(
    kafka_broker: Any, second_broker: str, unique_topic: Any
) -> None:
    a, b = str(kafka_broker), second_broker
    topic = unique_topic("same")
    create(a, (topic, 2))
    produce(a, topic, 2, 5)
    policy = {"replication.policy.class": PACKAGE + "IdentityReplicationPolicy", "topics": topic}
    connector = started(MirrorSourceConnector(), flow(a, b, **policy))
    result = lease(b, "MirrorSourceTask", connector.task_configs(2)[0])
    connector.stop()
    assert partitions(b)[topic] == 2
    assert result.records == 5
    assert len(read_all(b, topic, 5, 2)) == 5
