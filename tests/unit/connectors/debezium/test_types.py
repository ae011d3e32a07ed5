"""Column types → Connect schemas and values in every decimal, time precision and binary mode,
with Debezium's semantic type names."""

from __future__ import annotations

import datetime
import decimal

import pytest

from sparkcat.api.data import Type
from sparkcat.connectors.debezium.types import (
    Column,
    TypeModes,
    column_schema,
    value_converter,
    zoned_time,
    zoned_timestamp,
)


def convert(column: Column, value: object, **modes: str) -> tuple[object, object]:
    type_modes = TypeModes(**modes)
    schema = column_schema(column, type_modes)
    return schema, value_converter(column, schema, type_modes)(value)


def test_decimal_precise_is_connect_decimal_with_precision() -> None:
    schema, value = convert(Column("p", "decimal", True, 10, 2), decimal.Decimal("1.5"))
    assert schema.name == "org.apache.kafka.connect.data.Decimal"  # type: ignore[attr-defined]
    assert schema.parameters == {"scale": "2", "connect.decimal.precision": "10"}  # type: ignore[attr-defined]
    assert schema.optional  # type: ignore[attr-defined]
    assert value == decimal.Decimal("1.50")


def test_decimal_double_and_string() -> None:
    column = Column("p", "decimal", False, 10, 2)
    schema, value = convert(column, decimal.Decimal("1.25"), decimal="double")
    assert (schema.type, schema.name, value) == (Type.FLOAT64, None, 1.25)  # type: ignore[attr-defined]
    schema, value = convert(column, decimal.Decimal("1.50"), decimal="string")
    assert (schema.type, value) == (Type.STRING, "1.50")  # type: ignore[attr-defined]


def test_numeric_without_precision_is_variable_scale_decimal() -> None:
    schema, value = convert(Column("n", "decimal", True), decimal.Decimal("-12.345"))
    assert schema.name == "io.debezium.data.VariableScaleDecimal"  # type: ignore[attr-defined]
    assert [f.name for f in schema.fields] == ["scale", "value"]  # type: ignore[attr-defined]
    assert value.get("scale") == 3  # type: ignore[attr-defined]
    assert int.from_bytes(value.get("value"), "big", signed=True) == -12345  # type: ignore[attr-defined]


ts = datetime.datetime(2024, 1, 2, 3, 4, 5, 678901)
MICROS = 1704164645678901


@pytest.mark.parametrize(
    ("mode", "precision", "name", "expected"),
    [
        ("adaptive", 3, "io.debezium.time.Timestamp", MICROS // 1000),
        ("adaptive", 6, "io.debezium.time.MicroTimestamp", MICROS),
        ("adaptive", None, "io.debezium.time.MicroTimestamp", MICROS),
        ("adaptive_time_microseconds", 3, "io.debezium.time.Timestamp", MICROS // 1000),
        ("connect", 6, "org.apache.kafka.connect.data.Timestamp", ts),
    ],
)
def test_timestamp_modes(mode: str, precision: int | None, name: str, expected: object) -> None:
    schema, value = convert(Column("t", "timestamp", True, precision), ts, time_precision=mode)
    assert (schema.name, value) == (name, expected)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mode", "precision", "name", "expected"),
    [
        ("adaptive", 0, "io.debezium.time.Time", 3_723_000),
        ("adaptive", 6, "io.debezium.time.MicroTime", 3_723_000_456),
        ("adaptive_time_microseconds", 0, "io.debezium.time.MicroTime", 3_723_000_456),
        ("connect", 6, "org.apache.kafka.connect.data.Time", datetime.time(1, 2, 3, 456)),
    ],
)
def test_time_modes(mode: str, precision: int, name: str, expected: object) -> None:
    value = datetime.time(1, 2, 3, 456)
    schema, got = convert(Column("t", "time", True, precision), value, time_precision=mode)
    assert (schema.name, got) == (name, expected)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mode", "name", "expected"),
    [
        ("adaptive", "io.debezium.time.Date", 19724),
        ("connect", "org.apache.kafka.connect.data.Date", datetime.date(2024, 1, 2)),
    ],
)
def test_date_modes(mode: str, name: str, expected: object) -> None:
    schema, value = convert(Column("d", "date"), datetime.date(2024, 1, 2), time_precision=mode)
    assert (schema.name, value) == (name, expected)  # type: ignore[attr-defined]


def test_zoned_values_are_utc_iso_strings() -> None:
    aware = datetime.datetime(2024, 1, 2, 5, 4, 5, 500000, tzinfo=datetime.timezone(
        datetime.timedelta(hours=2)))  # fmt: skip
    assert zoned_timestamp(aware) == "2024-01-02T03:04:05.5Z"
    assert zoned_time(datetime.time(1, 0, tzinfo=datetime.UTC)) == "01:00:00Z"
    schema, _ = convert(Column("z", "timestamptz"), aware)
    assert schema.name == "io.debezium.time.ZonedTimestamp"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("bytes", b"\x01\xff"), ("base64", "Af8="), ("base64-url-safe", "Af8="), ("hex", "01ff")],
)
def test_binary_modes(mode: str, expected: object) -> None:
    _, value = convert(Column("b", "bytes"), b"\x01\xff", binary=mode)
    assert value == expected


@pytest.mark.parametrize(
    ("kind", "name"),
    [("uuid", "io.debezium.data.Uuid"), ("json", "io.debezium.data.Json"),
     ("xml", "io.debezium.data.Xml"), ("interval", "io.debezium.time.MicroDuration")],
)  # fmt: skip
def test_semantic_names(kind: str, name: str) -> None:
    assert column_schema(Column("c", kind), TypeModes()).name == name
