"""KafkaOffsetBackingStore: the OffsetStore contract, Kafka's record layout, two workers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConfigError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import OffsetStore, OffsetStoreError

from .conftest import create_topic, java_murmur2_partition, load_tests_of, raw_records

pytestmark = pytest.mark.broker

_CONTRACT = load_tests_of(
    "unit/runtime/stores/test_offsets.py",
    [
        "test_get_returns_what_was_put",
        "test_later_put_replaces_the_offset",
        "test_get_all_lists_one_connectors_partitions",
        "test_tombstone_removes_the_partition",
        "test_a_bad_item_applies_nothing_of_its_batch",
        "test_returned_maps_are_copies",
        "test_values_keep_their_json_types",
        "test_closed_store_refuses_use",
        "test_concurrent_writers_lose_nothing",
    ],
)
globals().update(_CONTRACT)

FILE = {"filename": "test.txt"}


def _worker(worker: dict[str, str], topic: str, partitions: int = 5) -> dict[str, str]:
    return {
        **worker,
        "offset.storage.topic": topic,
        "offset.storage.partitions": str(partitions),
        "offset.storage.replication.factor": "1",
    }


@pytest.fixture
def store(worker: dict[str, str], unique_topic: Callable[[str], str]) -> Iterator[OffsetStore]:
    made = KafkaOffsetBackingStore(_worker(worker, unique_topic("offsets")))
    made.start()
    yield made
    made.close()


def test_records_are_kafkas_key_and_value_bytes_on_the_murmur2_partition(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("offsets")
    store = KafkaOffsetBackingStore(_worker(worker, topic, partitions=25))
    store.start()
    try:
        store.put_batch("local-file-source", [(FILE, {"position": 30})])
        store.put_batch("local-file-source", [({"filename": "gone.txt"}, None)])
    finally:
        store.close()
    assert len(kafka_admin.topic_partitions(admin, topic)) == 25
    assert kafka_admin.describe_configs(admin, topic)["cleanup.policy"] == "compact"
    records = raw_records(worker["bootstrap.servers"], topic)
    key = b'["local-file-source",{"filename":"test.txt"}]'
    gone = b'["local-file-source",{"filename":"gone.txt"}]'
    assert sorted(records) == sorted(
        [
            (java_murmur2_partition(key, 25), key, b'{"position":30}'),
            (java_murmur2_partition(gone, 25), gone, None),
        ]
    )


def test_offsets_written_by_kafka_connect_are_read(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("offsets")
    create_topic(admin, topic, partitions=3)
    producer = Producer({"bootstrap.servers": worker["bootstrap.servers"]})
    producer.produce(topic, key=b'["jdbc",{"table":"t"}]', value=b'{"id":7,"ts":1.5}')
    producer.produce(topic, key=b'["jdbc",{"table":"u"}]', value=b'{"id":1}')
    producer.produce(topic, key=b'["jdbc",{"table":"u"}]', value=None)
    producer.produce(topic, key=b'"not a connector partition"', value=b"{}")
    producer.flush()
    store = KafkaOffsetBackingStore(_worker(worker, topic))
    store.start()
    try:
        assert store.get_all("jdbc") == [({"table": "t"}, {"id": 7, "ts": 1.5})]
    finally:
        store.close()


def test_two_workers_see_each_others_writes_after_read_to_end(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("offsets"))
    first, second = KafkaOffsetBackingStore(config), KafkaOffsetBackingStore(config)
    first.start()
    second.start()
    try:
        first.put_batch("c", [({"p": 1}, {"o": 1})])
        second.put_batch("c", [({"p": 2}, {"o": 2})])
        first.read_to_end()
        second.read_to_end()
        for store in (first, second):
            assert sorted(store.get_all("c"), key=lambda e: e[0]["p"]) == [
                ({"p": 1}, {"o": 1}),
                ({"p": 2}, {"o": 2}),
            ]
        second.put_batch("c", [({"p": 1}, None)])
        first.read_to_end()
        assert first.get("c", {"p": 1}) is None
    finally:
        first.close()
        second.close()


def test_a_restarted_store_reads_back_what_was_written(
    worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    config = _worker(worker, unique_topic("offsets"))
    first = KafkaOffsetBackingStore(config)
    first.start()
    first.put_batch("c", [({"p": n}, {"o": n}) for n in range(100)])
    first.close()
    second = KafkaOffsetBackingStore(config)
    second.start()
    try:
        assert len(second.get_all("c")) == 100
        assert second.get("c", {"p": 42}) == {"o": 42}
    finally:
        second.close()


def test_missing_topic_name_is_refused(worker: dict[str, str]) -> None:
    from sparkcat.api.errors import ConnectError

    with pytest.raises(ConnectError, match="Offset storage topic must be specified"):
        KafkaOffsetBackingStore(worker)


def test_use_after_close_is_refused(worker: dict[str, str], store: OffsetStore) -> None:
    store.close()
    with pytest.raises(OffsetStoreError, match="closed"):
        store.put_batch("c", [({"p": 1}, {"o": 1})])


@pytest.mark.slow
def test_start_reads_100000_offset_records(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("offsets")
    create_topic(admin, topic, partitions=25)
    producer = Producer(
        {"bootstrap.servers": worker["bootstrap.servers"], "partitioner": "murmur2_random"}
    )
    for n in range(100_000):
        key = orjson.dumps(["bulk", {"partition": n % 20_000}])
        producer.produce(topic, key=key, value=orjson.dumps({"position": n}))
        if n % 5000 == 0:
            producer.poll(0)
    producer.flush()
    store = KafkaOffsetBackingStore(_worker(worker, topic))
    started = time.perf_counter()
    store.start()
    elapsed = time.perf_counter() - started
    try:
        offsets = dict((p["partition"], o["position"]) for p, o in store.get_all("bulk"))
        assert len(offsets) == 20_000
        assert all(offsets[p] == 80_000 + p for p in range(20_000))
    finally:
        store.close()
    print(f"start() read 100,000 offset records in {elapsed:.2f} s")


def test_an_existing_topic_that_is_not_compacted_is_refused_with_kafkas_message(
    worker: dict[str, str], admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("offsets")
    spec = kafka_admin.TopicSpec(topic, 5, 1, {"cleanup.policy": "delete"})
    kafka_admin.ensure_topics(admin, [spec])
    store = KafkaOffsetBackingStore(_worker(worker, topic))
    with pytest.raises(ConfigError) as caught:
        store.start()
    assert str(caught.value) == (
        f"Topic '{topic}' supplied via the 'offset.storage.topic' property is required to have "
        "'cleanup.policy=compact' to guarantee consistency and durability of source connector "
        "offsets, but found the topic currently has 'cleanup.policy=delete'. Continuing would "
        "likely result in eventually losing source connector offsets and problems restarting "
        "this Connect cluster in the future. Change the 'offset.storage.topic' property in the "
        "Connect worker configurations to use a topic with 'cleanup.policy=compact'."
    )


def test_offsets_another_producer_committed_are_taken_before_the_reader_reaches_them(
    store: OffsetStore,
) -> None:
    remember = store.remember  # type: ignore[attr-defined]
    remember("c", [({"p": 1}, {"n": 5}), ({"p": 2}, {"n": 7})])
    assert store.get("c", {"p": 1}) == {"n": 5}
    remember("c", [({"p": 1}, None)])  # a tombstone
    assert store.get_all("c") == [({"p": 2}, {"n": 7})]
