"""Logical types: Decimal, Date, Time, Timestamp (Kafka's DecimalTest, DateTest, ...)."""

from __future__ import annotations

import datetime
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkcat.api.data import (
    INT32_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError

UTC = datetime.UTC


def test_schemas() -> None:
    assert Decimal.LOGICAL_NAME == "org.apache.kafka.connect.data.Decimal"
    assert Decimal.SCALE_FIELD == "scale"
    schema = Decimal.schema(2)
    assert (schema.type, schema.name, schema.version) == (Type.BYTES, Decimal.LOGICAL_NAME, 1)
    assert schema.parameters == {"scale": "2"}
    assert Decimal.builder(2).optional().build().optional
    for logical, type_ in ((Date, Type.INT32), (Time, Type.INT32), (Timestamp, Type.INT64)):
        assert logical.SCHEMA.type is type_
        assert logical.SCHEMA.name == logical.LOGICAL_NAME
        assert logical.SCHEMA.version == 1
        assert logical.builder().build() == logical.SCHEMA
    assert Date.LOGICAL_NAME == "org.apache.kafka.connect.data.Date"
    assert Time.LOGICAL_NAME == "org.apache.kafka.connect.data.Time"
    assert Timestamp.LOGICAL_NAME == "org.apache.kafka.connect.data.Timestamp"


@pytest.mark.parametrize(
    ("scale", "value", "encoded"),
    [
        (2, "1.56", b"\x00\x9c"),
        (2, "-1.56", b"\xff\x64"),
        (0, "0", b"\x00"),
        (0, "127", b"\x7f"),
        (0, "128", b"\x00\x80"),
        (0, "-128", b"\x80"),
        (0, "-129", b"\xff\x7f"),
        (4, "1.5600", b"\x3c\xf0"),
        (-2, "1E+2", b"\x01"),
    ],
)
def test_decimal_round_trip(scale: int, value: str, encoded: bytes) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, decimal.Decimal(value)) == encoded
    logical = Decimal.to_logical(schema, encoded)
    assert logical == decimal.Decimal(value)
    assert logical.as_tuple().exponent == -scale  # the scale survives, not just the value


@given(st.integers(-(10**40), 10**40), st.integers(-20, 20))
def test_decimal_round_trip_property(unscaled: int, scale: int) -> None:
    value = decimal.Decimal(unscaled).scaleb(-scale, decimal.Context(prec=100))
    schema = Decimal.schema(scale)
    encoded = Decimal.from_logical(schema, value)
    assert int.from_bytes(encoded, "big", signed=True) == unscaled
    assert len(encoded) == 1 or encoded[:2] not in (b"\x00\x00", b"\xff\xff")  # minimal
    assert Decimal.to_logical(schema, encoded).as_tuple() == value.as_tuple()


def test_decimal_errors() -> None:
    with pytest.raises(DataError) as info:
        Decimal.from_logical(Decimal.schema(2), decimal.Decimal("1.5"))
    assert str(info.value) == (
        "Decimal value has mismatching scale for given Decimal schema. "
        "Schema has scale 2, value has scale 1."
    )
    no_scale = SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).build()
    with pytest.raises(DataError, match="scale parameter not found"):
        Decimal.to_logical(no_scale, b"\x01")
    bad_scale = SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter("scale", "x").build()
    with pytest.raises(DataError, match="Invalid scale parameter"):
        Decimal.from_logical(bad_scale, decimal.Decimal("1"))
    with pytest.raises(DataError):
        Decimal.to_logical(Decimal.schema(2), b"")
    with pytest.raises(DataError):
        Decimal.from_logical(Decimal.schema(0), decimal.Decimal("NaN"))


def test_date() -> None:
    day = datetime.date(1997, 5, 19)
    assert Date.from_logical(Date.SCHEMA, day) == 10000
    assert Date.to_logical(Date.SCHEMA, 10000) == day
    assert Date.to_logical(Date.SCHEMA, 0) == datetime.date(1970, 1, 1)
    assert Date.to_logical(Date.SCHEMA, -1) == datetime.date(1969, 12, 31)
    assert Date.from_logical(Date.SCHEMA, datetime.datetime(1997, 5, 19, tzinfo=UTC)) == 10000
    with pytest.raises(DataError, match="should not have any time fields set"):
        Date.from_logical(Date.SCHEMA, datetime.datetime(1997, 5, 19, 0, 0, 1, tzinfo=UTC))
    with pytest.raises(DataError, match="Requested conversion of Date object"):
        Date.from_logical(INT32_SCHEMA, day)
    with pytest.raises(DataError, match="schema does not match"):
        Date.to_logical(INT32_SCHEMA, 1)


def test_time() -> None:
    assert Time.from_logical(Time.SCHEMA, datetime.time(4, 0)) == 14_400_000
    assert Time.to_logical(Time.SCHEMA, 14_400_000) == datetime.time(4, 0)
    assert Time.to_logical(Time.SCHEMA, 86_399_999) == datetime.time(23, 59, 59, 999_000)
    assert Time.from_logical(Time.SCHEMA, datetime.time(23, 59, 59, 999_999)) == 86_399_999
    plus_one = datetime.timezone(datetime.timedelta(hours=1))
    assert Time.from_logical(Time.SCHEMA, datetime.time(5, 0, tzinfo=plus_one)) == 14_400_000
    with pytest.raises(DataError, match="date fields"):
        Time.from_logical(Time.SCHEMA, datetime.time(0, 30, tzinfo=plus_one))
    for millis in (-1, 86_400_000):
        with pytest.raises(DataError, match="Time values must use number of milliseconds"):
            Time.to_logical(Time.SCHEMA, millis)
    with pytest.raises(DataError, match="Requested conversion of Time object"):
        Time.from_logical(Date.SCHEMA, datetime.time(0))


def test_timestamp() -> None:
    instant = datetime.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC)
    assert Timestamp.from_logical(Timestamp.SCHEMA, instant) == 4_000_000_000
    assert Timestamp.to_logical(Timestamp.SCHEMA, 4_000_000_000) == instant
    assert Timestamp.to_logical(Timestamp.SCHEMA, 4_000_000_000).tzinfo is UTC
    naive = datetime.datetime(1970, 2, 16, 7, 6, 40)
    assert Timestamp.from_logical(Timestamp.SCHEMA, naive) == 4_000_000_000
    other_zone = instant.astimezone(datetime.timezone(datetime.timedelta(hours=-5)))
    assert Timestamp.from_logical(Timestamp.SCHEMA, other_zone) == 4_000_000_000
    before_epoch = datetime.datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC)
    assert Timestamp.from_logical(Timestamp.SCHEMA, before_epoch) == -1
    with pytest.raises(DataError, match="Requested conversion of Timestamp object"):
        Timestamp.to_logical(Date.SCHEMA, 0)


@given(st.integers(-(10**12), 10**13))
def test_timestamp_round_trip_property(millis: int) -> None:
    assert (
        Timestamp.from_logical(Timestamp.SCHEMA, Timestamp.to_logical(Timestamp.SCHEMA, millis))
        == millis
    )


@given(st.integers(0, 86_399_999))
def test_time_round_trip_property(millis: int) -> None:
    assert Time.from_logical(Time.SCHEMA, Time.to_logical(Time.SCHEMA, millis)) == millis


def test_logical_values_in_structs() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("amount", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("at", Time.builder().optional().build())
        .field("ts", Timestamp.SCHEMA)
        .build()
    )
    struct = (
        Struct(schema)
        .put("amount", decimal.Decimal("1.56"))
        .put("day", datetime.date(1997, 5, 19))
        .put("ts", datetime.datetime(2020, 1, 1, tzinfo=UTC))
    )
    struct.validate()
    with pytest.raises(DataError, match=r'schema "org\.apache\.kafka\.connect\.data\.Date"'):
        struct.put("day", 10000)
    with pytest.raises(DataError, match="<class 'float'>"):
        struct.put("amount", 1.56)
    with pytest.raises(DataError, match="<class 'int'>"):
        Schema.validate_value(Timestamp.SCHEMA, 4_000_000_000, "ts")
