"""StringConverter: str() of the value in the configured encoding, schema ignored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkcat.api.data import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.converters.string import StringConverter


def make(**configs: str) -> StringConverter:
    converter = StringConverter()
    converter.configure(configs, False)
    return converter


def test_from_connect_data_uses_str_and_ignores_schema() -> None:
    converter = make()
    assert converter.from_connect_data("t", STRING_SCHEMA, "héllo") == "héllo".encode()
    assert converter.from_connect_data("t", INT32_SCHEMA, 42) == b"42"
    assert converter.from_connect_data("t", None, None) is None


def test_to_connect_data_is_optional_string() -> None:
    converter = make()
    assert converter.to_connect_data("t", b"abc") == (OPTIONAL_STRING_SCHEMA, "abc")
    assert converter.to_connect_data("t", None) == (OPTIONAL_STRING_SCHEMA, None)


def test_encoding_config() -> None:
    converter = make(**{"converter.encoding": "UTF-16"})
    data = converter.from_connect_data("t", None, "ab")
    assert data == "ab".encode("utf-16")
    assert converter.to_connect_data("t", data).value == "ab"
    with pytest.raises(ConfigError):
        make(**{"converter.encoding": "no-such-charset"})


def test_undecodable_bytes_raise_data_error_naming_topic() -> None:
    with pytest.raises(DataError, match="'orders'"):
        make().to_connect_data("orders", b"\xff\xfe\xfa")


def test_header_methods_delegate() -> None:
    converter = StringConverter()
    converter.configure({})
    assert converter.from_connect_header("t", "h", None, "v") == b"v"
    assert converter.to_connect_header("t", "h", b"v") == (OPTIONAL_STRING_SCHEMA, "v")
    assert set(converter.config().names()) == {"converter.type", "converter.encoding"}


@given(st.text(), st.sampled_from(["UTF-8", "UTF-16", "UTF-32"]))
def test_round_trip(text: str, encoding: str) -> None:
    converter = make(**{"converter.encoding": encoding})
    assert (
        converter.to_connect_data("t", converter.from_connect_data("t", None, text)).value == text
    )
