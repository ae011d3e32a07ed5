"""Fixtures of the Kafka-topic store tests: a worker config on the session's broker."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.kafka import admin as kafka_admin


@pytest.fixture
def worker(kafka_broker: Any) -> dict[str, str]:
    """The smallest worker config the stores need: where the broker is."""
    return {"bootstrap.servers": kafka_broker.bootstrap_servers}


@pytest.fixture
def admin(worker: dict[str, str]) -> Iterator[AdminClient]:
    yield AdminClient({"bootstrap.servers": worker["bootstrap.servers"]})


def create_topic(admin: AdminClient, topic: str, partitions: int = 1) -> None:
    """Create ``topic`` compacted, as a user (or Kafka Connect) would have."""
    spec = kafka_admin.TopicSpec(topic, partitions, 1, {"cleanup.policy": "compact"})
    kafka_admin.ensure_topics(admin, [spec])


def raw_records(servers: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record of ``topic`` as ``(partition, key, value)``, read with a plain consumer."""
    probe = {"bootstrap.servers": servers}
    admin = AdminClient(probe)
    partitions = kafka_admin.topic_partitions(admin, topic)
    ends = kafka_admin.end_offsets(probe, [(tp.topic, tp.partition) for tp in partitions])
    consumer = Consumer({**probe, "group.id": "raw-reader", "enable.auto.commit": "false"})
    consumer.assign([TopicPartition(topic, tp.partition, 0) for tp in partitions])
    records: list[tuple[int, int, bytes | None, bytes | None]] = []
    try:
        want = sum(ends.values())
        deadline = time.monotonic() + 30
        while len(records) < want and time.monotonic() < deadline:
            # consume(n, timeout) waits the whole timeout unless n records arrive.
            for message in consumer.consume(1000, timeout=0.05):
                if message.error() is None:
                    records.append(
                        (
                            message.partition() or 0,
                            message.offset() or 0,
                            message.key(),
                            message.value(),
                        )
                    )
    finally:
        consumer.close()
    records.sort(key=lambda r: (r[0], r[1]))
    return [(p, k, v) for p, _, k, v in records]


def load_tests_of(path: str, names: list[str]) -> dict[str, Any]:
    """The test functions ``names`` of the unit-test module at ``path`` (relative to tests/).

    The contract tests of a store kind live once, with the memory store's tests; a Kafka
    store's module re-binds them to its own ``store`` fixture by importing them from here.
    """
    import importlib.util
    from pathlib import Path

    file = Path(__file__).parents[3] / path
    spec = importlib.util.spec_from_file_location(f"_contract_{file.stem}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: getattr(module, name) for name in names}


def java_murmur2(key: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (signed 32-bit), written out from the published algorithm."""
    m, r, seed = 0x5BD1E995, 24, 0x9747B28C
    length = len(key)
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(length // 4):
        k = int.from_bytes(key[4 * i : 4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length % 4
    base = length - tail
    if tail == 3:
        h ^= key[base + 2] << 16
    if tail >= 2:
        h ^= key[base + 1] << 8
    if tail >= 1:
        h ^= key[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def java_murmur2_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's Java producer picks for a keyed record: ``toPositive(murmur2)``
    modulo the partition count."""
    return (java_murmur2(key) & 0x7FFFFFFF) % partitions
