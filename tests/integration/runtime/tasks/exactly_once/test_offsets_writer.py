"""Offsets from transactions that did not commit never reach a task (the real broker shows
them to read_committed readers; the worker corrects its view with the committed reader)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import offset_key_bytes, offset_value_bytes
from sparkcat.runtime.tasks.exactly_once.offsets_writer import after_transaction, settle_committed

pytestmark = pytest.mark.broker


def test_offsets_of_aborted_and_open_transactions_are_set_back_to_committed_ones(
    kafka_broker: Any,
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = _offsets_topic(servers)
    key_a, key_b = offset_key_bytes("c", {"task": "a"}), offset_key_bytes("c", {"task": "b"})
    plain = Producer({"bootstrap.servers": servers})
    plain.produce(topic, offset_value_bytes({"n": 10}), key_a)
    assert plain.flush(30) == 0
    aborting = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-1"})
    aborting.init_transactions(30)
    aborting.begin_transaction()
    aborting.produce(topic, offset_value_bytes({"n": 99}), key_a)  # records 10..98 never commit
    aborting.flush(30)
    aborting.abort_transaction(30)
    hanging = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-2"})
    hanging.init_transactions(30)
    hanging.begin_transaction()
    hanging.produce(topic, offset_value_bytes({"n": 7}), key_b)  # killed mid-transaction
    hanging.flush(30)

    store = KafkaOffsetBackingStore({"bootstrap.servers": servers}, topic)
    store.start()
    try:
        assert settle_committed(store, {"bootstrap.servers": servers}) == 2
        assert store.get("c", {"task": "a"}) == {"n": 10}
        assert store.get("c", {"task": "b"}) is None  # nothing committed: the worker's copy
        assert settle_committed(store, {"bootstrap.servers": servers}) == 2  # idempotent
        assert store.get("c", {"task": "a"}) == {"n": 10}
    finally:
        store.close()
        hanging.abort_transaction(30)


def test_committed_offsets_reach_the_view_at_once_past_another_open_transaction(
    kafka_broker: Any,
) -> None:
    """Another task's transaction open on the partition does not hold up the next lease:
    what a transaction committed is in the store's view as soon as it committed."""
    servers = kafka_broker.bootstrap_servers
    topic = _offsets_topic(servers)
    store = KafkaOffsetBackingStore({"bootstrap.servers": servers}, topic)
    store.start()
    other = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-other"})
    other.init_transactions(30)
    other.begin_transaction()
    other.produce(topic, offset_value_bytes({"n": 1}), offset_key_bytes("d", {"task": "x"}))
    other.flush(30)
    mine = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-mine"})
    mine.init_transactions(30)
    mine.begin_transaction()
    mine.produce(topic, offset_value_bytes({"n": 42}), offset_key_bytes("c", {"task": "a"}))
    mine.commit_transaction(30)
    try:
        started = time.monotonic()
        after_transaction(store, "c", [({"task": "a"}, {"n": 42})])
        assert time.monotonic() - started < 1.0
        assert store.get("c", {"task": "a"}) == {"n": 42}
    finally:
        store.close()
        other.abort_transaction(30)


def test_a_resuming_connector_gets_offsets_committed_past_another_open_transaction(
    kafka_broker: Any,
) -> None:
    """A read_committed reader stops at the last stable offset: while another task's
    transaction is open, what this connector committed after it stays unread, and a task
    resuming from that view would produce its records again. settle_committed with the
    connector gives it its latest committed offsets, and the reader catching up later does
    not take them back."""
    servers = kafka_broker.bootstrap_servers
    topic = _offsets_topic(servers)
    key = offset_key_bytes("c", {"task": "a"})
    mine = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-mine"})
    mine.init_transactions(30)
    mine.begin_transaction()
    mine.produce(topic, offset_value_bytes({"n": 10}), key)
    mine.commit_transaction(30)
    other = Producer({"bootstrap.servers": servers, "transactional.id": f"{topic}-other"})
    other.init_transactions(30)
    other.begin_transaction()
    other.produce(topic, offset_value_bytes({"n": 1}), offset_key_bytes("d", {"task": "x"}))
    other.flush(30)
    for n in (20, 30):  # committed while the other transaction is open
        mine.begin_transaction()
        mine.produce(topic, offset_value_bytes({"n": n}), key)
        mine.commit_transaction(30)
    worker = {"bootstrap.servers": servers}
    store = KafkaOffsetBackingStore(worker, topic)
    store.start()
    try:
        store.read_to_end()
        assert store.get("c", {"task": "a"}) == {"n": 10}  # held at the last stable offset
        # c's key, and d's key of the open transaction (set back to nothing committed)
        assert settle_committed(store, worker, "c") == 2
        assert store.get("c", {"task": "a"}) == {"n": 30}
        assert store.get("d", {"task": "x"}) is None  # another connector's open transaction
        other.commit_transaction(30)
        store.read_to_end()  # the reader passes n=20 and n=30 now
        assert store.get("c", {"task": "a"}) == {"n": 30}
        assert store.get("d", {"task": "x"}) == {"n": 1}
        assert settle_committed(store, worker, "c") == 0  # nothing left to correct
    finally:
        store.close()


def _offsets_topic(servers: str) -> str:
    """A new compacted one-partition topic, as a connector's own offsets topic."""
    topic = f"own-offsets-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[
        topic
    ].result(30)
    return topic
