"""JsonConverter against the vectors of Kafka's JsonConverterTest."""

from __future__ import annotations

import datetime
import decimal
import json
import math

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.converters.json import JsonConverter

UTC = datetime.UTC


def converter(**configs: str) -> JsonConverter:
    result = JsonConverter()
    result.configure(configs, False)
    return result


def to_json(schema: Schema | None, value: object, **configs: str) -> bytes | None:
    return converter(**configs).from_connect_data("topic", schema, value)


def from_json(data: bytes | None, **configs: str):  # type: ignore[no-untyped-def]
    return converter(**configs).to_connect_data("topic", data)


def _env(schema: str, payload: str) -> bytes:
    return f'{{"schema":{schema},"payload":{payload}}}'.encode()


# -- fromConnectData: exact bytes -----------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (BOOLEAN_SCHEMA, True, _env('{"type":"boolean","optional":false}', "true")),
        (INT8_SCHEMA, 12, _env('{"type":"int8","optional":false}', "12")),
        (INT16_SCHEMA, 12, _env('{"type":"int16","optional":false}', "12")),
        (INT32_SCHEMA, 12, _env('{"type":"int32","optional":false}', "12")),
        (INT64_SCHEMA, 4398046511104, _env('{"type":"int64","optional":false}', "4398046511104")),
        (FLOAT32_SCHEMA, 12.34, _env('{"type":"float","optional":false}', "12.34")),
        (FLOAT64_SCHEMA, 12.34, _env('{"type":"double","optional":false}', "12.34")),
        (
            BYTES_SCHEMA,
            b"test-string",
            _env('{"type":"bytes","optional":false}', '"dGVzdC1zdHJpbmc="'),
        ),
        (STRING_SCHEMA, "test-string", _env('{"type":"string","optional":false}', '"test-string"')),
        (
            SchemaBuilder.array(INT32_SCHEMA).build(),
            [1, 2, 3],
            _env(
                '{"type":"array","items":{"type":"int32","optional":false},"optional":false}',
                "[1,2,3]",
            ),
        ),
        (
            SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(),
            {"key1": 12, "key2": 15},
            _env(
                '{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32",'
                '"optional":false},"optional":false}',
                '{"key1":12,"key2":15}',
            ),
        ),
        (
            Date.SCHEMA,
            datetime.date(1997, 5, 19),
            _env(
                '{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1}',
                "10000",
            ),
        ),
        (
            Time.SCHEMA,
            datetime.time(4, 0),
            _env(
                '{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1}',
                "14400000",
            ),
        ),
        (
            Timestamp.SCHEMA,
            datetime.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC),
            _env(
                '{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1}',
                "4000000000",
            ),
        ),
        (
            SchemaBuilder.boolean()
            .required()
            .name("bool")
            .version(3)
            .doc("the documentation")
            .parameter("foo", "bar")
            .build(),
            True,
            _env(
                '{"type":"boolean","optional":false,"name":"bool","version":3,'
                '"doc":"the documentation","parameters":{"foo":"bar"}}',
                "true",
            ),
        ),
        (
            SchemaBuilder.boolean().default_value(True).build(),
            True,
            _env('{"type":"boolean","optional":false,"default":true}', "true"),
        ),
        (OPTIONAL_BOOLEAN_SCHEMA, None, _env('{"type":"boolean","optional":true}', "null")),
        (None, True, _env("null", "true")),
        (None, [1, "string", True], _env("null", '[1,"string",true]')),
        (
            None,
            {"key1": 12, "key2": "string", "key3": True},
            _env("null", '{"key1":12,"key2":"string","key3":true}'),
        ),
    ],
)
def test_from_connect_data_exact_bytes(
    schema: Schema | None, value: object, expected: bytes
) -> None:
    assert to_json(schema, value) == expected


def test_map_with_non_string_keys_is_array_of_pairs() -> None:
    schema = SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build()
    out = orjson.loads(to_json(schema, {1: 12, 2: 15}))  # type: ignore[arg-type]
    assert out["schema"] == {
        "type": "map",
        "keys": {"type": "int32", "optional": False},
        "values": {"type": "int32", "optional": False},
        "optional": False,
    }
    assert sorted(out["payload"]) == [[1, 12], [2, 15]]


def test_schemaless_map_with_mixed_keys_is_array_of_pairs() -> None:
    out = orjson.loads(to_json(None, {"string": 12, 52: "string", False: True}))  # type: ignore[arg-type]
    assert out["schema"] is None
    assert sorted(map(json.dumps, out["payload"])) == sorted(
        map(json.dumps, [["string", 12], [52, "string"], [False, True]])
    )


def _struct_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .field("field1", BOOLEAN_SCHEMA)
        .field("field2", STRING_SCHEMA)
        .field("field3", STRING_SCHEMA)
        .field("field4", BOOLEAN_SCHEMA)
        .build()
    )


def test_struct_exact_bytes() -> None:
    schema = _struct_schema()
    value = Struct(schema).put("field1", True).put("field2", "string2").put("field3", "string3")
    value.put("field4", False)
    assert to_json(schema, value) == (
        b'{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"field1"},'
        b'{"type":"string","optional":false,"field":"field2"},{"type":"string","optional":false,'
        b'"field":"field3"},{"type":"boolean","optional":false,"field":"field4"}],"optional":false},'
        b'"payload":{"field1":true,"field2":"string2","field3":"string3","field4":false}}'
    )


DECIMAL_SCHEMA_2 = (
    b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
    b'"version":1,"parameters":{"scale":"2"}}'
)


def test_decimal_base64_and_numeric() -> None:
    assert to_json(Decimal.schema(2), decimal.Decimal("1.56")) == (
        b'{"schema":' + DECIMAL_SCHEMA_2 + b',"payload":"AJw="}'
    )
    assert to_json(Decimal.schema(2), decimal.Decimal("1.56"), **{"decimal.format": "NUMERIC"}) == (
        b'{"schema":' + DECIMAL_SCHEMA_2 + b',"payload":1.56}'
    )
    numeric4 = to_json(
        Decimal.schema(4), decimal.Decimal("1.5600"), **{"decimal.format": "numeric"}
    )
    assert numeric4 is not None and numeric4.endswith(b',"payload":1.5600}')


@pytest.mark.parametrize("schemas_enable", ["true", "false"])
def test_null_schema_and_value_is_tombstone(schemas_enable: str) -> None:
    assert to_json(None, None, **{"schemas.enable": schemas_enable}) is None


def test_schemas_disabled_writes_only_the_payload() -> None:
    assert to_json(None, True, **{"schemas.enable": "false"}) == b"true"
    assert to_json(INT32_SCHEMA, 7, **{"schemas.enable": "false"}) == b"7"


OPTIONAL_DEFAULT = SchemaBuilder.string().optional().default_value("default").build()


@pytest.mark.parametrize(("replace", "payload"), [("true", b'"default"'), ("false", b"null")])
def test_replace_null_with_default(replace: str, payload: bytes) -> None:
    out = to_json(OPTIONAL_DEFAULT, None, **{"replace.null.with.default": replace})
    assert (
        out
        == b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":'
        + payload
        + b"}"
    )
    schema = SchemaBuilder.struct().field("field1", OPTIONAL_DEFAULT).build()
    out = to_json(schema, Struct(schema), **{"replace.null.with.default": replace})
    assert out == (
        b'{"schema":{"type":"struct","fields":[{"type":"string","optional":true,'
        b'"default":"default","field":"field1"}],"optional":false},"payload":{"field1":'
        + payload
        + b"}}"
    )


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (FLOAT64_SCHEMA, True),
        (None, decimal.Decimal("1.56")),
        (INT8_SCHEMA, 300),
        (STRING_SCHEMA, None),
    ],
)
def test_invalid_connect_data_raises_data_error_naming_topic(
    schema: Schema | None, value: object
) -> None:
    with pytest.raises(DataError, match="topic"):
        to_json(schema, value)


def test_struct_with_other_schema_is_mismatch() -> None:
    other = SchemaBuilder.struct().field("x", INT32_SCHEMA).build()
    with pytest.raises(DataError, match="Mismatching schema"):
        to_json(_struct_schema(), Struct(other).put("x", 1))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e7, "1.0E7"),
        (1.2345678e7, "1.2345678E7"),
        (1e-4, "1.0E-4"),
        (-2.5e-5, "-2.5E-5"),
        (1e22, "1.0E22"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (float("nan"), '"NaN"'),
        (float("inf"), '"Infinity"'),
    ],
)
def test_doubles_are_written_like_java(value: float, text: str) -> None:
    assert to_json(FLOAT64_SCHEMA, value, **{"schemas.enable": "false"}) == text.encode()
    assert to_json(None, [value], **{"schemas.enable": "false"}) == f"[{text}]".encode()
    schema = SchemaBuilder.struct().field("d", FLOAT64_SCHEMA).build()
    out = to_json(schema, Struct(schema).put("d", value), **{"schemas.enable": "false"})
    assert out == f'{{"d":{text}}}'.encode()


def test_float32_is_written_like_java_float() -> None:
    assert to_json(FLOAT32_SCHEMA, 1.1, **{"schemas.enable": "false"}) == b"1.1"
    # The shortest digits, as JDK 19+ prints them (JDK 17 printed 1.23456792E8).
    assert to_json(FLOAT32_SCHEMA, 123456789.0, **{"schemas.enable": "false"}) == b"1.2345679E8"


# -- toConnectData ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "schema", "value"),
    [
        (b'{ "schema": { "type": "boolean" }, "payload": true }', BOOLEAN_SCHEMA, True),
        (
            b'{ "schema": { "type": "boolean", "optional": true }, "payload": null }',
            OPTIONAL_BOOLEAN_SCHEMA,
            None,
        ),
        (
            b'{ "schema": { "type": "int64" }, "payload": 4398046511104 }',
            INT64_SCHEMA,
            4398046511104,
        ),
        (b'{ "schema": { "type": "int8" }, "payload": 0012 }', INT8_SCHEMA, 12),
        (b'{ "schema": { "type": "int16" }, "payload": 000123 }', INT16_SCHEMA, 123),
        (b'{ "schema": { "type": "int32" }, "payload": 000012345 }', INT32_SCHEMA, 12345),
        (b'{ "schema": { "type": "int64" }, "payload": 00000123456789 }', INT64_SCHEMA, 123456789),
        (b'{ "schema": { "type": "double" }, "payload": 12.34 }', FLOAT64_SCHEMA, 12.34),
        (
            b'{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }',
            BYTES_SCHEMA,
            b"test-string",
        ),
        (
            b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }',
            STRING_SCHEMA,
            "foo-bar-baz",
        ),
        (
            b'{ "schema": { "type": "array", "items": { "type" : "int32" } },'
            b' "payload": [1, 2, 3] }',
            SchemaBuilder.array(INT32_SCHEMA).build(),
            [1, 2, 3],
        ),
        (
            b'{ "schema": { "type": "map", "keys": { "type" : "string" },'
            b' "values": { "type" : "int32" } },'
            b' "payload": { "key1": 12, "key2": 15} }',
            SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(),
            {"key1": 12, "key2": 15},
        ),
        (
            b'{ "schema": { "type": "map", "keys": { "type" : "int32" },'
            b' "values": { "type" : "int32" } },'
            b' "payload": [ [1, 12], [2, 15] ] }',
            SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(),
            {1: 12, 2: 15},
        ),
        (
            b'{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date","version":1},"payload":10000}',
            Date.SCHEMA,
            datetime.date(1997, 5, 19),
        ),
        (
            b'{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time","version":1},"payload":14400000}',
            Time.SCHEMA,
            datetime.time(4, 0),
        ),
        (
            b'{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp","version":1},'
            b'"payload":4000000000}',
            Timestamp.SCHEMA,
            datetime.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC),
        ),
        (b'{"schema":null,"payload":12}', None, 12),
        (b'{"schema":null,"payload":12.24}', None, 12.24),
        (b'{"schema":null,"payload":[1, "2", 3]}', None, [1, "2", 3]),
        (b'{"schema":null,"payload":{"field1":1,"field2":2}}', None, {"field1": 1, "field2": 2}),
        (b'{"schema":null,"payload":null}', None, None),
    ],
)
def test_to_connect_data(data: bytes, schema: Schema | None, value: object) -> None:
    result = from_json(data)
    assert result.schema == schema
    assert result.value == value
    assert type(result.value) is type(value)


def test_to_connect_default_and_float32() -> None:
    result = from_json(b'{ "schema": { "type": "boolean", "default": true }, "payload": null }')
    assert result.schema == SchemaBuilder.boolean().default_value(True).build()
    assert result.value is True
    result = from_json(b'{ "schema": { "type": "float" }, "payload": 12.34 }')
    assert result.schema == FLOAT32_SCHEMA
    assert result.value == pytest.approx(12.34, rel=1e-7)
    assert to_json(FLOAT32_SCHEMA, result.value, **{"schemas.enable": "false"}) == b"12.34"


def test_to_connect_struct() -> None:
    data = (
        b'{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" },'
        b' { "field": "field2", "type": "string" },'
        b' { "field": "field3", "type": "string", "optional": true }] },'
        b' "payload": { "field1": true, "field2": "string" } }'
    )
    result = from_json(data)
    assert result.schema is not None
    expected = (
        SchemaBuilder.struct()
        .field("field1", BOOLEAN_SCHEMA)
        .field("field2", STRING_SCHEMA)
        .field("field3", OPTIONAL_STRING_SCHEMA)
        .build()
    )
    assert result.schema == expected
    assert result.value == Struct(expected).put("field1", True).put("field2", "string")


def test_to_connect_decimals() -> None:
    base = b'"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,'
    scale2 = b"{" + base + b'"parameters":{"scale":"2"}}'
    assert from_json(_env(scale2.decode(), '"AJw="')).value == decimal.Decimal("1.56")
    assert from_json(_env(scale2.decode(), "1.56")).value == decimal.Decimal("1.56")
    scale4 = (b"{" + base + b'"parameters":{"scale":"4"}}').decode()
    value = from_json(_env(scale4, "1.5600")).value
    assert str(value) == "1.5600"
    scale17 = (b"{" + base + b'"parameters":{"scale":"17"}}').decode()
    assert str(from_json(_env(scale17, "1.23456789123456789")).value) == "1.23456789123456789"
    with_default = (b"{" + base + b'"parameters":{"scale":"2"},"default":"AJw="}').decode()
    assert from_json(_env(with_default, "null")).value == decimal.Decimal("1.56")


def test_to_connect_temporal_defaults() -> None:
    date = '{"type":"int32","name":"org.apache.kafka.connect.data.Date","version":1,"default":0}'
    assert from_json(_env(date, "null")).value == datetime.date(1970, 1, 1)
    time = '{"type":"int32","name":"org.apache.kafka.connect.data.Time","version":1,"default":0}'
    assert from_json(_env(time, "null")).value == datetime.time(0)
    ts = (
        '{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp","version":1,"default":42}'
    )
    assert from_json(_env(ts, "null")).value == datetime.datetime(
        1970, 1, 1, 0, 0, 0, 42000, tzinfo=UTC
    )


@pytest.mark.parametrize(("replace", "value"), [("true", "default"), ("false", None)])
def test_to_connect_replace_null_with_default(replace: str, value: object) -> None:
    data = b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}'
    assert from_json(data, **{"replace.null.with.default": replace}).value == value


def test_null_bytes_and_schemaless_input() -> None:
    assert from_json(None) == (None, None)
    assert from_json(b"", **{"schemas.enable": "false"}) == (None, None)
    assert from_json(b'{ "a": "", "b": null}', **{"schemas.enable": "false"}) == (
        None,
        {"a": "", "b": None},
    )
    assert from_json(b"true", **{"schemas.enable": "false"}) == (None, True)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1}',
        b'{"schema":null}',
        b'{"schema":null,"payload":1,"extra":2}',
        b"[1,2]",
        b"not json",
        b'{"schema":{"type":"int32"},"payload":"x"}',
        b'{"schema":{"type":"struct","fields":[{"type":"int32","field":"a"}]},"payload":{}}',
        b'{"schema":{"type":"nope"},"payload":1}',
        b'{"schema":{"optional":true},"payload":1}',
    ],
)
def test_bad_input_raises_data_error_naming_topic(data: bytes) -> None:
    with pytest.raises(DataError, match="topic 'topic'"):
        from_json(data)


def test_envelope_error_has_kafkas_text() -> None:
    with pytest.raises(DataError) as info:
        from_json(b'{"a":1}')
    assert str(info.value).startswith(
        'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
        "contain additional fields. If you are trying to deserialize plain JSON data, set "
        "schemas.enable=false in your converter configuration."
    )


def test_repeated_schema_uses_fast_path_but_still_validates() -> None:
    conv = converter()
    good = _env('{"type":"int8","optional":false}', "5")
    assert conv.to_connect_data("t", good).value == 5
    assert conv.to_connect_data("t", good).value == 5
    with pytest.raises(DataError):
        conv.to_connect_data("t", _env('{"type":"int8","optional":false}', '5,"x":1'))
    with pytest.raises(DataError):
        conv.to_connect_data("t", _env('{"type":"int8","optional":false}', "500"))


def test_schema_caches_are_bounded() -> None:
    conv = converter(**{"schemas.cache.size": "2"})
    for i in range(5):
        schema = SchemaBuilder.int32().name(f"n{i}").build()
        data = conv.from_connect_data("t", schema, i)
        assert conv.to_connect_data("t", data).schema == schema
    assert len(conv._from_connect_cache) == 2
    assert len(conv._to_connect_cache) == 2


def test_config_and_header_methods() -> None:
    conv = JsonConverter()
    assert set(conv.config().names()) == {
        "converter.type",
        "schemas.enable",
        "schemas.cache.size",
        "decimal.format",
        "replace.null.with.default",
    }
    with pytest.raises(ConfigError):
        conv.configure({"decimal.format": "HEX"}, False)
    conv.configure({"schemas.enable": "false"})
    assert conv.from_connect_header("t", "h", INT32_SCHEMA, 3) == b"3"
    assert conv.to_connect_header("t", "h", b"[1]") == (None, [1])


# -- round trips -----------------------------------------------------------------------------
_PRIMITIVES = [
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    FLOAT64_SCHEMA,
    BOOLEAN_SCHEMA,
]
_PRIMITIVES += [STRING_SCHEMA, BYTES_SCHEMA, FLOAT32_SCHEMA, Decimal.schema(3), Date.SCHEMA]
_PRIMITIVES += [Time.SCHEMA, Timestamp.SCHEMA]


def _leaf_values(schema: Schema) -> st.SearchStrategy[object]:
    if schema.name == Decimal.LOGICAL_NAME:
        return st.decimals(
            allow_nan=False, allow_infinity=False, places=3, max_value=10**12, min_value=-(10**12)
        )
    if schema.name == Date.LOGICAL_NAME:
        return st.dates()
    if schema.name == Time.LOGICAL_NAME:
        return st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    if schema.name == Timestamp.LOGICAL_NAME:
        return st.datetimes(timezones=st.just(UTC)).map(
            lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)
        )
    bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
    if schema.type in bits:
        b = bits[schema.type]
        return st.integers(-(2 ** (b - 1)), 2 ** (b - 1) - 1)
    if schema.type is Type.FLOAT64:
        return st.floats(allow_nan=False)
    if schema.type is Type.FLOAT32:
        return st.floats(width=32, allow_nan=False)
    if schema.type is Type.BOOLEAN:
        return st.booleans()
    if schema.type is Type.STRING:
        return st.text()
    return st.binary()


@st.composite
def schema_and_value(draw: st.DrawFn, depth: int = 2) -> tuple[Schema, object]:
    kind = draw(st.sampled_from(["leaf", "leaf", "array", "map", "struct"] if depth else ["leaf"]))
    if kind == "leaf":
        schema = draw(st.sampled_from(_PRIMITIVES))
        if draw(st.booleans()):
            optional = SchemaBuilder.type(schema.type).optional()
            if schema.name:
                optional.name(schema.name).version(1)
            if schema.parameters:
                optional.parameters(schema.parameters)
            schema = optional.build()
            value = draw(st.none() | _leaf_values(schema))
        else:
            value = draw(_leaf_values(schema))
        return schema, value
    if kind == "array":
        element, _ = draw(schema_and_value(depth - 1))
        values = draw(
            st.lists(schema_and_value(depth - 1).filter(lambda sv: sv[0] == element), max_size=3)
        )
        return SchemaBuilder.array(element).build(), [v for _, v in values]
    if kind == "map":
        key = draw(st.sampled_from([STRING_SCHEMA, INT32_SCHEMA]))
        value_schema = draw(st.sampled_from(_PRIMITIVES))
        entries = draw(st.dictionaries(_leaf_values(key), _leaf_values(value_schema), max_size=3))
        return SchemaBuilder.map(key, value_schema).build(), entries
    builder = SchemaBuilder.struct()
    members = draw(st.lists(schema_and_value(depth - 1), max_size=4))
    for i, (field_schema, _) in enumerate(members):
        builder.field(f"f{i}", field_schema)
    schema = builder.build()
    struct = Struct(schema)
    for i, (_, field_value) in enumerate(members):
        struct.put(f"f{i}", field_value)
    return schema, struct


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


@settings(max_examples=150, deadline=None)
@given(schema_and_value(), st.sampled_from(["BASE64", "NUMERIC"]))
def test_round_trip_with_schemas(sv: tuple[Schema, object], decimal_format: str) -> None:
    schema, value = sv
    conv = converter(**{"decimal.format": decimal_format})
    data = conv.from_connect_data("t", schema, value)
    result = conv.to_connect_data("t", data)
    assert result.schema == schema
    assert _same(result.value, value)
    assert conv.from_connect_data("t", schema, result.value) == data  # stable bytes


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(_json_values, st.sampled_from(["true", "false"]))
def test_round_trip_schemaless(value: object, schemas_enable: str) -> None:
    conv = converter(**{"schemas.enable": schemas_enable})
    data = conv.from_connect_data("t", None, value)
    if value is None:
        assert data is None
        return
    assert conv.to_connect_data("t", data) == (None, value)
    # The bytes are valid JSON and equal to the value parsed by a standard parser.
    assert json.loads(data) == (
        value if schemas_enable == "false" else {"schema": None, "payload": value}
    )
