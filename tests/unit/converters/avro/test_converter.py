"""AvroConverter against the test Schema Registry: golden bytes both ways, subjects, configs
and the registry's errors."""

from __future__ import annotations

import json
import struct
from typing import Any

import httpx
import pytest
from tests.support.registry_converters import (
    configured,
    header,
    plain,
    versions,
)
from tests.unit.converters.avro.golden import GOLDEN, Golden, text, zz

from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.converters.avro import AvroConverter
from sparkcat.converters.avro.avro_data import from_connect_schema, schema_text
from sparkcat.converters.schema_registry.client import close_clients


def converter(url: str, is_key: bool = False, **configs: Any) -> AvroConverter:
    return configured(AvroConverter(), url, is_key, **configs)


def register(url: str, subject: str, avro_text: str) -> int:
    response = httpx.post(f"{url}/subjects/{subject}/versions", json={"schema": avro_text})
    response.raise_for_status()
    return int(response.json()["id"])


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: c.id)
def test_avro_schema_is_confluents(case: Golden) -> None:
    assert schema_text(from_connect_schema(case.schema)) == case.avro


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: c.id)
def test_golden_bytes_decode(schema_registry: str, topic: str, case: Golden) -> None:
    schema_id = register(schema_registry, f"{topic}-value", case.avro)
    message = b"\x00" + schema_id.to_bytes(4, "big") + case.payload
    result = converter(schema_registry).to_connect_data(topic, message)
    assert plain(result.value) == plain(case.value)
    assert result.schema.type is case.schema.type
    assert result.schema.name == case.schema.name


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: c.id)
def test_golden_bytes_encode(schema_registry: str, topic: str, case: Golden) -> None:
    # The schema Confluent's converter registered first: ours is the same text, so the same id
    # and no second version.
    schema_id = register(schema_registry, f"{topic}-value", case.avro)
    data = converter(schema_registry).from_connect_data(topic, case.schema, case.value)
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + case.payload
    assert versions(schema_registry, f"{topic}-value") == [1]


def test_decoded_schema_carries_the_subject_version(schema_registry: str, topic: str) -> None:
    case = next(c for c in GOLDEN if c.id == "order")
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, case.schema, case.value)
    assert data is not None
    result = conv.to_connect_data(topic, data)
    assert result.schema.version == 1  # no connect.version on the record: the subject version
    assert result.schema.field("price").schema == case.schema.field("price").schema
    status = result.schema.field("status").schema
    assert status.optional and status.default_value == "new"
    # a field with an Avro default and no connect.default is flagged as Confluent does
    assert result.schema.field("level").schema.default_value == 3


def test_round_trip_of_decoded_values(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    for case in GOLDEN:
        data = conv.from_connect_data(topic + case.id, case.schema, case.value)
        first = conv.to_connect_data(topic + case.id, data)
        again = conv.to_connect_data(
            topic + case.id, conv.from_connect_data(topic + case.id, first.schema, first.value)
        )
        assert plain(again.value) == plain(first.value)
        assert again.schema == first.schema


def test_null_values(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    assert conv.from_connect_data(topic, None, None) is None
    assert conv.from_connect_data(topic, Schema.OPTIONAL_STRING_SCHEMA, None) is None
    with pytest.raises(DataError, match="Found null value for non-optional schema"):
        conv.from_connect_data(topic, Schema.STRING_SCHEMA, None)
    assert conv.to_connect_data(topic, None) == (None, None)


def test_required_struct_field_missing(schema_registry: str, topic: str) -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match="Found null value for non-optional schema"):
        converter(schema_registry).from_connect_data(topic, schema, Struct(schema))


def test_key_subject(schema_registry: str, topic: str) -> None:
    converter(schema_registry, is_key=True).from_connect_data(topic, Schema.STRING_SCHEMA, "k")
    assert versions(schema_registry, f"{topic}-key") == [1]


@pytest.mark.parametrize(
    ("strategy", "subject"),
    [
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "com.ex.{t}"),
        ("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", "{t}-com.ex.{t}"),
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", "{t}-value"),
    ],
)
def test_subject_name_strategies(
    schema_registry: str, topic: str, strategy: str, subject: str
) -> None:
    schema = SchemaBuilder.struct().name(f"com.ex.{topic}").field("a", Schema.INT32_SCHEMA).build()
    conv = converter(schema_registry, **{"value.subject.name.strategy": strategy})
    data = conv.from_connect_data(topic, schema, Struct(schema).put("a", 1))
    assert versions(schema_registry, subject.format(t=topic)) == [1]
    assert plain(conv.to_connect_data(topic, data).value) == {"a": 1}


def test_invalid_strategy_is_a_config_error(schema_registry: str) -> None:
    with pytest.raises(ConfigError):
        converter(schema_registry, **{"value.subject.name.strategy": "Nope"})


def test_missing_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        AvroConverter().configure({}, False)


def test_auto_register_false_looks_up(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry, **{"auto.register.schemas": "false"})
    with pytest.raises(DataError, match=r"Subject '.*' not found\.; error code: 40401"):
        conv.from_connect_data(topic, Schema.STRING_SCHEMA, "x")
    schema_id = register(schema_registry, f"{topic}-value", '"string"')
    conv = converter(schema_registry, **{"auto.register.schemas": "false"})
    assert conv.from_connect_data(topic, Schema.STRING_SCHEMA, "x") == (
        b"\x00" + schema_id.to_bytes(4, "big") + text("x")
    )


def test_use_latest_version_writes_with_the_latest_schema(schema_registry: str, topic: str) -> None:
    latest = json.dumps(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "a", "type": "int"},
                {"name": "b", "type": "string", "default": "z"},
            ],
        }
    )
    schema_id = register(schema_registry, f"{topic}-value", latest)
    schema = SchemaBuilder.struct().name("R").field("a", Schema.INT32_SCHEMA).build()
    conv = converter(
        schema_registry,
        **{"use.latest.version": "true", "auto.register.schemas": "false"},
    )
    data = conv.from_connect_data(topic, schema, Struct(schema).put("a", 5))
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + zz(5) + text("z")


def test_incompatible_schema_is_refused_with_the_registry_message(
    schema_registry: str, topic: str
) -> None:
    conv = converter(schema_registry)
    v1 = SchemaBuilder.struct().name("R").field("a", Schema.INT32_SCHEMA).build()
    conv.from_connect_data(topic, v1, Struct(v1).put("a", 1))
    v2 = (
        SchemaBuilder.struct()
        .name("R")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.STRING_SCHEMA)
        .build()
    )
    with pytest.raises(DataError) as refused:
        conv.from_connect_data(topic, v2, Struct(v2).put("a", 1).put("b", "x"))
    message = str(refused.value)
    assert f"Failed to serialize Avro data from topic {topic}" in message
    assert "Schema being registered is incompatible with an earlier schema" in message
    assert "error code: 409" in message
    # adding an optional field is a BACKWARD-compatible evolution
    v3 = (
        SchemaBuilder.struct()
        .name("R")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    conv.from_connect_data(topic, v3, Struct(v3).put("a", 1))
    assert versions(schema_registry, f"{topic}-value") == [1, 2]


def test_malformed_messages(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    with pytest.raises(DataError, match="Unknown magic byte"):
        conv.to_connect_data(topic, b"\x01\x00\x00\x00\x01\x02")
    with pytest.raises(DataError, match="Schema 999999 not found"):
        conv.to_connect_data(topic, b"\x00" + (999999).to_bytes(4, "big") + b"\x02")
    data = conv.from_connect_data(topic, Schema.STRING_SCHEMA, "abc")
    assert data is not None
    with pytest.raises(DataError, match=f"Failed to deserialize data for topic {topic}"):
        conv.to_connect_data(topic, data[:-1])


def test_unreachable_registry_fails_the_record() -> None:
    conv = converter("http://127.0.0.1:9")
    # Not retriable (Confluent: a NetworkException), so errors.tolerance decides at once.
    with pytest.raises(DataError, match=r"Schema Registry unreachable at http://127\.0\.0\.1:9/"):
        conv.from_connect_data("t", Schema.STRING_SCHEMA, "x")
    data = b"\x00\x00\x00\x00\x01\x02"
    with pytest.raises(DataError, match=r"Schema Registry unreachable at http://127\.0\.0\.1:9/"):
        conv.to_connect_data("t", data)


UNION_WRITER = {
    "type": "record",
    "name": "Ev",
    "namespace": "ns",
    "fields": [
        {
            "name": "u",
            "type": [
                "null",
                "string",
                "long",
                {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]},
                {"type": "record", "name": "B", "fields": [{"name": "y", "type": "string"}]},
            ],
        }
    ],
}


@pytest.mark.parametrize(
    ("payload", "field", "expected"),
    [
        (zz(0), None, None),
        (zz(1) + text("hi"), "string", "hi"),
        (zz(2) + zz(5), "long", 5),
        (zz(3) + zz(1), "A", {"x": 1}),
        (zz(4) + text("q"), "B", {"y": "q"}),
    ],
)
def test_general_unions_both_ways(
    schema_registry: str, topic: str, payload: bytes, field: str | None, expected: Any
) -> None:
    schema_id = register(schema_registry, f"{topic}-value", json.dumps(UNION_WRITER))
    conv = converter(schema_registry)
    result = conv.to_connect_data(topic, header(schema_id) + payload)
    union = result.schema.field("u").schema
    assert union.name == "io.confluent.connect.avro.Union" and union.optional
    assert [f.name for f in union.fields] == ["string", "long", "A", "B"]
    value = result.value.get("u")
    if field is None:
        assert value is None
    else:
        assert plain(value) == {
            name: (expected if name == field else None) for name in ("string", "long", "A", "B")
        }
    # written back (Connect metadata added to the schema, so a new id): the same payload
    again = conv.from_connect_data(topic + "-again", result.schema, result.value)
    assert again is not None and again[5:] == payload


def test_ambiguous_unions_are_refused(schema_registry: str, topic: str) -> None:
    schema_id = register(schema_registry, f"{topic}-value", '["int","long"]')
    with pytest.raises(DataError, match="cannot be decoded unambiguously"):
        converter(schema_registry).to_connect_data(topic, header(schema_id) + zz(0) + zz(1))


ANYTHING_TEXT = (
    '{"type":"record","name":"Anything","namespace":"io.confluent.connect.avro","fields":['
    '{"name":"boolean","type":["null","boolean"],"default":null},'
    '{"name":"bytes","type":["null","bytes"],"default":null},'
    '{"name":"double","type":["null","double"],"default":null},'
    '{"name":"float","type":["null","float"],"default":null},'
    '{"name":"int","type":["null","int"],"default":null},'
    '{"name":"long","type":["null","long"],"default":null},'
    '{"name":"string","type":["null","string"],"default":null},'
    '{"name":"array","type":["null",{"type":"array","items":"Anything"}],"default":null},'
    '{"name":"map","type":["null",{"type":"array","items":{"type":"record","name":"MapEntry",'
    '"fields":[{"name":"key","type":"Anything"},{"name":"value","type":"Anything"}]}}],'
    '"default":null}]}'
)


def _anything(slot: int, body: bytes) -> bytes:
    """An Anything record with field ``slot`` set (union branch 1) and the others null."""
    return b"".join(zz(1) + body if i == slot else zz(0) for i in range(9))


def test_schemaless_values_use_confluents_anything_record(schema_registry: str, topic: str) -> None:
    from sparkcat.converters.avro._anything import ANYTHING_SCHEMA
    from sparkcat.converters.avro.avro_data import schema_text

    assert schema_text(ANYTHING_SCHEMA) == ANYTHING_TEXT
    schema_id = register(schema_registry, f"{topic}-value", ANYTHING_TEXT)
    conv = converter(schema_registry)
    cases = [
        (5, _anything(5, zz(5))),
        ("x", _anything(6, text("x"))),
        (True, _anything(0, b"\x01")),
        # {"k": [1.5]}: map slot, one entry: key Anything(string), value Anything(array)
        (
            {"k": [1.5]},
            _anything(
                8,
                zz(1)
                + _anything(6, text("k"))
                + _anything(7, zz(1) + _anything(2, struct.pack("<d", 1.5)) + zz(0))
                + zz(0),
            ),
        ),
    ]
    for value, payload in cases:
        data = conv.from_connect_data(topic, None, value)
        assert data == header(schema_id) + payload
        assert conv.to_connect_data(topic, data) == (None, value)


@pytest.mark.parametrize("source", ["USER_INFO", "URL"])
def test_basic_auth_credentials(source: str) -> None:
    from tests.support.schema_registry import SchemaRegistryServer

    server = SchemaRegistryServer(basic_auth="ann:s3cret").start()
    try:
        if source == "USER_INFO":
            configs = {
                "schema.registry.url": server.url,
                "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "ann:s3cret",
            }
        else:
            configs = {"schema.registry.url": server.url.replace("http://", "http://ann:s3cret@")}
        conv = AvroConverter()
        conv.configure(configs, False)
        data = conv.from_connect_data("t", Schema.STRING_SCHEMA, "x")
        assert data is not None and conv.to_connect_data("t", data).value == "x"
        denied = AvroConverter()
        denied.configure({"schema.registry.url": server.url}, False)
        with pytest.raises(DataError, match="Unauthorized; error code: 401"):
            denied.from_connect_data("t", Schema.STRING_SCHEMA, "x")
    finally:
        close_clients()
        server.stop()


def test_user_info_source_needs_user_info() -> None:
    with pytest.raises(ConfigError, match=r"basic\.auth\.user\.info"):
        AvroConverter().configure(
            {"schema.registry.url": "http://x", "basic.auth.credentials.source": "USER_INFO"},
            False,
        )


def test_latest_compatibility_strict(schema_registry: str, topic: str) -> None:
    # the latest version needs a field the record's schema lacks, without default
    latest = json.dumps(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
        }
    )
    schema_id = register(schema_registry, f"{topic}-value", latest)
    schema = SchemaBuilder.struct().name("R").field("a", Schema.INT32_SCHEMA).build()
    value = Struct(schema).put("a", 5)
    options = {"use.latest.version": "true", "auto.register.schemas": "false"}
    with pytest.raises(DataError, match=r"Set latest\.compatibility\.strict=false"):
        converter(schema_registry, **options).from_connect_data(topic, schema, value)
    loose = converter(schema_registry, **options, **{"latest.compatibility.strict": "false"})
    with pytest.raises(DataError, match="no value and no default for b"):
        loose.from_connect_data(topic, schema, value)  # fastavro cannot fill b either
    wider = (
        SchemaBuilder.struct()
        .name("R")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.STRING_SCHEMA)
        .build()
    )
    data = loose.from_connect_data(topic, wider, Struct(wider).put("a", 1).put("b", "x"))
    assert data == header(schema_id) + zz(1) + text("x")
