"""The committed reader, proven on deliberately aborted and open transactions first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

pytestmark = pytest.mark.broker


def create_topic(servers: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def transactional(servers: str, transactional_id: str) -> Producer:
    producer = Producer(
        {"bootstrap.servers": servers, "transactional.id": transactional_id, "linger.ms": 0}
    )
    producer.init_transactions(30)
    return producer


def consume_all(servers: str, topic: str, partitions: int, expected: int) -> list[bytes]:
    """What a ``read_committed`` librdkafka consumer returns."""
    consumer = Consumer(
        {
            "bootstrap.servers": servers,
            "group.id": "unused",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    consumer.assign([KafkaTopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    eof: set[int] = set()
    try:
        while len(eof) < partitions or len(values) < expected:
            message = consumer.poll(5)
            if message is None:
                break
            if message.error():
                eof.add(message.partition())
                continue
            values.append(message.value())
    finally:
        consumer.close()
    return values


def test_drops_aborted_and_open_transactions(
    servers: str, unique_topic: Callable[[str], str], kafka_broker: Any
) -> None:
    topic = unique_topic("committed")
    create_topic(servers, topic, 2)
    plain = Producer({"bootstrap.servers": servers})
    plain.produce(topic, b"plain-0", partition=0)
    plain.flush(30)
    a = transactional(servers, f"{topic}-a")
    a.begin_transaction()
    a.produce(topic, b"a1", partition=0)
    a.produce(topic, b"a2", partition=0)
    a.commit_transaction(30)
    b = transactional(servers, f"{topic}-b")
    b.begin_transaction()
    b.produce(topic, b"b1", partition=0)
    b.produce(topic, b"b2", partition=1)
    b.flush(30)
    b.abort_transaction(30)
    a.begin_transaction()
    a.produce(topic, b"a3", partition=0)
    a.produce(topic, b"a4", partition=1)
    a.commit_transaction(30)
    c = transactional(servers, f"{topic}-c")
    c.begin_transaction()
    c.produce(topic, b"c1", partition=1)
    c.flush(30)  # left open: not committed

    view = read_topic(servers, topic)

    assert view.values(0) == [b"plain-0", b"a1", b"a2", b"a3"]
    assert view.values(1) == [b"a4"]
    assert sorted(r.value for r in view.aborted) == [b"b1", b"b2"]
    assert [r.value for r in view.open] == [b"c1"]
    assert (view.commit_markers, view.abort_markers) == (3, 2)  # markers per partition
    assert {r.producer_id for r in view.records if r.transactional} == {
        r.producer_id for r in view.records if r.value == b"a1"
    }
    if kafka_broker.embedded:
        # Why the reader exists: this broker shows aborted records to read_committed readers.
        assert b"b1" in consume_all(servers, topic, 2, expected=6)
    c.abort_transaction(30)


def test_fenced_transaction_reads_as_aborted(
    servers: str, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("fenced")
    create_topic(servers, topic, 1)
    old = transactional(servers, f"{topic}-t")
    old.begin_transaction()
    old.produce(topic, b"zombie")
    old.flush(30)
    new = transactional(servers, f"{topic}-t")  # fences ``old``, aborts its transaction
    new.begin_transaction()
    new.produce(topic, b"fresh")
    new.commit_transaction(30)

    view = read_topic(servers, topic)

    assert view.values() == [b"fresh"]
    assert [r.value for r in view.aborted] == [b"zombie"]
    assert view.open == []
