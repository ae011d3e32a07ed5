"""Messages whose schema holds a Decimal: the warm path (payload only, parsed exactly when it
has fractions) gives exactly what a cold converter gives, for both ``decimal.format``s."""

from __future__ import annotations

import decimal
from typing import Any

import orjson
import pytest

from sparkcat.api.data import (
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
)
from sparkcat.api.errors import DataError
from sparkcat.converters.json import JsonConverter

D = decimal.Decimal


def _converter(fmt: str = "NUMERIC") -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"decimal.format": fmt}, False)
    return converter


def _message(schema: Schema, payload: str) -> bytes:
    envelope = _converter().as_json_schema(schema)
    return b'{"schema":' + orjson.dumps(envelope) + b',"payload":' + payload.encode() + b"}"


def _warm_equals_cold(schema: Schema, payloads: list[str]) -> list[Any]:
    warm = _converter()
    results: list[Any] = []
    for payload in payloads * 2:  # the second round runs on the warm path
        data = _message(schema, payload)
        cold = _converter().to_connect_data("t", data)
        got = warm.to_connect_data("t", data)
        assert got == cold
        assert repr(got.value) == repr(cold.value)  # same Decimal digits and exponent
        results.append(got.value)
    return results[len(payloads) :]


def test_numeric_decimals_keep_every_digit_and_scale() -> None:
    schema = Decimal.schema(30)
    values = _warm_equals_cold(
        schema,
        [
            "123456789012345678901234567890.123456789012345678901234567890",
            "-0.000000000000000000000000000001",
            "1.2E+3",
            "12345678901234567890123",  # no fraction: beyond what a float keeps
            "9007199254740993.000000000000000000000000000000",  # a float would round it
        ],
    )
    assert values[0] == D("123456789012345678901234567890.123456789012345678901234567890")
    assert values[1] == D("-1E-30")
    assert values[2] == D("1.2E+3")
    assert values[3] == D("12345678901234567890123")
    assert values[4] == D("9007199254740993")


def test_negative_scale_and_exponents() -> None:
    schema = Decimal.schema(-3)
    values = _warm_equals_cold(schema, ["1E+5", "-7.5e3", "123000"])
    assert values == [D("1E+5"), D("-7.5e3"), D("123000")]


def test_struct_with_decimal_on_warm_path_is_exact() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("r")
        .field("id", INT64_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("score", FLOAT64_SCHEMA)
        .field("name", STRING_SCHEMA)
        .build()
    )
    payloads = [
        '{"id":1,"amount":12345678901234567.89,"score":0.1,"name":"a.e"}',
        '{"id":2,"amount":-0.10,"score":1e300,"name":"b"}',
        '{"id":3,"amount":5,"score":2,"name":"c"}',
    ]
    values = _warm_equals_cold(schema, payloads)
    assert [v.get("amount") for v in values] == [D("12345678901234567.89"), D("-0.10"), D("5")]
    assert [v.get("score") for v in values] == [0.1, 1e300, 2.0]
    assert all(isinstance(v, Struct) for v in values)


def test_decimals_nested_in_arrays_maps_and_structs() -> None:
    inner = SchemaBuilder.struct().name("in").field("d", Decimal.schema(1)).build()
    schema = (
        SchemaBuilder.struct()
        .name("outer")
        .field("list", SchemaBuilder.array(Decimal.schema(4)).build())
        .field("map", SchemaBuilder.map(STRING_SCHEMA, Decimal.schema(0)).build())
        .field("inner", inner)
        .build()
    )
    payload = (
        '{"list":[1.0000,-99999999999999999999.1234],'
        '"map":{"k":123456789012345678901234567890},"inner":{"d":0.1}}'
    )
    (value,) = _warm_equals_cold(schema, [payload])
    assert value.get("list") == [D("1.0000"), D("-99999999999999999999.1234")]
    assert value.get("map") == {"k": D("123456789012345678901234567890")}
    assert value.get("inner").get("d") == D("0.1")


def test_base64_decimals_on_warm_path() -> None:
    schema = SchemaBuilder.struct().name("r").field("amount", Decimal.schema(3)).build()
    struct = Struct(schema).put("amount", D("-123456789012345678.901"))
    converter = _converter("BASE64")
    data = converter.from_connect_data("t", schema, struct)
    for _ in range(3):
        got = converter.to_connect_data("t", data)
        assert got.value.get("amount") == D("-123456789012345678.901")


def test_leading_zeros_and_errors_keep_kafka_texts_when_warm() -> None:
    schema = Decimal.schema(2)
    warm = _converter()
    warm.to_connect_data("t", _message(schema, "1.25"))
    assert warm.to_connect_data("t", _message(schema, "007.50")).value == D("7.50")
    with pytest.raises(DataError) as warm_error:
        warm.to_connect_data("t", _message(schema, "NaN"))
    with pytest.raises(DataError) as cold_error:
        _converter().to_connect_data("t", _message(schema, "NaN"))
    assert str(warm_error.value) == str(cold_error.value)
    with pytest.raises(DataError, match="Invalid type for Decimal"):
        warm.to_connect_data("t", _message(schema, "true"))
