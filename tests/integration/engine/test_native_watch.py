"""SinkWatch against the real broker: an idle Spark-native sink waits without polling, wakes
when records arrive, and knows the write's ranges from what it was sent."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from tests.conftest import KafkaBroker

from sparkcat.api.records import TopicPartition
from sparkcat.engine.native_watch import WATCH_CONSUMER, SinkWatch


@pytest.fixture
def topic(kafka_broker: KafkaBroker, unique_topic: Callable[[str], str]) -> str:
    name = unique_topic("watch")
    admin = AdminClient({"bootstrap.servers": str(kafka_broker)})
    admin.create_topics([NewTopic(name, 2, 1)])[name].result(timeout=30)
    return name


@pytest.fixture
def consumer(kafka_broker: KafkaBroker) -> Iterator[Consumer]:
    made = Consumer({"bootstrap.servers": str(kafka_broker), "group.id": "watch-test",
                     **WATCH_CONSUMER})  # fmt: skip
    yield made
    made.close()


def _produce(servers: str, topic: str, partition: int, values: list[str]) -> None:
    producer = Producer({"bootstrap.servers": servers})
    for value in values:
        producer.produce(topic, value.encode(), partition=partition)
    assert producer.flush(30) == 0


def test_an_idle_watch_waits_then_wakes_on_the_first_record(
    kafka_broker: KafkaBroker, topic: str, consumer: Consumer
) -> None:
    watch = SinkWatch(consumer, sample_records=500)
    positions = {(topic, 0): None, (topic, 1): None}
    started = time.monotonic()
    assert watch.wait(positions, 1.0) is False
    assert time.monotonic() - started >= 0.9  # it blocked: no busy loop while idle

    later = threading.Timer(0.5, _produce, (str(kafka_broker), topic, 1, ["a", "b", "c"]))
    later.start()
    woke = None
    deadline = time.monotonic() + 30
    while woke is None and time.monotonic() < deadline:
        if watch.wait(positions, 5.0):
            woke = time.monotonic()
    later.join()
    assert woke is not None, "records never seen"
    # The fetch that brought them says where the partitions end: the write's ranges.
    assert watch.fresh_ends() == {TopicPartition(topic, 0): 0, TopicPartition(topic, 1): 3}
    assert [m.value() for m in watch.messages(topic, 1, 0, 3)] == [b"a", b"b", b"c"]
    # Still pending (not written yet): kept, and the kept watermarks are no longer fresh.
    assert watch.wait(positions, 0.1) is True
    assert watch.fresh_ends() is None


def test_after_a_write_it_watches_from_the_new_positions(
    kafka_broker: KafkaBroker, topic: str, consumer: Consumer
) -> None:
    servers = str(kafka_broker)
    _produce(servers, topic, 0, ["one", "two"])
    watch = SinkWatch(consumer, sample_records=500)
    assert _wait(watch, {(topic, 0): 0, (topic, 1): 0})
    assert [m.value() for m in watch.messages(topic, 0, 0, 2)] == [b"one", b"two"]
    watch.written()
    assert watch.wait({(topic, 0): 2, (topic, 1): 0}, 0.5) is False  # nothing after them
    _produce(servers, topic, 0, ["three"])
    assert _wait(watch, {(topic, 0): 2, (topic, 1): 0})
    assert [m.value() for m in watch.messages(topic, 0, 2, 3)] == [b"three"]


def test_records_past_the_kept_ones_are_read_for_the_sample(
    kafka_broker: KafkaBroker, topic: str, consumer: Consumer
) -> None:
    servers = str(kafka_broker)
    _produce(servers, topic, 0, ["a"])
    watch = SinkWatch(consumer, sample_records=500)
    positions = {(topic, 0): 0, (topic, 1): 0}
    assert _wait(watch, positions)
    _produce(servers, topic, 0, ["b", "c"])  # after the wait kept "a" and paused
    assert [m.value() for m in watch.messages(topic, 0, 0, 3)] == [b"a", b"b", b"c"]


def _wait(watch: SinkWatch, positions: Mapping[tuple[str, int], int | None]) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if watch.wait(positions, 1.0):
            return True
    return False


def test_a_range_ending_in_a_transaction_marker_is_read_without_waiting_for_a_record(
    kafka_broker: KafkaBroker, topic: str, consumer: Consumer
) -> None:
    # An exactly-once source's records: three, then the commit marker at offset 3.
    producer = Producer({"bootstrap.servers": str(kafka_broker),
                         "transactional.id": f"watch-{topic}"})  # fmt: skip
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in ("a", "b", "c"):
        producer.produce(topic, value.encode(), partition=0)
    producer.commit_transaction(30)
    watch = SinkWatch(consumer, sample_records=500)
    started = time.monotonic()
    # The range's end is the high watermark (4): one offset holds no record.
    assert [m.value() for m in watch.messages(topic, 0, 0, 4)] == [b"a", b"b", b"c"]
    assert time.monotonic() - started < 5  # not the 30 s a count of 4 records would wait
