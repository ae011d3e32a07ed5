"""Structs inside structs (a Debezium envelope: before, after, source): the payload of the
outer struct is the payloads of its nested structs, byte for byte, each as a converter of
the nested schema alone writes it; nulls, defaults and wrong values fail or fall back alike."""

from __future__ import annotations

import decimal
from typing import Any

import orjson
import pytest

from sparkcat.api.data import Decimal, Schema, SchemaBuilder, Struct
from sparkcat.api.errors import DataError
from sparkcat.converters.json import JsonConverter

ROW = (
    SchemaBuilder.struct()
    .name("srv.public.t.Value")
    .field("id", SchemaBuilder.int32().build())
    .field("score", SchemaBuilder.float64().optional().build())
    .field("price", Decimal.builder(2).optional().build())
    .field("seen", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").optional().build())
    .optional()
    .build()
)
SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .field("name", SchemaBuilder.string().build())
    .field(
        "snapshot",
        SchemaBuilder.string()
        .name("io.debezium.data.Enum")
        .optional()
        .default_value("false")
        .build(),
    )
    .build()
)


def deep(levels: int) -> Schema:
    schema = SchemaBuilder.struct().field("leaf", SchemaBuilder.int8().build()).build()
    for _ in range(levels):
        schema = SchemaBuilder.struct().field("down", schema).optional().build()
    return schema


DEEP = deep(6)  # deeper than the converter writes inline
ENVELOPE = (
    SchemaBuilder.struct()
    .name("srv.public.t.Envelope")
    .field("before", ROW)
    .field("after", ROW)
    .field("source", SOURCE)
    .field("deep", DEEP)
    .field("op", SchemaBuilder.string().build())
    .build()
)


def converter(**configs: str) -> JsonConverter:
    conv = JsonConverter()
    conv.configure({"schemas.enable": "false", **configs}, False)
    return conv


def nest(schema: Schema, levels: int) -> Struct:
    if levels == 0:
        return Struct.from_values(schema, [5])
    inner = schema.fields[0].schema
    return Struct.from_values(schema, [nest(inner, levels - 1)])


def row(score: float | None, price: str | None) -> Struct:
    amount = None if price is None else decimal.Decimal(price)
    return Struct.from_values(ROW, [1, score, amount, 1_700_000_000_000_000])


def envelope(before: Any, after: Any, source: Any, deep_value: Any = None) -> Struct:
    # As a task builds it, trusted: the wrong values of the error cases are not refused here.
    return Struct.from_valid_values(ENVELOPE, [before, after, source, deep_value, "u"])


def expected(value: Struct, **configs: str) -> bytes:
    """The payload from each field's own converter: nested structs encoded on their own."""
    parts = []
    for field, item in zip(ENVELOPE.fields, value.values, strict=True):
        if item is None and field.schema.type.name == "STRUCT":
            data = b"null"
        else:
            data = converter(**configs).from_connect_data("t", field.schema, item) or b"null"
        parts.append(orjson.dumps(field.name) + b":" + data)
    return b"{" + b",".join(parts) + b"}"


SOURCES = [Struct.from_values(SOURCE, ["srv", "true"]), Struct(SOURCE).put("name", "srv")]


@pytest.mark.parametrize("decimals", ["BASE64", "NUMERIC"])
@pytest.mark.parametrize("source", SOURCES, ids=["snapshot-set", "snapshot-default"])
def test_nested_payloads_are_the_nested_structs_own(decimals: str, source: Struct) -> None:
    conv = converter(**{"decimal.format": decimals})
    for value in (
        envelope(None, row(0.5, "1.50"), source, nest(DEEP, 6)),
        envelope(row(1e7, None), row(None, "-0.01"), source),  # Java's 1.0E7
        envelope(row(float("nan"), "0.00"), None, source, nest(DEEP, 6)),
    ):
        assert conv.from_connect_data("t", ENVELOPE, value) == expected(
            value, **{"decimal.format": decimals}
        )


def test_the_envelope_splices_the_same_payload() -> None:
    value = envelope(None, row(0.5, "1.50"), SOURCES[0])
    conv = JsonConverter()
    conv.configure({}, False)
    data = conv.from_connect_data("t", ENVELOPE, value)
    assert data is not None and data.endswith(b',"payload":' + expected(value) + b"}")
    assert conv.to_connect_data("t", data).value == value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            envelope(None, Struct.from_values(SOURCE, ["x", None]), SOURCES[0]),
            "Mismatching schema.",
        ),
        (envelope(None, {"id": 1}, SOURCES[0]), "Mismatching schema."),
        (envelope(None, None, None), "null value for field that is required"),
    ],
    ids=["other-schema", "not-a-struct", "required-null"],
)
def test_wrong_nested_values_fail_as_on_their_own(value: Struct, message: str) -> None:
    with pytest.raises(DataError, match=message):
        converter().from_connect_data("t", ENVELOPE, value)
