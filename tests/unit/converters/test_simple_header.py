"""SimpleHeaderConverter: Values string forms in UTF-8 and parseString on the way back."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Timestamp,
)
from sparkcat.converters.simple_header import SimpleHeaderConverter

CONVERTER = SimpleHeaderConverter()


def test_null_and_empty() -> None:
    assert CONVERTER.from_connect_header("t", "h", None, None) is None
    assert CONVERTER.to_connect_header("t", "h", None) == (None, None)
    assert CONVERTER.to_connect_header("t", "h", b"") == (STRING_SCHEMA, "")


def test_values_written_as_strings() -> None:
    assert CONVERTER.from_connect_header("t", "h", STRING_SCHEMA, "a b") == b"a b"
    assert CONVERTER.from_connect_header("t", "h", INT32_SCHEMA, 42) == b"42"
    assert CONVERTER.from_connect_header("t", "h", BOOLEAN_SCHEMA, True) == b"true"
    schema = SchemaBuilder.array(STRING_SCHEMA).build()
    assert CONVERTER.from_connect_header("t", "h", schema, ['x"y', "z"]) == b'["x\\"y","z"]'
    ts = datetime.datetime(1997, 5, 19, 4, 0, tzinfo=datetime.UTC)
    assert (
        CONVERTER.from_connect_header("t", "h", Timestamp.SCHEMA, ts) == b"1997-05-19T04:00:00.000Z"
    )


def test_values_parsed_back_with_inferred_schema() -> None:
    assert CONVERTER.to_connect_header("t", "h", b"true") == (BOOLEAN_SCHEMA, True)
    assert CONVERTER.to_connect_header("t", "h", b"12") == (INT8_SCHEMA, 12)
    assert CONVERTER.to_connect_header("t", "h", b"1997-05-19T04:00:00.000Z") == (
        Timestamp.SCHEMA,
        datetime.datetime(1997, 5, 19, 4, 0, tzinfo=datetime.UTC),
    )
    assert CONVERTER.to_connect_header("t", "h", b"hello world") == (STRING_SCHEMA, "hello world")


def test_undecodable_bytes_fall_back_to_bytes() -> None:
    assert CONVERTER.to_connect_header("t", "h", b"\xff\xfe") == (BYTES_SCHEMA, b"\xff\xfe")


@given(st.integers(-(2**63), 2**63 - 1))
def test_integers_round_trip_to_smallest_type(value: int) -> None:
    schema, back = CONVERTER.to_connect_header(
        "t", "h", CONVERTER.from_connect_header("t", "h", None, value)
    )
    assert back == value
    expected = next(
        s
        for s, bits in (
            (INT8_SCHEMA, 8),
            (INT16_SCHEMA, 16),
            (INT32_SCHEMA, 32),
            (INT64_SCHEMA, 64),
        )
        if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    )
    assert schema == expected


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
        lambda s: (
            s.strip() == s
            and not s[0].isdigit()
            and s[0] not in '+-[{"'
            and s not in ("true", "false", "null")
        )
    )
)
def test_plain_strings_round_trip(text: str) -> None:
    schema, back = CONVERTER.to_connect_header(
        "t", "h", CONVERTER.from_connect_header("t", "h", STRING_SCHEMA, text)
    )
    assert (schema, back) == (STRING_SCHEMA, text)
