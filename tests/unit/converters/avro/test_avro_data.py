"""Connect <-> Avro schema mapping beyond the golden cases: schemas other producers write,
Confluent's metadata parameters, enums, docs and names."""

from __future__ import annotations

import datetime
import decimal
import io
import json
from typing import Any

import fastavro
import pytest

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.avro._values import to_avro, to_connect
from sparkcat.converters.avro.avro_data import (
    AVRO_FIELD_DEFAULT_FLAG_PROP,
    AVRO_FIELD_DOC_PREFIX_PROP,
    AVRO_RECORD_DOC_PROP,
    AVRO_TYPE_ENUM,
    from_connect_schema,
    schema_text,
    to_connect_schema,
)
from sparkcat.converters.avro.converter import parse_for_fastavro

FOREIGN = {
    "type": "record",
    "name": "Payment",
    "namespace": "com.acme",
    "doc": "A payment",
    "fields": [
        {"name": "id", "type": {"type": "string", "avro.java.string": "String"}},
        {"name": "amount", "type": {"type": "fixed", "name": "Amt", "size": 4,
                                    "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CARD", "CASH"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}],
         "default": None},
        {"name": "retries", "type": "int", "default": 0, "doc": "how often"},
        {"name": "payer", "type": {"type": "record", "name": "Party",
                                   "fields": [{"name": "name", "type": "string"}]}},
        {"name": "payee", "type": "Party"},
    ],
}  # fmt: skip


def test_foreign_schema_to_connect() -> None:
    schema = to_connect_schema(FOREIGN, version=3)
    assert schema.name == "com.acme.Payment"
    assert schema.version == 3
    assert schema.parameters is not None
    assert schema.parameters[AVRO_RECORD_DOC_PROP] == "A payment"
    assert schema.parameters[AVRO_FIELD_DOC_PREFIX_PROP + "retries"] == "how often"
    assert schema.field("id").schema.parameters == {"avro.java.string": "String"}
    amount = schema.field("amount").schema
    assert amount.name == Decimal.LOGICAL_NAME
    assert amount.parameters == {
        "scale": "2",
        "connect.decimal.precision": "9",
        "connect.fixed.size": "4",
    }
    kind = schema.field("kind").schema
    assert kind.type is Type.STRING and kind.name == "com.acme.Kind"
    assert kind.parameters == {
        AVRO_TYPE_ENUM: "com.acme.Kind",
        f"{AVRO_TYPE_ENUM}.CARD": "CARD",
        f"{AVRO_TYPE_ENUM}.CASH": "CASH",
    }
    assert schema.field("at").schema == Timestamp.SCHEMA
    day = schema.field("day").schema
    assert day.optional and day.name == Date.LOGICAL_NAME and day.default_value is None
    retries = schema.field("retries").schema
    assert retries.default_value == 0
    assert retries.parameters == {AVRO_FIELD_DEFAULT_FLAG_PROP: "true"}
    assert schema.field("payee").schema == schema.field("payer").schema
    assert schema.field("payer").schema.name == "com.acme.Party"


def _write(avro: Any, datum: Any) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(avro), datum)
    return buffer.getvalue()


def test_foreign_values_to_connect() -> None:
    at = datetime.datetime(2024, 5, 6, 7, 8, 9, 10000, tzinfo=datetime.UTC)
    datum = {
        "id": "p1",
        "amount": decimal.Decimal("-12.34"),
        "kind": "CASH",
        "at": at,
        "day": datetime.date(2024, 5, 6),
        "retries": 2,
        "payer": {"name": "A"},
        "payee": {"name": "B"},
    }
    data = _write(FOREIGN, datum)  # fastavro applies the logical types itself here
    schema = to_connect_schema(FOREIGN)
    raw = fastavro.schemaless_reader(io.BytesIO(data), parse_for_fastavro(FOREIGN), None)
    convert = to_connect(schema)
    assert convert is not None
    value = convert(raw)
    assert isinstance(value, Struct)
    assert value.get("amount") == decimal.Decimal("-12.34")
    assert value.get("kind") == "CASH"
    assert value.get("at") == at
    assert value.get("day") == datetime.date(2024, 5, 6)
    assert value.get("payee").get("name") == "B"
    # and back: the same bytes (fixed decimal keeps its 4 bytes only if given 4 bytes)
    back = to_avro(schema)
    assert back is not None
    again = back(value)
    assert again["kind"] == "CASH" and again["payer"] == {"name": "A"}
    assert again["amount"] == (-1234).to_bytes(4, "big", signed=True)  # sign-extended
    # with enhanced.avro.schema.support the enum stays an enum: the original bytes again
    written = io.BytesIO()
    enhanced = from_connect_schema(schema, enhanced=True)
    fastavro.schemaless_writer(written, parse_for_fastavro(enhanced), again)
    assert written.getvalue() == data


def test_connect_round_trip_keeps_parameters_and_docs() -> None:
    schema = to_connect_schema(FOREIGN)
    avro = from_connect_schema(schema)
    assert avro["doc"] == "A payment"
    retries = next(f for f in avro["fields"] if f["name"] == "retries")
    # the default flag is not written as a parameter, and the default comes back
    assert retries == {"name": "retries", "type": "int", "doc": "how often", "default": 0}
    assert to_connect_schema(avro) == schema


def test_enhanced_schema_support_writes_enums() -> None:
    kind = to_connect_schema({"type": "enum", "name": "Kind", "namespace": "a", "symbols": ["X"]})
    plain = from_connect_schema(kind)
    assert plain["type"] == "string"
    enhanced = from_connect_schema(kind, enhanced=True)
    assert enhanced["type"] == "enum" and enhanced["symbols"] == ["X"]
    assert enhanced["name"] == "Kind" and enhanced["namespace"] == "a"


def test_doc_version_parameters_and_name_properties() -> None:
    schema = (
        SchemaBuilder.string()
        .name("my.Str")
        .version(4)
        .doc("d")
        .parameter("k", "v")
        .default_value("x")
        .build()
    )
    assert schema_text(from_connect_schema(schema)) == (
        '{"type":"string","connect.doc":"d","connect.version":4,'
        '"connect.parameters":{"k":"v"},"connect.default":"x","connect.name":"my.Str"}'
    )
    assert schema_text(from_connect_schema(schema, connect_meta_data=False)) == '"string"'
    back = to_connect_schema(from_connect_schema(schema))
    assert back == schema


def test_optional_struct_with_default_has_no_field_default() -> None:
    inner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    optional_inner = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .optional()
        .default_value(Struct(inner).put("a", 1))
        .build()
    )
    outer = SchemaBuilder.struct().field("o", optional_inner).build()
    field = from_connect_schema(outer)["fields"][0]
    # ["null", record]: a record default would not match the first branch, Avro drops it
    assert field["type"][0] == "null" and "default" not in field


def test_named_map_with_non_string_keys() -> None:
    schema = SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.STRING_SCHEMA).name("x.Pairs").build()
    avro = from_connect_schema(schema)
    assert avro["items"]["name"] == "Pairs" and avro["items"]["namespace"] == "x"
    assert avro["items"]["connect.internal.type"] == "MapEntry"
    assert to_connect_schema(avro).key_schema == Schema.INT64_SCHEMA


@pytest.mark.parametrize(
    "avro",
    [
        ["int", "int"],  # two members with the same Connect field name
        "null",
        {"type": "array", "items": "Unknown"},
    ],
)
def test_unsupported_avro_schemas(avro: Any) -> None:
    with pytest.raises(DataError):
        to_connect_schema(avro)


def test_schema_text_is_compact_json() -> None:
    schema = SchemaBuilder.struct().name("a.b.C").field("é", Schema.STRING_SCHEMA).build()
    text = schema_text(from_connect_schema(schema))
    assert " " not in text and "é" in text
    assert json.loads(text)["namespace"] == "a.b"


def test_float_defaults_are_written_as_java_prints_them() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("big", SchemaBuilder.float64().default_value(1e10).build())
        .field("half", SchemaBuilder.float32().default_value(0.5).build())
        .build()
    )
    text = schema_text(from_connect_schema(schema))
    assert '"connect.default":1.0E10},"default":1.0E10}' in text
    assert '"connect.default":0.5},"default":0.5}' in text
    assert to_connect_schema(json.loads(text)).field("big").schema.default_value == 1e10
