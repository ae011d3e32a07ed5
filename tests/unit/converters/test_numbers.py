"""Number and boolean converters: Kafka's big-endian serializers and error texts."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkcat.api.data import (
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    STRING_SCHEMA,
)
from sparkcat.api.errors import DataError
from sparkcat.converters.numbers import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    NumberConverter,
    ShortConverter,
)

CASES = [
    (ShortConverter, OPTIONAL_INT16_SCHEMA, 258, b"\x01\x02", "short", "ShortDeserializer", 2),
    (
        IntegerConverter,
        OPTIONAL_INT32_SCHEMA,
        -2,
        b"\xff\xff\xff\xfe",
        "integer",
        "IntegerDeserializer",
        4,
    ),
    (LongConverter, OPTIONAL_INT64_SCHEMA, 1, b"\x00" * 7 + b"\x01", "long", "LongDeserializer", 8),
    (
        FloatConverter,
        OPTIONAL_FLOAT32_SCHEMA,
        1.5,
        struct.pack(">f", 1.5),
        "float",
        "Deserializer",
        4,
    ),
    (
        DoubleConverter,
        OPTIONAL_FLOAT64_SCHEMA,
        0.1,
        struct.pack(">d", 0.1),
        "double",
        "Deserializer",
        8,
    ),
]


@pytest.mark.parametrize(("cls", "schema", "value", "data", "name", "deser", "size"), CASES)
def test_big_endian_both_ways(
    cls: type[NumberConverter],
    schema: object,
    value: object,
    data: bytes,
    name: str,
    deser: str,
    size: int,
) -> None:
    converter = cls()
    converter.configure({}, True)
    assert converter.from_connect_data("t", None, value) == data
    assert converter.to_connect_data("t", data) == (schema, value)
    assert converter.from_connect_data("t", None, None) is None
    assert converter.to_connect_data("t", None) == (schema, None)
    assert converter.to_connect_header("t", "h", data) == (schema, value)
    with pytest.raises(DataError) as info:
        converter.to_connect_data("t", b"\x00" * (size + 1))
    assert str(info.value).startswith(
        f"Failed to deserialize {name}: Size of data received by {deser} is not {size}"
    )
    with pytest.raises(
        DataError, match=rf"^Failed to serialize to {name} \(was <class 'str'>\): $"
    ):
        converter.from_connect_data("t", None, "12")


def test_out_of_range_is_data_error() -> None:
    with pytest.raises(DataError, match="Failed to serialize to short"):
        ShortConverter().from_connect_data("t", None, 70000)


@given(st.integers(-(2**63), 2**63 - 1))
def test_long_round_trip(value: int) -> None:
    converter = LongConverter()
    assert (
        converter.to_connect_data("t", converter.from_connect_data("t", None, value)).value == value
    )


@given(st.floats(width=32))
def test_float_round_trip(value: float) -> None:
    converter = FloatConverter()
    back = converter.to_connect_data("t", converter.from_connect_data("t", None, value)).value
    assert back == value or (math.isnan(back) and math.isnan(value))


@given(st.floats())
def test_double_round_trip(value: float) -> None:
    converter = DoubleConverter()
    back = converter.to_connect_data("t", converter.from_connect_data("t", None, value)).value
    assert back == value or (math.isnan(back) and math.isnan(value))


def test_boolean_converter() -> None:
    converter = BooleanConverter()
    converter.configure({}, False)
    assert converter.from_connect_data("t", None, True) == b"\x01"
    assert converter.from_connect_data("t", None, False) == b"\x00"
    assert converter.to_connect_data("t", b"\x01") == (OPTIONAL_BOOLEAN_SCHEMA, True)
    assert converter.to_connect_data("t", b"\x00") == (OPTIONAL_BOOLEAN_SCHEMA, False)
    assert converter.to_connect_data("t", None) == (OPTIONAL_BOOLEAN_SCHEMA, None)
    with pytest.raises(DataError, match="Invalid schema type for BooleanConverter: STRING"):
        converter.from_connect_data("t", STRING_SCHEMA, True)
    with pytest.raises(DataError, match="Size of data received by BooleanDeserializer is not 1"):
        converter.to_connect_data("t", b"\x01\x00")
    with pytest.raises(DataError, match="Unexpected byte received by BooleanDeserializer: 2"):
        converter.to_connect_data("t", b"\x02")
