"""Source offset stores: one contract for every store, then what the file store adds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from sparkcat.api.errors import DataError
from sparkcat.runtime.stores.offsets import (
    FileOffsetStore,
    MemoryOffsetStore,
    OffsetStore,
    OffsetStoreError,
    offset_key_bytes,
    offset_value_bytes,
    parse_offset_key,
)

FILE = {"filename": "test.txt"}


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OffsetStore]:
    made: OffsetStore = (
        MemoryOffsetStore() if request.param == "memory" else FileOffsetStore(tmp_path / "o.json")
    )
    yield made
    made.close()


# -- serialization -------------------------------------------------------------------------


def test_key_bytes_are_kafkas_exact_layout() -> None:
    key = offset_key_bytes("local-file-source", FILE)
    assert key == b'["local-file-source",{"filename":"test.txt"}]'
    assert parse_offset_key(key) == ("local-file-source", FILE)


def test_value_bytes_are_compact_json_and_none_is_a_tombstone() -> None:
    assert offset_value_bytes({"position": 30}) == b'{"position":30}'
    assert offset_value_bytes(None) is None


def test_key_bytes_do_not_depend_on_partition_dict_order() -> None:
    assert offset_key_bytes("c", {"b": 1, "a": 2}) == offset_key_bytes("c", {"a": 2, "b": 1})


_PRIMITIVES_ONLY = "Offsets may only contain primitive types as values, but field k contains"


@pytest.mark.parametrize(
    ("partition", "message"),
    [
        ({1: "x"}, "Offsets may only use String keys"),
        ({"k": [1]}, f"{_PRIMITIVES_ONLY} ARRAY"),
        ({"k": {"a": 1}}, f"{_PRIMITIVES_ONLY} MAP"),
        ({"k": object()}, f"{_PRIMITIVES_ONLY} class object"),
    ],
)
def test_non_primitive_maps_are_rejected_with_kafkas_messages(
    partition: dict[object, object], message: str
) -> None:
    with pytest.raises(DataError, match=message):
        offset_key_bytes("c", partition)  # type: ignore[arg-type]
    with pytest.raises(DataError, match=message):
        offset_value_bytes(partition)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", [b"not json", b'"just a string"', b'["c"]', b'[1,{"a":1}]'])
def test_keys_not_of_the_connector_partition_shape_are_not_parsed(key: bytes) -> None:
    assert parse_offset_key(key) is None


# -- the contract ---------------------------------------------------------------------------


def test_get_returns_what_was_put(store: OffsetStore) -> None:
    store.put_batch("local-file-source", [(FILE, {"position": 30})])
    assert store.get("local-file-source", FILE) == {"position": 30}
    assert store.get("local-file-source", {"filename": "other.txt"}) is None
    assert store.get("other-connector", FILE) is None


def test_later_put_replaces_the_offset(store: OffsetStore) -> None:
    store.put_batch("c", [(FILE, {"position": 1})])
    store.put_batch("c", [(FILE, {"position": 2}), ({"filename": "b"}, {"position": 7})])
    assert store.get("c", FILE) == {"position": 2}
    assert store.get("c", {"filename": "b"}) == {"position": 7}


def test_get_all_lists_one_connectors_partitions(store: OffsetStore) -> None:
    store.put_batch("c1", [({"p": 1}, {"o": 10}), ({"p": 2}, {"o": 20})])
    store.put_batch("c2", [({"p": 1}, {"o": 99})])
    assert sorted(store.get_all("c1"), key=lambda e: e[0]["p"]) == [
        ({"p": 1}, {"o": 10}),
        ({"p": 2}, {"o": 20}),
    ]
    assert store.get_all("c2") == [({"p": 1}, {"o": 99})]
    assert store.get_all("nobody") == []


def test_tombstone_removes_the_partition(store: OffsetStore) -> None:
    store.put_batch("c", [({"p": 1}, {"o": 1}), ({"p": 2}, {"o": 2})])
    store.put_batch("c", [({"p": 1}, None)])
    assert store.get("c", {"p": 1}) is None
    assert store.get_all("c") == [({"p": 2}, {"o": 2})]


def test_a_bad_item_applies_nothing_of_its_batch(store: OffsetStore) -> None:
    with pytest.raises(DataError):
        store.put_batch("c", [({"p": 1}, {"o": 1}), ({"p": 2}, {"o": [1, 2]})])
    assert store.get_all("c") == []


def test_returned_maps_are_copies(store: OffsetStore) -> None:
    store.put_batch("c", [(FILE, {"position": 1})])
    got = store.get("c", FILE)
    assert got is not None
    got["position"] = 999
    assert store.get("c", FILE) == {"position": 1}


def test_values_keep_their_json_types(store: OffsetStore) -> None:
    offset = {"i": 2**62, "f": 1.5, "b": True, "s": "x", "n": None}
    store.put_batch("c", [(FILE, offset)])
    assert store.get("c", FILE) == offset


def test_closed_store_refuses_use(store: OffsetStore) -> None:
    store.close()
    with pytest.raises(OffsetStoreError, match="closed"):
        store.get("c", FILE)
    store.close()  # idempotent


def test_concurrent_writers_lose_nothing(store: OffsetStore) -> None:
    def writer(n: int) -> Callable[[], None]:
        def write() -> None:
            for i in range(50):
                store.put_batch("c", [({"t": n, "i": i}, {"o": i})])

        return write

    threads = [threading.Thread(target=writer(n)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.flush()
    assert len(store.get_all("c")) == 200


# -- the file store -----------------------------------------------------------------------------


def test_file_store_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    first = FileOffsetStore(path)
    first.put_batch("local-file-source", [(FILE, {"position": 30})])
    first.put_batch("gone", [({"p": 1}, {"o": 1})])
    first.put_batch("gone", [({"p": 1}, None)])
    first.close()
    second = FileOffsetStore(path)
    assert second.get("local-file-source", FILE) == {"position": 30}
    assert second.get_all("gone") == []
    second.close()


def test_file_holds_key_and_value_json_strings(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    with_store = FileOffsetStore(path)
    with_store.put_batch("local-file-source", [(FILE, {"position": 30})])
    with_store.close()
    assert orjson.loads(path.read_bytes()) == {
        '["local-file-source",{"filename":"test.txt"}]': '{"position":30}'
    }


def test_file_store_writes_every_batch_by_default(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    store = FileOffsetStore(path)
    store.put_batch("c", [(FILE, {"position": 1})])
    # Read by a second store while the first is still open: the batch is already durable.
    assert FileOffsetStore(path).get("c", FILE) == {"position": 1}
    store.close()


def test_flush_interval_defers_writes_until_flush(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    store = FileOffsetStore(path, flush_interval_ms=3_600_000)
    store.put_batch("c", [(FILE, {"position": 1})])  # first write: interval elapsed
    store.put_batch("c", [(FILE, {"position": 2})])  # within the interval: only dirty
    assert FileOffsetStore(path).get("c", FILE) == {"position": 1}
    store.flush()
    assert FileOffsetStore(path).get("c", FILE) == {"position": 2}
    store.close()


def test_write_replaces_the_file_atomically(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    store = FileOffsetStore(path)
    store.put_batch("c", [(FILE, {"position": 1})])
    inode = path.stat().st_ino
    store.put_batch("c", [(FILE, {"position": 2})])
    # A new file was renamed over the old one (never rewritten in place) and no
    # temporary file is left behind.
    assert path.stat().st_ino != inode
    assert sorted(os.listdir(tmp_path)) == ["o.json"]
    store.close()


def test_failed_write_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "o.json"
    store = FileOffsetStore(path)
    store.put_batch("c", [(FILE, {"position": 1})])

    def disk_error(fd: int) -> None:
        raise OSError(5, "Input/output error")

    # A disk error cannot be provoked for real (the tests may run as root): fail fsync.
    monkeypatch.setattr(os, "fsync", disk_error)
    with pytest.raises(OffsetStoreError, match="Failed to write offsets"):
        store.put_batch("c", [(FILE, {"position": 2})])
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["o.json"]  # the temp file was removed
    assert FileOffsetStore(path).get("c", FILE) == {"position": 1}
    store.flush()  # still dirty: the retry succeeds now
    assert FileOffsetStore(path).get("c", FILE) == {"position": 2}
    store.close()


def test_missing_file_is_an_empty_store_and_parent_dirs_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "o.json"
    store = FileOffsetStore(path)
    assert store.get_all("c") == []
    store.put_batch("c", [(FILE, {"position": 1})])
    assert path.exists()
    store.close()


@pytest.mark.parametrize("content", [b"\xac\xed\x00\x05sr\x00\x11java.util.HashMap", b"[1, 2]"])
def test_unreadable_file_is_an_error_not_an_empty_store(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "o.json"
    path.write_bytes(content)
    with pytest.raises(OffsetStoreError, match="Failed to read offsets"):
        FileOffsetStore(path)
