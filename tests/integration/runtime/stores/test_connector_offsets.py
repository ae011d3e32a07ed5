"""A connector's own offsets topic (KIP-618 ``offsets.storage.topic``): read first, the
worker's global topic as fallback; writes reach both topics."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sparkcat.runtime.stores.connector_offsets import ConnectorOffsetStore, for_connector
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = pytest.mark.broker

A, B, C = {"file": "a"}, {"file": "b"}, {"file": "c"}


@pytest.fixture
def worker_config(worker: dict[str, str], unique_topic: Callable[[str], str]) -> dict[str, str]:
    return {
        **worker,
        "offset.storage.topic": unique_topic("global-offsets"),
        "offset.storage.partitions": "3",
        "offset.storage.replication.factor": "1",
    }


@pytest.fixture
def global_store(worker_config: dict[str, str]) -> Iterator[KafkaOffsetBackingStore]:
    store = KafkaOffsetBackingStore(worker_config)
    store.start()
    yield store
    store.close()


def test_connector_topic_first_global_topic_as_fallback_writes_to_both(
    worker_config: dict[str, str],
    global_store: KafkaOffsetBackingStore,
    unique_topic: Callable[[str], str],
) -> None:
    own_topic = unique_topic("own-offsets")
    connector = {"name": "c", "offsets.storage.topic": own_topic}
    # Before the connector had a topic of its own, its offsets went to the global topic.
    global_store.put_batch("c", [(A, {"n": 1}), (B, {"n": 2}), (C, {"n": 3})])
    seeded = KafkaOffsetBackingStore(worker_config, own_topic)  # the connector's own topic
    seeded.start()
    seeded.put_batch("c", [(A, {"n": 10})])
    seeded.close()

    store = for_connector(global_store, worker_config, connector)
    assert isinstance(store, ConnectorOffsetStore) and store.topic == own_topic
    try:
        assert store.get("c", A) == {"n": 10}  # the connector's topic wins
        assert store.get("c", B) == {"n": 2}  # what only the global topic knows
        assert sorted((p["file"], o["n"]) for p, o in store.get_all("c")) == [
            ("a", 10), ("b", 2), ("c", 3),
        ]  # fmt: skip
        store.put_batch("c", [(B, {"n": 20}), (C, None)])
    finally:
        store.close()
    global_store.read_to_end()
    assert global_store.get("c", B) == {"n": 20} and global_store.get("c", C) is None
    assert global_store.get("c", A) == {"n": 1}  # written before; the connector's topic wins

    again = KafkaOffsetBackingStore(worker_config, own_topic)  # read back from the topic
    again.start()
    try:
        assert sorted((p["file"], o["n"]) for p, o in again.get_all("c")) == [("a", 10), ("b", 20)]
    finally:
        again.close()
    reopened = for_connector(global_store, worker_config, connector)
    try:
        assert reopened.get("c", C) is None  # the tombstone reached both topics
    finally:
        reopened.close()


def test_the_worker_store_is_used_without_a_connector_topic_or_outside_kafka(
    worker_config: dict[str, str], global_store: KafkaOffsetBackingStore
) -> None:
    assert for_connector(global_store, worker_config, {"name": "c"}) is global_store
    same = {"name": "c", "offsets.storage.topic": worker_config["offset.storage.topic"]}
    assert for_connector(global_store, worker_config, same) is global_store
    memory = MemoryOffsetStore()  # standalone-style stores ignore the key, as Kafka does
    assert for_connector(memory, worker_config, {"offsets.storage.topic": "x"}) is memory
