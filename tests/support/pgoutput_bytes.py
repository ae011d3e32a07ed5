"""pgoutput messages as bytes, built by hand for the decoder's and the change reader's tests
(the layout of PostgreSQL's logical replication message formats)."""

from __future__ import annotations

import struct

from sparkcat.connectors.debezium.postgres.pgoutput import UNCHANGED_TOAST


def s(text: str) -> bytes:
    """A C string: the text and a NUL."""
    return text.encode() + b"\0"


def tuple_data(*columns: object) -> bytes:
    """TupleData: ``None`` is a null, ``UNCHANGED_TOAST`` an unchanged TOAST value, anything
    else its text."""
    out = struct.pack(">h", len(columns))
    for value in columns:
        if value is None:
            out += b"n"
        elif value is UNCHANGED_TOAST:
            out += b"u"
        else:
            raw = str(value).encode()
            out += b"t" + struct.pack(">i", len(raw)) + raw
    return out
