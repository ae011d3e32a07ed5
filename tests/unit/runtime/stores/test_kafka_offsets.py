"""KafkaOffsetBackingStore's view never goes back to an older record of a key: what
``restore_at`` set as of a position stays until the reader brings a newer record."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparkcat.runtime.stores.kafka_log import LogRecord
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import offset_key_bytes, offset_value_bytes

KEY = offset_key_bytes("c", {"task": "0"})


@pytest.fixture
def store() -> Iterator[KafkaOffsetBackingStore]:
    # Never started: the reader's records are handed to it as its reader thread would.
    store = KafkaOffsetBackingStore({"bootstrap.servers": "127.0.0.1:1"}, "offsets")
    yield store
    store.close()


def read(store: KafkaOffsetBackingStore, n: int, offset: int, partition: int = 0) -> None:
    store._consume(LogRecord(KEY, offset_value_bytes({"n": n}), partition, offset, 0))


def test_a_lagging_reader_does_not_take_a_restored_key_back(
    store: KafkaOffsetBackingStore,
) -> None:
    read(store, 5, offset=10)
    # The latest committed record of the key is at 40; the reader is still at 10.
    assert store.restore_at([(KEY, offset_value_bytes({"n": 20}), 0, 40)]) == 1
    assert store.get("c", {"task": "0"}) == {"n": 20}
    read(store, 10, offset=20)  # catching up: older records of the key change nothing
    read(store, 20, offset=40)
    assert store.get("c", {"task": "0"}) == {"n": 20}
    read(store, 30, offset=55)  # past the restored position: read as usual
    assert store.get("c", {"task": "0"}) == {"n": 30}


def test_a_restore_older_than_what_was_read_changes_nothing(
    store: KafkaOffsetBackingStore,
) -> None:
    read(store, 30, offset=55)
    assert store.restore_at([(KEY, offset_value_bytes({"n": 20}), 0, 40)]) == 0
    assert store.get("c", {"task": "0"}) == {"n": 30}


def test_a_restore_at_an_aborted_record_replaces_it_and_forgets_with_none(
    store: KafkaOffsetBackingStore,
) -> None:
    read(store, 99, offset=40)  # a record of an aborted transaction, shown by the broker
    assert store.restore_at([(KEY, offset_value_bytes({"n": 20}), 0, 40)]) == 1
    assert store.get("c", {"task": "0"}) == {"n": 20}
    assert store.restore_at([(KEY, None, 0, 41)]) == 1
    assert store.get("c", {"task": "0"}) is None
