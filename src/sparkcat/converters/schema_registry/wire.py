"""Confluent's wire format: magic byte 0, the schema id as 4 bytes big-endian, the payload."""

from __future__ import annotations

import struct

from sparkcat.api.errors import DataError

MAGIC_BYTE = 0
HEADER_SIZE = 5
_HEADER = struct.Struct(">bI")


def header(schema_id: int) -> bytes:
    """The 5 bytes every message of ``schema_id`` starts with."""
    return _HEADER.pack(MAGIC_BYTE, schema_id)


def schema_id_of(data: bytes) -> int:
    """The schema id in ``data``'s header; :class:`DataError` if it is not Confluent's format."""
    if len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
        # Confluent's deserializer says this in its SerializationException.
        raise DataError("Unknown magic byte!")
    return int.from_bytes(data[1:HEADER_SIZE], "big")
