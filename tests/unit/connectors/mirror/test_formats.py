"""The internal record formats, compared with the bytes Kafka's Struct serialization writes.

The expected bytes are derived by hand from the documented schemas: STRING = INT16 length +
UTF-8, INT16/INT32/INT64 big-endian, fields in schema order, versioned values prefixed with
INT16 version 0.
"""

from __future__ import annotations

import pytest

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror.formats import Checkpoint, Heartbeat, OffsetSync, SchemaError


def test_offset_sync_bytes() -> None:
    sync = OffsetSync(TopicPartition("t1", 3), 100, 42)
    assert sync.record_key() == bytes.fromhex("0002 7431 00000003")
    assert sync.record_value() == bytes.fromhex("0000000000000064 000000000000002a")
    assert OffsetSync.deserialize(sync.record_key(), sync.record_value()) == sync


def test_checkpoint_bytes() -> None:
    checkpoint = Checkpoint("g", TopicPartition("A.t", 0), 7, 5, "m")
    assert checkpoint.record_key() == bytes.fromhex("0001 67 0003 412e74 00000000")
    assert checkpoint.record_value() == bytes.fromhex(
        "0000 0000000000000007 0000000000000005 0001 6d"
    )
    assert Checkpoint.deserialize(checkpoint.record_key(), checkpoint.record_value()) == checkpoint


def test_heartbeat_bytes() -> None:
    heartbeat = Heartbeat("A", "B", 1_700_000_000_000)
    assert heartbeat.record_key() == bytes.fromhex("0001 41 0001 42")
    assert heartbeat.record_value() == bytes.fromhex("0000 0000018bcfe56800")
    assert Heartbeat.deserialize(heartbeat.record_key(), heartbeat.record_value()) == heartbeat


def test_non_ascii_strings_count_bytes() -> None:
    sync = OffsetSync(TopicPartition("é", 0), 0, 0)
    assert sync.record_key()[:4] == bytes.fromhex("0002 c3a9")
    assert OffsetSync.deserialize(sync.record_key(), sync.record_value()) == sync


def test_negative_offsets_round_trip() -> None:
    checkpoint = Checkpoint("g", TopicPartition("t", 0), -1, -1, "")
    assert checkpoint.record_value()[2:10] == b"\xff" * 8
    assert Checkpoint.deserialize(checkpoint.record_key(), checkpoint.record_value()) == checkpoint


@pytest.mark.parametrize(
    ("key", "value"),
    [(b"\x00\x05ab", b""), (None, b""), (b"\x00\x01A\x00\x01B", b"\x00\x01" + b"\x00" * 8)],
)
def test_bad_bytes_raise_schema_error(key: bytes | None, value: bytes) -> None:
    with pytest.raises(SchemaError):
        Heartbeat.deserialize(key, value)
