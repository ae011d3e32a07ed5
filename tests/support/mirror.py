"""Two clusters for the MirrorMaker 2 tests, and what they do to them.

The session's broker (``kafka_broker``) is cluster "A"; :func:`second_broker` starts a
second embedded broker, "B", for the module that asks for it. Records produced by
:func:`produce` are told apart by partition and sequence number (value ``v<p>-<i>``, key
``k<i>``, timestamp ``1_600_000_000_000 + i``; every fourth record has a null value, odd ones
have headers), so a byte-exact copy and a duplicate are both visible.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka.broker import EmbeddedBroker


@pytest.fixture(scope="module")
def second_broker() -> Iterator[str]:
    """Bootstrap servers of a second embedded broker, for the module's tests."""
    with EmbeddedBroker() as broker:
        yield broker.bootstrap_servers


def create(servers: str, *topics: tuple[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    for future in admin.create_topics([NewTopic(t, n, 1) for t, n in topics]).values():
        future.result(10)


def partitions(servers: str) -> dict[str, int]:
    metadata = AdminClient({"bootstrap.servers": servers}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in metadata.topics.items()}


def read_all(servers: str, topic: str, count: int, parts: int, timeout_s: float = 20) -> list[Any]:
    """At least ``count`` messages of ``topic`` when they arrive within ``timeout_s``."""
    consumer = Consumer(
        {"bootstrap.servers": servers, "group.id": "reader", "enable.auto.commit": False}
    )
    consumer.assign([KafkaTopicPartition(topic, p, 0) for p in range(parts)])
    found: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while len(found) < count and time.monotonic() < deadline:
        found += [m for m in consumer.consume(1000, timeout=0.5) if m.error() is None]
    consumer.close()
    return found


def read_to_end(servers: str, topic: str, parts: int, timeout_s: float = 30) -> list[Any]:
    """Every message of ``topic`` up to the end the fetch responses report (not ListOffsets,
    which the embedded broker answers wrongly), each partition read up to the first end it
    reaches. Nothing (and the topic is not asked for) when ``topic`` does not exist: the
    embedded broker would create it, with 4 partitions, on a consumer's request."""
    if topic not in partitions(servers):
        return []
    consumer = Consumer(
        {"bootstrap.servers": servers, "group.id": "reader", "enable.auto.commit": False,
         "enable.partition.eof": True, "fetch.wait.max.ms": 10}
    )  # fmt: skip
    consumer.assign([KafkaTopicPartition(topic, p, 0) for p in range(parts)])
    found: list[Any] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while len(at_end) < parts:
            if time.monotonic() > deadline:
                tps = [KafkaTopicPartition(topic, p) for p in range(parts)]
                where = [(tp.partition, tp.offset) for tp in consumer.position(tps)]
                marks = [consumer.get_watermark_offsets(tp, cached=True) for tp in tps]
                raise AssertionError(
                    f"could not read {topic} to its end in {timeout_s} s: read {len(found)}, "
                    f"ends of {sorted(at_end)} reached, positions {where}, watermarks {marks}"
                )
            for message in consumer.consume(10_000, timeout=0.2):
                error = message.error()
                if error is None:
                    found.append(message)
                elif error.code() == KafkaError._PARTITION_EOF:
                    # Stop there: a partition written to meanwhile would never end.
                    partition = message.partition() or 0
                    consumer.pause([KafkaTopicPartition(topic, partition)])
                    at_end.add(partition)
    finally:
        consumer.close()
    return found


def produce(servers: str, topic: str, parts: int, per_partition: int, first: int = 0) -> None:
    """Records ``first`` .. ``first + per_partition - 1`` of each partition (see the module
    docs)."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for p in range(parts):
        for i in range(first, first + per_partition):
            value = None if i % 4 == 3 else f"v{p}-{i}".encode()
            headers: list[tuple[str, str | bytes | None]] | None = (
                [("h", f"{i}".encode()), ("empty", None)] if i % 2 else None
            )
            while True:
                try:
                    producer.produce(topic, value, f"k{i}".encode(), p,
                                     timestamp=1_600_000_000_000 + i, headers=headers)  # fmt: skip
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(30) == 0


def signature(message: Any) -> tuple[Any, ...]:
    """What a byte-exact copy keeps: partition, offset, key, value, timestamp, headers."""
    return (
        message.partition(),
        message.offset(),
        message.key(),
        message.value(),
        message.timestamp()[1],
        tuple(message.headers() or ()),
    )


def content(message: Any) -> tuple[Any, ...]:
    """A record's identity whatever its offset (duplicates have the same content)."""
    return signature(message)[:1] + signature(message)[2:]


def commit(servers: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    tps = [KafkaTopicPartition(topic, p, o) for p, o in offsets.items()]
    consumer.commit(offsets=tps, asynchronous=False)
    consumer.close()


def committed(servers: str, group: str, topic: str, parts: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    found = consumer.committed([KafkaTopicPartition(topic, p) for p in range(parts)], timeout=10)
    consumer.close()
    return [tp.offset for tp in found]


__all__ = [
    "commit",
    "committed",
    "content",
    "create",
    "partitions",
    "produce",
    "read_all",
    "read_to_end",
    "second_broker",
    "signature",
]
