"""Tuple data of pgoutput change messages: every column kind, and truncation refused."""

from __future__ import annotations

import struct

import pytest

from sparkcat.connectors.debezium.postgres.pgoutput import (
    UNCHANGED_TOAST,
    DecodeError,
    Insert,
    decode,
)


def insert(columns: bytes, count: int) -> bytes:
    return b"I" + struct.pack(">I", 7) + b"N" + struct.pack(">h", count) + columns


def text(value: bytes) -> bytes:
    return b"t" + struct.pack(">i", len(value)) + value


def test_text_null_unchanged_and_binary_columns() -> None:
    columns = text("é".encode()) + b"n" + b"u" + b"b" + struct.pack(">i", 2) + b"\x00\xff"
    assert decode(insert(columns, 4)) == Insert(7, ("é", None, UNCHANGED_TOAST, b"\x00\xff"))


@pytest.mark.parametrize(
    "columns",
    [b"", b"t\x00\x00", text(b"abc")[:-1], b"b" + struct.pack(">i", 9) + b"x"],
    ids=["missing-column", "truncated-length", "truncated-text", "truncated-binary"],
)
def test_truncated_tuples_are_refused(columns: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(insert(columns, 1))
