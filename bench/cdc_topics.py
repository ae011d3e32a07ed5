"""The topics of ``bench_cdc.py``'s readers: creating them, reading them back, comparing the
task's records with the same-bytes reader's, and the broker's own time for the task's bytes."""

from __future__ import annotations

import re
import statistics
import time
import uuid
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka import clients


def create_topics(servers: str, topics: list[str]) -> None:
    """One partition each, as Connect's topic creation makes them (the embedded broker's
    auto-created topics have several)."""
    admin = AdminClient({"bootstrap.servers": servers})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
        future.result()


def reproduce(servers: str, topics: list[str], expected: int, settings: dict[str, str]) -> float:
    """Seconds to produce the task's records again, as bytes, with the same producer
    settings: what the broker's ingest of Debezium's envelopes alone costs."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "bench-cdc-copy",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(t, 0, 0) for t in topics])
    records: list[tuple[bytes | None, bytes | None]] = []
    while len(records) < expected:
        batch = consumer.consume(10_000, 5.0)
        if not batch:
            break
        records += [(m.key(), m.value()) for m in batch if m.error() is None]
    consumer.close()
    target = f"copy{uuid.uuid4().hex[:6]}"
    create_topics(servers, [target])
    config = clients.producer_config({"bootstrap.servers": servers, **settings})
    config["delivery.report.only.error"] = True  # type: ignore[assignment]
    producer = Producer(config)
    started = time.perf_counter()
    for key, value in records:
        while True:
            try:
                producer.produce(target, value, key)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(120)
    return time.perf_counter() - started


def read_records(servers: str, topic: str, n: int) -> list[tuple[bytes | None, bytes | None]]:
    """The first ``n`` records of ``topic`` (key, value)."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "bench-cdc-read",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic, 0, 0)])
    records: list[tuple[bytes | None, bytes | None]] = []
    deadline = time.monotonic() + 30
    while len(records) < n and time.monotonic() < deadline:
        batch = consumer.consume(min(n - len(records), 10_000), 1.0)
        records += [(m.key(), m.value()) for m in batch if m.error() is None]
    consumer.close()
    return records


def first_records(servers: str, topics: list[str]) -> dict[str, tuple[bytes, bytes]]:
    """Per table, the key and value of the first record of the task's topic of it."""
    samples = {}
    for topic in topics:
        ((key, value),) = read_records(servers, topic, 1)
        assert key is not None and value is not None
        samples[topic.rsplit(".", 1)[1]] = (key, value)
    return samples


# The envelope's own processing time, at its end: the one part of a record that differs.
_PROCESSED = re.compile(rb',"ts_ms":\d+,"ts_us":\d+,"ts_ns":\d+}}$')


def compare_records(servers: str, task: Any, same: Any, n: int = 5000) -> None:
    """Prints how many of the first ``n`` records of each topic are the same bytes in the
    ``task``'s and the ``same``-bytes reader's topics (prefix and processing time aside; the
    first transaction's ``source.sequence`` differs too: it names each slot's own start)."""
    equal = total = 0
    first_difference = ""
    for task_topic, same_topic in zip(task.topics(), same.topics(), strict=True):
        ours = read_records(servers, task_topic, n)
        theirs = read_records(servers, same_topic, n)
        for (k1, v1), (k2, v2) in zip(ours, theirs, strict=False):
            total += 1
            v1 = v1 and _PROCESSED.sub(
                b"}}", v1.replace(task.prefix.encode(), same.prefix.encode())
            )
            v2 = v2 and _PROCESSED.sub(b"}}", v2)
            k1 = k1 and k1.replace(task.prefix.encode(), same.prefix.encode())
            if (k1, v1) == (k2, v2):
                equal += 1
            elif not first_difference:
                first_difference = "; first difference: " + _difference(k1 or b"", k2 or b"")
                if k1 == k2:
                    first_difference = "; first difference: " + _difference(v1 or b"", v2 or b"")
    print(f"same bytes: {equal:,} of {total:,} records equal{first_difference}", flush=True)


def _difference(ours: bytes, theirs: bytes) -> str:
    """Where two records first differ, with some context."""
    pairs = enumerate(zip(ours, theirs, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(ours), len(theirs)))
    window = slice(max(0, at - 60), at + 60)
    return f"task ...{ours[window]!r}... vs ...{theirs[window]!r}..."


def mean_bytes(servers: str, topic: str, n: int = 2000) -> float:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "bench-cdc-size",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic, 0, 0)])
    sizes: list[int] = []
    deadline = time.monotonic() + 20
    while len(sizes) < n and time.monotonic() < deadline:
        messages = consumer.consume(n - len(sizes), 1.0)
        if not messages:
            break
        for m in messages:
            if m.error() is None:
                sizes.append(len(m.key() or b"") + len(m.value() or b""))
    consumer.close()
    return statistics.mean(sizes) if sizes else float("nan")
