"""The envelope's schema JSON: Kafka's key order, parsing rules and errors (§6.3)."""

from __future__ import annotations

import orjson
import pytest

from sparkcat.api.data import INT32_SCHEMA, STRING_SCHEMA, Decimal, SchemaBuilder
from sparkcat.api.errors import DataError
from sparkcat.converters.json import JsonConverter
from sparkcat.converters.json.schema import LRUCache

CONVERTER = JsonConverter()


def test_key_order_with_every_member() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.array(INT32_SCHEMA).optional().build())
        .field("m", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build())
        .name("n")
        .version(2)
        .doc("d")
        .parameter("p", "v")
        .build()
    )
    assert orjson.dumps(CONVERTER.as_json_schema(schema)) == (
        b'{"type":"struct","fields":[{"type":"array","items":{"type":"int32","optional":false},'
        b'"optional":true,"field":"a"},{"type":"map","keys":{"type":"string","optional":false},'
        b'"values":{"type":"int32","optional":false},"optional":false,"field":"m"}],'
        b'"optional":false,"name":"n","version":2,"doc":"d","parameters":{"p":"v"}}'
    )


def test_round_trip_of_schema_with_defaults() -> None:
    schema = SchemaBuilder.struct().field("d", Decimal.builder(2).optional().build()).build()
    assert CONVERTER.as_connect_schema(CONVERTER.as_json_schema(schema)) == schema
    with_default = SchemaBuilder.int32().default_value(5).build()
    assert CONVERTER.as_json_schema(with_default) == {
        "type": "int32",
        "optional": False,
        "default": 5,
    }
    assert CONVERTER.as_connect_schema({"type": "int32", "default": 5}) == with_default
    assert CONVERTER.as_connect_schema(None) is None


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({}, "Schema must contain 'type' field"),
        ({"type": "nope"}, "Unknown schema type: nope"),
        ({"type": "array"}, "Array schema did not specify the element type"),
        ({"type": "map", "values": {"type": "int8"}}, "Map schema did not specify the key type"),
        ({"type": "map", "keys": {"type": "int8"}}, "Map schema did not specify the value type"),
        ({"type": "struct", "fields": {}}, 'Struct schema\'s "fields" argument is not an array.'),
        (
            {"type": "struct", "fields": [{"type": "int8"}]},
            "Struct schema's field name not specified properly",
        ),
        ({"type": "int8", "parameters": {"a": 1}}, "Schema parameters must have string values."),
    ],
)
def test_malformed_schemas(node: object, message: str) -> None:
    with pytest.raises(DataError) as info:
        CONVERTER.as_connect_schema(node)
    assert str(info.value) == message


def test_lru_cache_evicts_least_recently_used() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c"), len(cache)) == (1, 3, 2)
