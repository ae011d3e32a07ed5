"""KafkaBasedLog against the session's broker: topic creation, ordering, read to end."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConnectError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.kafka.clients import admin_config, consumer_config, producer_config
from sparkcat.runtime.stores.kafka_log import KafkaBasedLog, LogRecord

from .conftest import create_topic, java_murmur2, java_murmur2_partition

pytestmark = pytest.mark.broker


def _log(
    worker: dict[str, str], topic: str, sink: list[LogRecord], partitions: int = 1
) -> KafkaBasedLog:
    return KafkaBasedLog(
        topic,
        producer_config(worker),
        consumer_config(worker),
        admin_config(worker),
        sink.append,
        partitions=partitions,
        replication_factor=1,
    )


def test_start_creates_a_compacted_topic_with_the_given_partitions(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    log = _log(worker, topic, [], partitions=3)
    log.start()
    try:
        assert log.partition_count == 3
        assert len(kafka_admin.topic_partitions(admin, topic)) == 3
        assert kafka_admin.describe_configs(admin, topic)["cleanup.policy"] == "compact"
    finally:
        log.stop()


def test_existing_topic_is_read_from_the_beginning_in_order(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    create_topic(admin, topic)
    producer = Producer({"bootstrap.servers": worker["bootstrap.servers"]})
    for i in range(50):
        producer.produce(topic, key=b"k%d" % (i % 7), value=b"%d" % i)
    producer.flush()
    seen: list[LogRecord] = []
    log = _log(worker, topic, seen)
    log.start()
    try:
        assert [r.value for r in seen] == [b"%d" % i for i in range(50)]
        assert [r.offset for r in seen] == list(range(50))
    finally:
        log.stop()


def test_send_acks_and_a_second_log_sees_the_write_after_read_to_end(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    first_seen: list[LogRecord] = []
    second_seen: list[LogRecord] = []
    first, second = _log(worker, topic, first_seen), _log(worker, topic, second_seen)
    first.start()
    second.start()
    try:
        acked: list[tuple[Exception | None, int, int]] = []
        future = first.send(b"key", b"value", lambda e, p, o: acked.append((e, p, o)))
        assert future.result(timeout=10) == (0, 0)
        assert acked == [(None, 0, 0)]
        first.send(b"key", None)  # tombstone
        first.flush()
        second.read_to_end()
        assert [(r.key, r.value) for r in second_seen] == [(b"key", b"value"), (b"key", None)]
    finally:
        first.stop()
        second.stop()


def test_reference_murmur2_matches_kafkas_test_vectors() -> None:
    # The vectors of Kafka's UtilsTest.testMurmur2.
    assert java_murmur2(b"21") == -973932308
    assert java_murmur2(b"foobar") == -790332482
    assert java_murmur2(b"a-little-bit-long-string") == -985981536
    assert java_murmur2(b"a-little-bit-longer-string") == -1486304829
    assert java_murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971
    assert java_murmur2(b"abc") == 479470107


def test_keyed_records_use_kafkas_murmur2_partitioner(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    log = _log(worker, topic, [], partitions=25)
    log.start()
    try:
        keys = [b'["local-file-source",{"filename":"f%d.txt"}]' % n for n in range(40)]
        futures = [log.send(key, b'{"position":30}') for key in keys]
        got = [future.result(timeout=10)[0] for future in futures]
        assert got == [java_murmur2_partition(key, 25) for key in keys]
        assert len(set(got)) > 10  # spread, not one partition
    finally:
        log.stop()


def test_read_to_end_sees_records_written_concurrently_by_others(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    # Many small produce batches: tansu's ListOffsets answer would stop short of the end.
    topic = unique_topic("log")
    seen: list[LogRecord] = []
    log = _log(worker, topic, seen, partitions=4)
    log.start()
    try:
        producer = Producer({"bootstrap.servers": worker["bootstrap.servers"], "linger.ms": "0"})
        for round_ in range(20):
            for i in range(500):
                producer.produce(topic, key=b"%d" % i, value=b"%d-%d" % (round_, i))
            producer.flush()
            log.read_to_end(timeout_s=30)
            assert len(seen) == (round_ + 1) * 500
    finally:
        log.stop()


def test_a_failing_consumer_callback_skips_the_record_and_reading_goes_on(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    seen: list[bytes | None] = []

    def consumed(record: LogRecord) -> None:
        if record.value == b"bad":
            raise ValueError("bad record")
        seen.append(record.value)

    log = KafkaBasedLog(
        topic, producer_config(worker), consumer_config(worker), admin_config(worker), consumed
    )
    log.start()
    try:
        for value in (b"a", b"bad", b"b"):
            log.send(b"k", value)
        log.flush()
        log.read_to_end()
        assert seen == [b"a", b"b"]
    finally:
        log.stop()


def test_reader_runs_callbacks_on_one_thread_and_stop_is_idempotent(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("log")
    threads: set[str] = set()

    def consumed(record: Any) -> None:
        threads.add(threading.current_thread().name)

    log = KafkaBasedLog(
        topic, producer_config(worker), consumer_config(worker), admin_config(worker), consumed
    )
    log.start()
    for i in range(100):
        log.send(b"%d" % i, b"v")
    log.flush()
    log.read_to_end()
    log.stop()
    log.stop()
    assert threads == {f"KafkaBasedLog-{topic}-reader"}
    with pytest.raises(ConnectError, match="not started"):
        log.send(b"k", b"v")


def test_read_to_end_times_out_with_a_clear_error_when_stopped(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    log = _log(worker, unique_topic("log"), [])
    with pytest.raises(ConnectError, match="not started"):
        log.read_to_end(timeout_s=0.1)
    started = time.monotonic()
    log.start()
    log.stop()
    assert time.monotonic() - started < 30


def test_read_to_end_steps_over_transaction_markers(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    # The leader's config writes will be transactional (exactly-once support): the commit
    # marker takes an offset no record has, and read_to_end must still reach the end.
    topic = unique_topic("log")
    seen: list[LogRecord] = []
    log = _log(worker, topic, seen)
    log.start()
    try:
        producer = Producer(
            {"bootstrap.servers": worker["bootstrap.servers"], "transactional.id": topic}
        )
        producer.init_transactions(10)
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, key=b"k", value=b"%d" % i)
        producer.commit_transaction(10)
        log.read_to_end(timeout_s=10)
        assert [r.value for r in seen] == [b"0", b"1", b"2"]
        _, offset = log.send(b"k", b"after").result(timeout=10)
        assert offset >= 4  # 0-2 records, 3 the commit marker
        log.read_to_end(timeout_s=10)
        assert [r.value for r in seen][-1] == b"after"
    finally:
        log.stop()
