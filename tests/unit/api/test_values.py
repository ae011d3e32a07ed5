"""sparkcat.api.values against Kafka's ValuesTest behaviour."""

from __future__ import annotations

import datetime
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkcat.api import values
from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError

UTC = datetime.UTC


@pytest.mark.parametrize(
    ("schema", "value", "text"),
    [
        (STRING_SCHEMA, "simple", "simple"),
        (INT32_SCHEMA, 7, "7"),
        (BOOLEAN_SCHEMA, False, "false"),
        (FLOAT64_SCHEMA, 1e7, "1.0E7"),
        (FLOAT32_SCHEMA, 12.34, "12.34"),
        (None, b"test", "dGVzdA=="),
        (None, [1, "a", None], '[1,"a",null]'),
        (None, {"k": 'x"y\\z'}, '{"k":"x\\"y\\\\z"}'),
        (Decimal.schema(2), decimal.Decimal("1.56"), "1.56"),
        (Date.SCHEMA, datetime.date(1997, 5, 19), "1997-05-19"),
        (Time.SCHEMA, datetime.time(4, 0, 0, 5000), "04:00:00.005Z"),
        (
            Timestamp.SCHEMA,
            datetime.datetime(1997, 5, 19, 4, tzinfo=UTC),
            "1997-05-19T04:00:00.000Z",
        ),
    ],
)
def test_convert_to_string(schema: object, value: object, text: str) -> None:
    assert values.convert_to_string(schema, value) == text  # type: ignore[arg-type]


def test_convert_struct_to_string() -> None:
    schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", STRING_SCHEMA).build()
    assert (
        values.convert_to_string(schema, Struct(schema).put("a", 1).put("b", "x"))
        == '{"a":1,"b":"x"}'
    )
    assert values.convert_to_string(None, None) is None


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("true", BOOLEAN_SCHEMA, True),
        ("  false  ", BOOLEAN_SCHEMA, False),
        ("12", INT8_SCHEMA, 12),
        ("300", INT16_SCHEMA, 300),
        ("70000", INT32_SCHEMA, 70000),
        ("5000000000", INT64_SCHEMA, 5000000000),
        ("1.5", FLOAT32_SCHEMA, 1.5),
        ("", STRING_SCHEMA, ""),
        ("simple string", STRING_SCHEMA, "simple string"),
        ("true}", STRING_SCHEMA, "true}"),
        ("{foo: 3}", STRING_SCHEMA, "{foo: 3}"),
        ("[foo]", STRING_SCHEMA, "[foo]"),
        ("[0 1 2]", STRING_SCHEMA, "[0 1 2]"),
        ("2019-01-01", Date.SCHEMA, datetime.date(2019, 1, 1)),
        ("04:00:00.000Z", Time.SCHEMA, datetime.time(4)),
        (
            "1997-05-19T04:00:00.000Z",
            Timestamp.SCHEMA,
            datetime.datetime(1997, 5, 19, 4, tzinfo=UTC),
        ),
    ],
)
def test_parse_string(text: str, schema: object, value: object) -> None:
    assert values.parse_string(text) == (schema, value)


def test_parse_null_and_big_numbers() -> None:
    assert values.parse_string("null") == (None, None)
    assert values.parse_string(None) == (None, None)
    big = values.parse_string("99999999999999999999")
    assert big.schema == Decimal.schema(0)
    assert big.value == decimal.Decimal("99999999999999999999")


def test_parse_arrays_and_maps() -> None:
    result = values.parse_string("[1, 2, 300]")
    assert result.schema == SchemaBuilder.array(INT16_SCHEMA).build()
    assert result.value == [1, 2, 300]
    result = values.parse_string('{"a": 1, "b": 2}')
    assert result.schema == SchemaBuilder.map(STRING_SCHEMA, INT8_SCHEMA).build()
    assert result.value == {"a": 1, "b": 2}
    assert values.parse_string("[]").schema.type is Type.ARRAY  # type: ignore[union-attr]
    assert values.parse_string("{}").value == {}
    assert values.parse_string("[null]").value == [None]
    assert values.parse_string("[true, false]").value == [True, False]


@pytest.mark.parametrize(
    ("fn", "value", "expected"),
    [
        (values.convert_to_byte, 300, 44),
        (values.convert_to_short, "12.7", 12),
        (values.convert_to_integer, 2**32 + 5, 5),
        (values.convert_to_long, 3.9, 3),
        (values.convert_to_double, "1.5", 1.5),
        (values.convert_to_boolean, "true", True),
        (values.convert_to_boolean, 0, False),
        (values.convert_to_string, 5, "5"),
        (values.convert_to_list, "[1,2]", [1, 2]),
        (values.convert_to_map, '{"a":1}', {"a": 1}),
    ],
)
def test_coercions(fn: object, value: object, expected: object) -> None:
    assert fn(None, value) == expected  # type: ignore[operator]


def test_temporal_and_decimal_coercions() -> None:
    assert values.convert_to_date(None, "2019-01-01") == datetime.date(2019, 1, 1)
    assert values.convert_to_date(None, 1) == datetime.date(1970, 1, 2)
    ts = datetime.datetime(1970, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert values.convert_to_time(None, ts) == datetime.time(3, 4, 5)
    assert values.convert_to_timestamp(None, 42) == datetime.datetime(
        1970, 1, 1, 0, 0, 0, 42000, tzinfo=UTC
    )
    assert values.convert_to_timestamp(None, datetime.date(1970, 1, 2)) == datetime.datetime(
        1970, 1, 2, tzinfo=UTC
    )
    assert values.convert_to_decimal(None, 1.5, 2) == decimal.Decimal("1.5")
    assert values.convert_to_decimal(None, b"\x00\x9c", 2) == decimal.Decimal("1.56")
    assert values.convert_to_float(None, 12.34) == pytest.approx(12.34, rel=1e-7)


@pytest.mark.parametrize(
    "call",
    [
        lambda: values.convert_to_integer(None, "abc"),
        lambda: values.convert_to_long(None, True),
        lambda: values.convert_to_list(None, 5),
        lambda: values.convert_to_struct(None, "x"),
        lambda: values.convert_to_date(None, None),
        lambda: values.convert_to_string(None, object()),
    ],
)
def test_failures_raise_data_error(call: object) -> None:
    with pytest.raises(DataError):
        call()  # type: ignore[operator]


def test_infer_schema() -> None:
    assert values.infer_schema("x") == STRING_SCHEMA
    assert values.infer_schema(5) == INT64_SCHEMA
    assert (
        values.infer_schema([1, None])
        == SchemaBuilder.array(SchemaBuilder.int64().optional().build()).build()
    )
    assert values.infer_schema([]) is None
    assert values.infer_schema([1, "a"]) is None


@given(st.integers(-(2**63), 2**63 - 1) | st.booleans())
def test_string_round_trip_of_scalars(value: object) -> None:
    assert values.parse_string(values.convert_to_string(None, value)).value == value


@given(st.lists(st.integers(-100, 100), min_size=1, max_size=5))
def test_string_round_trip_of_int_lists(items: list[int]) -> None:
    assert values.parse_string(values.convert_to_string(None, items)).value == items
