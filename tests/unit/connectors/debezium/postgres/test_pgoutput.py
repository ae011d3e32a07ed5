"""The pgoutput decoder against messages built byte by byte from PostgreSQL's documented
"Logical Replication Message Formats" (protocol version 1)."""

from __future__ import annotations

import struct

import pytest
from tests.support.pgoutput_bytes import s, tuple_data

from sparkcat.connectors.debezium.postgres import pgoutput
from sparkcat.connectors.debezium.postgres.pgoutput import (
    PG_EPOCH_US,
    UNCHANGED_TOAST,
    Begin,
    Commit,
    DecodeError,
    Delete,
    Insert,
    Message,
    Relation,
    RelationColumn,
    Truncate,
    Update,
    decode,
)


def test_begin() -> None:
    payload = b"B" + struct.pack(">QqI", 0x16B374D848, 1_000_000, 4242)
    assert decode(payload) == Begin(0x16B374D848, PG_EPOCH_US + 1_000_000, 4242)


def test_commit() -> None:
    payload = b"C" + struct.pack(">BQQq", 0, 100, 180, -5)
    assert decode(payload) == Commit(0, 100, 180, PG_EPOCH_US - 5)


def test_relation() -> None:
    payload = (
        b"R" + struct.pack(">I", 16384) + s("public") + s("customers") + b"d"
        + struct.pack(">h", 2)
        + b"\x01" + s("id") + struct.pack(">Ii", 23, -1)
        + b"\x00" + s("price") + struct.pack(">Ii", 1700, (10 << 16 | 2) + 4)
    )  # fmt: skip
    assert decode(payload) == Relation(
        16384, "public", "customers", "d",
        (RelationColumn("id", 23, -1, True), RelationColumn("price", 1700, 655366, False)),
    )  # fmt: skip


def test_insert_with_null_and_unicode() -> None:
    payload = b"I" + struct.pack(">I", 7) + b"N" + tuple_data("1", None, "é€")
    assert decode(payload) == Insert(7, ("1", None, "é€"))


@pytest.mark.parametrize(
    ("tag", "old_is_key"), [(b"K", True), (b"O", False)], ids=["key", "full-row"]
)
def test_update_with_old_tuple(tag: bytes, old_is_key: bool) -> None:
    payload = (
        b"U" + struct.pack(">I", 7) + tag + tuple_data("1", None)
        + b"N" + tuple_data("2", UNCHANGED_TOAST)
    )  # fmt: skip
    assert decode(payload) == Update(7, ("1", None), old_is_key, ("2", UNCHANGED_TOAST))


def test_update_without_old_tuple() -> None:
    payload = b"U" + struct.pack(">I", 7) + b"N" + tuple_data("2", "x")
    assert decode(payload) == Update(7, None, False, ("2", "x"))


def test_delete() -> None:
    payload = b"D" + struct.pack(">I", 9) + b"K" + tuple_data("5", None)
    assert decode(payload) == Delete(9, ("5", None), True)


def test_truncate() -> None:
    payload = b"T" + struct.pack(">iB", 2, 3) + struct.pack(">II", 11, 12)
    assert decode(payload) == Truncate(3, (11, 12))


def test_message() -> None:
    payload = b"M" + struct.pack(">BQ", 1, 77) + s("audit") + struct.pack(">i", 3) + b"abc"
    assert decode(payload) == Message(True, 77, "audit", b"abc")


@pytest.mark.parametrize(
    "payload",
    [b"", b"Z", b"B\x00", b"I" + struct.pack(">I", 1) + b"X", b"R\x00\x00\x00\x01public"],
    ids=["empty", "unknown-type", "truncated", "bad-tuple-tag", "unterminated-string"],
)
def test_malformed_messages_are_refused(payload: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(payload)


def test_lsn_text_round_trip() -> None:
    assert pgoutput.format_lsn(0x16B374D848) == "16/B374D848"
    assert pgoutput.parse_lsn("16/B374D848") == 0x16B374D848
