"""JsonSchemaConverter against the test Schema Registry: payload bytes both ways, the JSON
Schema mapping, schemas written by other producers, and errors."""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from typing import Any

import httpx
import pytest
from tests.support.registry_converters import (
    configured,
    header,
    plain,
)

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.json_schema import JsonSchemaConverter


def converter(url: str, **configs: Any) -> JsonSchemaConverter:
    return configured(JsonSchemaConverter(), url, **configs)


def register(url: str, subject: str, document: Any) -> int:
    response = httpx.post(
        f"{url}/subjects/{subject}/versions",
        json={"schema": json.dumps(document), "schemaType": "JSON"},
    )
    response.raise_for_status()
    return int(response.json()["id"])


ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", Schema.INT32_SCHEMA)
    .field("small", Schema.INT8_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("price", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field("counts", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("level", SchemaBuilder.int16().default_value(3).build())
    .build()
)
TS = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.UTC)
VALUE = (
    Struct(ORDER)
    .put("id", 7)
    .put("small", -1)
    .put("score", 1e10)
    .put("ratio", 0.5)
    .put("raw", b"\x00\xff")
    .put("price", decimal.Decimal("1.25"))
    .put("day", datetime.date(2024, 1, 2))
    .put("ts", TS)
    .put("tags", ["a"])
    .put("attrs", {"k": 1})
    .put("counts", {5: "x"})
)
# Jackson's text for the same value: Java's Double.toString, base64 bytes (Decimal too),
# Date/Timestamp as numbers, a null optional as null, defaults applied
PAYLOAD = (
    b'{"id":7,"small":-1,"score":1.0E10,"ratio":0.5,"note":null,"raw":"AP8=",'
    b'"price":"fQ==","day":19724,"ts":1704164645678,"tags":["a"],"attrs":{"k":1},'
    b'"counts":[{"key":5,"value":"x"}],"level":3}'
)


def test_payload_bytes_and_round_trip(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, ORDER, VALUE)
    assert data is not None
    schema_id = int.from_bytes(data[1:5], "big")
    assert data == header(schema_id) + PAYLOAD
    result = conv.to_connect_data(topic, data)
    assert plain(result.value) == plain(VALUE.put("level", 3))
    assert result.schema.name == "com.example.Order" and result.schema.version == 1
    assert [f.name for f in result.schema.fields] == [f.name for f in ORDER.fields]
    assert result.schema.field("small").schema.type is Type.INT8
    assert result.schema.field("note").schema.optional


def test_json_schema_document() -> None:
    conv = JsonSchemaConverter()
    conv.configure({"schema.registry.url": "http://unused"}, False)
    document = conv.json_schema(ORDER)
    assert document["type"] == "object" and document["title"] == "com.example.Order"
    props = document["properties"]
    assert props["id"] == {"type": "integer", "connect.type": "int32", "connect.index": 0}
    assert props["note"] == {"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 4}
    assert props["price"] == {
        "type": "string",
        "connect.type": "bytes",
        "title": "org.apache.kafka.connect.data.Decimal",
        "connect.version": 1,
        "connect.parameters": {"scale": "2"},
        "connect.index": 6,
    }
    assert props["attrs"]["connect.type"] == "map"
    assert props["attrs"]["additionalProperties"] == {"type": "integer", "connect.type": "int64"}
    assert props["counts"]["items"]["properties"]["key"]["connect.index"] == 0
    assert props["level"]["default"] == 3
    assert "additionalProperties" not in document


def test_decimal_numeric(schema_registry: str, topic: str) -> None:
    schema = SchemaBuilder.struct().field("p", Decimal.schema(3)).build()
    conv = converter(schema_registry, **{"decimal.format": "NUMERIC"})
    data = conv.from_connect_data(topic, schema, Struct(schema).put("p", decimal.Decimal("-0.125")))
    assert data is not None and data[5:] == b'{"p":-0.125}'
    assert conv.to_connect_data(topic, data).value.get("p") == decimal.Decimal("-0.125")


FOREIGN = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Customer",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "description": "full name"},
        "email": {"type": ["null", "string"]},
        "score": {"type": "number"},
        "vip": {"type": "boolean", "default": False},
        "tier": {"enum": ["gold", "silver"]},
        "address": {"$ref": "#/definitions/Address"},
        "phones": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "name"],
    "definitions": {
        "Address": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_schema_written_by_another_producer(schema_registry: str, topic: str) -> None:
    schema_id = register(schema_registry, f"{topic}-value", FOREIGN)
    body = {
        "id": 12,
        "name": "Ann",
        "email": None,
        "score": 2.5,
        "tier": "gold",
        "address": {"city": "Oslo"},
        "phones": ["1"],
    }
    data = header(schema_id) + json.dumps(body).encode()
    result = converter(schema_registry).to_connect_data(topic, data)
    schema = result.schema
    assert schema.name == "Customer"
    assert schema.field("id").schema.type is Type.INT64
    assert schema.field("score").schema.type is Type.FLOAT64
    assert schema.field("name").schema.doc == "full name"
    assert schema.field("email").schema.optional
    assert schema.field("tier").schema.parameters == {
        "io.confluent.connect.json.Enum": "",
        "io.confluent.connect.json.Enum.gold": "gold",
        "io.confluent.connect.json.Enum.silver": "silver",
    }
    assert plain(result.value) == {**body, "vip": False}  # a missing property takes its default


def test_optional_for_nonrequired(schema_registry: str, topic: str) -> None:
    schema_id = register(schema_registry, f"{topic}-value", FOREIGN)
    conv = converter(schema_registry, **{"use.optional.for.nonrequired": "true"})
    data = header(schema_id) + b'{"id":1,"name":"x"}'
    result = conv.to_connect_data(topic, data)
    assert not result.schema.field("id").schema.optional
    assert result.schema.field("score").schema.optional


def test_additional_properties_false(schema_registry: str) -> None:
    conv = converter(schema_registry, **{"object.additional.properties": "false"})
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    assert conv.json_schema(schema)["additionalProperties"] is False


def test_nulls_and_errors(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    assert conv.from_connect_data(topic, None, None) is None
    assert conv.from_connect_data(topic, Schema.OPTIONAL_STRING_SCHEMA, None) is None
    assert conv.to_connect_data(topic, None) == (None, None)
    data = conv.from_connect_data(topic, Schema.STRING_SCHEMA, "x")
    assert data is not None and data[5:] == b'"x"'
    with pytest.raises(DataError, match="Unknown magic byte"):
        conv.to_connect_data(topic, b"{}")
    with pytest.raises(DataError, match="failed due to serialization error"):
        conv.to_connect_data(topic, data[:5] + b'{"x"')
    required = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    data = conv.from_connect_data(topic + "r", required, Struct(required).put("a", 1))
    assert data is not None
    with pytest.raises(DataError, match="Invalid null value for required INT32 field"):
        conv.to_connect_data(topic + "r", data[:5] + b'{"a":null}')


def test_bytes_are_base64(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, Schema.BYTES_SCHEMA, b"\x01\x02")
    assert data is not None and data[5:] == b'"' + base64.b64encode(b"\x01\x02") + b'"'
    assert conv.to_connect_data(topic, data).value == b"\x01\x02"
