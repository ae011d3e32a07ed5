"""ByteArrayConverter: bytes pass through; schema must be absent or BYTES."""

from __future__ import annotations

import pytest

from sparkcat.api.data import BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA, STRING_SCHEMA
from sparkcat.api.errors import DataError
from sparkcat.converters.bytes import ByteArrayConverter


def test_pass_through() -> None:
    converter = ByteArrayConverter()
    converter.configure({}, False)
    assert converter.from_connect_data("t", BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert converter.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert converter.from_connect_data("t", None, None) is None
    assert converter.to_connect_data("t", b"xy") == (OPTIONAL_BYTES_SCHEMA, b"xy")
    assert converter.to_connect_data("t", None) == (OPTIONAL_BYTES_SCHEMA, None)


def test_wrong_schema_or_value() -> None:
    converter = ByteArrayConverter()
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        converter.from_connect_data("t", STRING_SCHEMA, b"x")
    with pytest.raises(DataError, match="not compatible with objects of type"):
        converter.from_connect_data("t", None, "text")


def test_header_methods_and_config() -> None:
    converter = ByteArrayConverter()
    assert converter.from_connect_header("t", "h", None, b"v") == b"v"
    assert converter.to_connect_header("t", "h", b"v") == (OPTIONAL_BYTES_SCHEMA, b"v")
    assert list(converter.config().names()) == ["converter.type"]
