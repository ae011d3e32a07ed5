"""Protobuf's base-128 varints, for the two places the converter reads and writes them by
hand: Confluent's message indexes (zigzag varints) and the ``confluent.field_meta`` option in
serialized field options."""

from __future__ import annotations

from sparkcat.api.errors import DataError


def varint(value: int) -> bytes:
    """The varint of a non-negative ``value``."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    """``(value, position after it)`` of the varint at ``pos`` of ``data``;
    :class:`DataError` naming ``what`` when the data ends inside it or it runs over 64 bits."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DataError(f"Invalid {what}: unexpected end of data")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DataError(f"Invalid {what}: varint too long")
