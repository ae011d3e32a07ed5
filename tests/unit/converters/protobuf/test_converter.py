"""ProtobufConverter against the test Schema Registry: wire bytes (magic byte, id, message
indexes, payload), every Connect type both ways, schemas other producers registered, the
nullable options, and Confluent's errors."""

from __future__ import annotations

import base64
import datetime
import decimal
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, wrappers_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.registry_converters import (
    configured,
    plain,
)

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf import ProtobufConverter
from sparkcat.converters.protobuf.converter import (
    decode_indexes,
    encode_indexes,
    message_class,
    parse_schema_text,
)

F = descriptor_pb2.FieldDescriptorProto


def converter(url: str, is_key: bool = False, **configs: Any) -> ProtobufConverter:
    return configured(ProtobufConverter(), url, is_key, **configs)


def register(
    url: str,
    subject: str,
    file: descriptor_pb2.FileDescriptorProto,
    references: list[dict[str, Any]] | None = None,
) -> int:
    text = base64.b64encode(file.SerializeToString()).decode()
    body: dict[str, Any] = {"schema": text, "schemaType": "PROTOBUF"}
    if references:
        body["references"] = references
    response = httpx.post(f"{url}/subjects/{quote(subject, safe='')}/versions", json=body)
    response.raise_for_status()
    return int(response.json()["id"])


def latest(url: str, subject: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/subjects/{subject}/versions/latest").json())


INNER = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA).build()
OPT_INNER = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA)
OPT_INNER = OPT_INNER.optional().build()
UNION = (
    SchemaBuilder.struct()
    .name("io.confluent.connect.protobuf.Union.choice")
    .field("label", Schema.OPTIONAL_STRING_SCHEMA)
    .field("number", Schema.OPTIONAL_INT64_SCHEMA)
    .optional()
    .build()
)
COLOR = (
    SchemaBuilder.string()
    .name("Color")
    .parameter("io.confluent.connect.protobuf.Enum", "Color")
    .parameter("io.confluent.connect.protobuf.Enum.RED", "0")
    .parameter("io.confluent.connect.protobuf.Enum.BLUE", "1")
    .optional()
    .build()
)
ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("price", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field("by_ratio", SchemaBuilder.map(Schema.FLOAT64_SCHEMA, INNER).build())
    .field("inner", OPT_INNER)
    .field("inners", SchemaBuilder.array(INNER).build())
    .field("choice", UNION)
    .field("color", COLOR)
    .build()
)
TS = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.UTC)


def order() -> Struct:
    return Struct.from_values(
        ORDER,
        [
            -3,
            300,
            7,
            -(2**40),
            0.5,
            1e10,
            True,
            "hé",
            b"\x00\xff",
            decimal.Decimal("-1.25"),
            datetime.date(2024, 1, 2),
            datetime.time(3, 4, 5, 678000),
            TS,
            ["a", "b"],
            {"k": 1},
            {1.5: Struct(INNER).put("x", 4)},
            Struct(OPT_INNER).put("x", 5),
            [Struct(INNER).put("x", 6)],
            Struct(UNION).put("number", 42),
            "BLUE",
        ],
    )


def test_every_type_round_trips_with_confluents_wire_bytes(
    schema_registry: str, topic: str
) -> None:
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, ORDER, order())
    assert data is not None
    registered = latest(schema_registry, f"{topic}-value")
    assert registered["schemaType"] == "PROTOBUF" and registered["version"] == 1
    # magic byte, the registered id, message index [0] as the single byte 0
    assert data[:6] == b"\x00" + registered["id"].to_bytes(4, "big") + b"\x00"
    # the payload is plain protobuf of the registered descriptor
    file = parse_schema_text(registered["schema"])
    message = message_class(file, "com.example.Order").FromString(data[6:])
    assert (message.i8, message.i16, message.i64, message.text) == (-3, 300, -(2**40), "hé")
    assert (message.price.value, message.price.scale, message.price.precision) == (b"\x83", 2, 3)
    assert (message.day.year, message.day.month, message.day.day) == (2024, 1, 2)
    assert (message.at.hours, message.at.seconds, message.at.nanos) == (3, 5, 678_000_000)
    assert (message.ts.seconds, message.ts.nanos) == (int(TS.timestamp()), 678_000_000)
    assert message.WhichOneof("choice") == "number" and message.color == 1
    assert dict(message.counts) == {"k": 1}
    assert [(e.key, e.value.x) for e in message.by_ratio] == [(1.5, 4)]

    result = conv.to_connect_data(topic, data)
    assert result.schema.name == "Order" and result.schema.version == 1
    expected = plain(order())
    expected["choice_0"] = expected.pop("choice")
    expected["choice_0"] = {"label": None, "number": 42}
    assert plain(result.value) == expected
    assert result.schema.field("i8").schema.type is Type.INT8
    assert result.schema.field("i16").schema.type is Type.INT16
    assert result.value.get("color") == "BLUE"
    # the same schema again: same id, no new version
    assert conv.from_connect_data(topic, ORDER, order()) == data


def test_confluent_kafkas_protobuf_serde_reads_and_writes_the_same_bytes(
    schema_registry: str, topic: str
) -> None:
    """confluent-kafka's own ProtobufSerializer/Deserializer (framing, message indexes, schema
    registration) against the converter, with the message class built from our schema."""
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, ORDER, order())
    assert data is not None
    order_class = message_class(conv.protobuf_schema(ORDER), "com.example.Order")
    client = SchemaRegistryClient({"url": schema_registry})
    try:
        context = SerializationContext(topic, MessageField.VALUE)
        message = ProtobufDeserializer(order_class, {}, client)(data, context)
        assert (message.i8, message.text, message.WhichOneof("choice")) == (-3, "hé", "number")
        # serialized back by Confluent's client: the same schema text (same id) and bytes
        assert ProtobufSerializer(order_class, client, {})(message, context) == data
        # a nested message (Inner was first met as by_ratio's map value): indexes [0, 1, 0]
        file = conv.protobuf_schema(ORDER)
        inner_class = message_class(file, "com.example.Order.ByRatioEntry.Inner")
        other = SerializationContext(f"{topic}-inner", MessageField.VALUE)
        inner = ProtobufSerializer(inner_class, client, {})(inner_class(x=9), other)
        assert inner is not None and inner[5:9] == encode_indexes([0, 1, 0]) == b"\x06\x00\x02\x00"
        result = conv.to_connect_data(f"{topic}-inner", inner)
        assert result.schema.name == "Inner" and plain(result.value) == {"x": 9}
    finally:
        client.close()


OPTIONALS = (
    SchemaBuilder.struct()
    .name("Optionals")
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("count", Schema.OPTIONAL_INT32_SCHEMA)
    .field("small", Schema.OPTIONAL_INT8_SCHEMA)
    .field("inner", OPT_INNER)
    .build()
)


@pytest.mark.parametrize(
    ("configs", "read_back"),
    [
        # Confluent's default: a null primitive is the field's default, a null message unset
        ({}, {"note": "", "count": 0, "small": 0, "inner": None}),
        (
            {"wrapper.for.nullables": "true"},
            {"note": None, "count": None, "small": None, "inner": None},
        ),
        (
            {"optional.for.nullables": "true"},
            {"note": None, "count": None, "small": None, "inner": None},
        ),
        (
            {"generate.struct.for.nulls": "true"},
            {"note": "", "count": 0, "small": 0, "inner": {"x": 0}},
        ),
    ],
)
def test_null_fields(
    schema_registry: str, topic: str, configs: dict[str, str], read_back: dict[str, Any]
) -> None:
    conv = converter(schema_registry, **configs)
    data = conv.from_connect_data(topic, OPTIONALS, Struct(OPTIONALS))
    assert data is not None
    assert plain(conv.to_connect_data(topic, data).value) == read_back
    full = Struct(OPTIONALS).put("note", "n").put("count", 3).put("small", -2)
    full.put("inner", Struct(OPT_INNER).put("x", 1))
    data = conv.from_connect_data(topic, OPTIONALS, full)
    assert plain(conv.to_connect_data(topic, data).value) == plain(full)


def test_wrapper_types_on_the_wire(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry, **{"wrapper.for.nullables": "true"})
    value = Struct(OPTIONALS).put("note", "")
    data = conv.from_connect_data(topic, OPTIONALS, value)
    assert data is not None
    # field 1, a StringValue holding "" : present (unlike a plain proto3 "")
    assert data[6:] == b"\x0a\x00"
    assert conv.to_connect_data(topic, data).value.get("note") == ""


def _two_messages() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="two.proto", package="acme", syntax="proto3")
    first = file.message_type.add(name="First")
    first.field.add(name="a", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    second = file.message_type.add(name="Second")
    nested = second.nested_type.add(name="Deep")
    nested.field.add(name="b", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    nested.field.add(name="n", number=2, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    return file


def test_message_indexes_pick_the_message(schema_registry: str, topic: str) -> None:
    file = _two_messages()
    schema_id = register(schema_registry, f"{topic}-value", file)
    deep = message_class(file, "acme.Second.Deep")(b="hi", n=2**64 - 1).SerializeToString()
    assert encode_indexes([1, 0]) == b"\x04\x02\x00"
    data = b"\x00" + schema_id.to_bytes(4, "big") + encode_indexes([1, 0]) + deep
    result = converter(schema_registry).to_connect_data(topic, data)
    assert result.schema.name == "Deep"
    assert plain(result.value) == {"b": "hi", "n": -1}  # uint64 as Java's long
    assert decode_indexes(b"\x00", 0) == ([0], 1)
    assert decode_indexes(encode_indexes([3, 1, 2]), 0) == ([3, 1, 2], 4)


def test_references_to_other_files_are_resolved(schema_registry: str, topic: str) -> None:
    common = descriptor_pb2.FileDescriptorProto(
        name="acme/common.proto", package="acme.common", syntax="proto3"
    )
    money = common.message_type.add(name="Money")
    money.field.add(name="currency", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    money.field.add(name="cents", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    common_subject = f"{topic}-acme/common.proto"
    register(schema_registry, common_subject, common)
    main = descriptor_pb2.FileDescriptorProto(name="acme/order.proto", package="acme")
    main.syntax = "proto3"
    main.dependency.extend(["acme/common.proto", "google/protobuf/timestamp.proto"])
    order = main.message_type.add(name="Order")
    order.field.add(name="total", number=1, type=F.TYPE_MESSAGE, type_name=".acme.common.Money")
    order.field.add(
        name="at", number=2, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp"
    )
    # the well-known import needs no reference; the user file does
    reference = {"name": "acme/common.proto", "subject": common_subject, "version": 1}
    schema_id = register(schema_registry, f"{topic}-value", main, [reference])
    order_class = message_class(main, "acme.Order", [common])
    payload = order_class(total={"currency": "EUR", "cents": 5}, at={"seconds": 1})
    data = b"\x00" + schema_id.to_bytes(4, "big") + b"\x00" + payload.SerializeToString()
    result = converter(schema_registry).to_connect_data(topic, data)
    assert plain(result.value) == {
        "total": {"currency": "EUR", "cents": 5},
        "at": datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC),
    }


def test_raw_primitive_wrapper_at_the_root(schema_registry: str, topic: str) -> None:
    file = descriptor_pb2.FileDescriptorProto.FromString(wrappers_pb2.DESCRIPTOR.serialized_pb)
    schema_id = register(schema_registry, f"{topic}-value", file)
    index = [m.name for m in file.message_type].index("StringValue")
    payload = wrappers_pb2.StringValue(value="raw").SerializeToString()
    data = b"\x00" + schema_id.to_bytes(4, "big") + encode_indexes([index]) + payload
    result = converter(schema_registry).to_connect_data(topic, data)
    assert (result.schema.type, result.schema.optional, result.value) == (Type.STRING, True, "raw")
    as_struct = converter(schema_registry, **{"wrapper.for.raw.primitives": "false"})
    assert plain(as_struct.to_connect_data(topic, data).value) == {"value": "raw"}


def test_primitive_roots_travel_in_wrappers(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    data = conv.from_connect_data(topic, Schema.STRING_SCHEMA, "plain")
    wrappers = descriptor_pb2.FileDescriptorProto.FromString(wrappers_pb2.DESCRIPTOR.serialized_pb)
    index = [m.name for m in wrappers.message_type].index("StringValue")
    assert data is not None and data[5:] == encode_indexes([index]) + b"\x0a\x05plain"
    result = conv.to_connect_data(topic, data)
    assert (result.schema.type, result.value) == (Type.STRING, "plain")
    day = conv.from_connect_data(f"{topic}-day", Date.SCHEMA, datetime.date(1970, 1, 3))
    assert conv.to_connect_data(f"{topic}-day", day).value == 2  # Date travels as its days
    typed = SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "uint64")
    big = conv.from_connect_data(f"{topic}-big", typed.build(), -1)
    assert big is not None and big.endswith(b"\xff\xff\x01")  # 2**64 - 1 as a varint
    assert conv.to_connect_data(f"{topic}-big", big).value == -1


def test_enums_as_ints(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry, **{"int.for.enums": "true"})
    schema = SchemaBuilder.struct().name("E").field("color", COLOR).build()
    data = conv.from_connect_data(topic, schema, Struct(schema).put("color", "BLUE"))
    result = conv.to_connect_data(topic, data)
    assert result.value.get("color") == 1
    assert result.schema.field("color").schema.type is Type.INT32
    # and an INT32 enum schema writes the number
    assert conv.from_connect_data(topic, result.schema, result.value) == data


def test_subjects_and_keys(schema_registry: str, topic: str) -> None:
    key = converter(schema_registry, is_key=True)
    assert key.from_connect_data(topic, INNER, Struct(INNER).put("x", 1)) is not None
    assert latest(schema_registry, f"{topic}-key")["version"] == 1
    strategy = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
    named = converter(schema_registry, **{"value.subject.name.strategy": strategy})
    assert named.from_connect_data(topic, INNER, Struct(INNER).put("x", 1)) is not None
    assert latest(schema_registry, "com.example.Inner")["schemaType"] == "PROTOBUF"
    assert key.from_connect_data(topic, INNER, None) is None
    assert key.to_connect_data(topic, None).value is None


def test_confluents_errors(schema_registry: str, topic: str) -> None:
    conv = converter(schema_registry)
    prefix = f"Failed to deserialize data for topic {topic} to Protobuf: "
    with pytest.raises(DataError, match=f"^{prefix}Unknown magic byte!$"):
        conv.to_connect_data(topic, b"\x01\x00\x00\x00\x01\x00")
    with pytest.raises(DataError) as missing:
        conv.to_connect_data(topic, b"\x00\x00\x00\x03\xe7\x00")
    assert str(missing.value) == (
        f"{prefix}Error retrieving Protobuf schema for id 999: Schema 999 not found; "
        "error code: 40403"
    )
    data = conv.from_connect_data(topic, INNER, Struct(INNER).put("x", 1))
    assert data is not None
    with pytest.raises(DataError, match=f"^{prefix}DecodeError"):
        conv.to_connect_data(topic, data + b"\xff")
    with pytest.raises(DataError, match="Invalid message indexes \\[5\\]"):
        conv.to_connect_data(topic, data[:5] + encode_indexes([5]) + data[6:])
    with pytest.raises(
        DataError,
        match=f"^Failed to serialize Protobuf data from topic {topic}: Unsupported root schema",
    ):
        conv.from_connect_data(topic, SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["x"])
    bad = SchemaBuilder.struct().name("Bad").field("color", COLOR).build()
    with pytest.raises(DataError, match="Unknown enum symbol 'GREEN'"):
        conv.from_connect_data(topic, bad, Struct(bad).put("color", "GREEN"))


def test_registry_refuses_invalid_protobuf_schemas(schema_registry: str, topic: str) -> None:
    file = descriptor_pb2.FileDescriptorProto(name="bad.proto", syntax="proto3")
    message = file.message_type.add(name="M")
    message.field.add(name="x", number=1, type=F.TYPE_MESSAGE, type_name=".Missing", label=1)
    response = httpx.post(
        f"{schema_registry}/subjects/{topic}-value/versions",
        json={
            "schema": base64.b64encode(file.SerializeToString()).decode(),
            "schemaType": "PROTOBUF",
        },
    )
    assert response.status_code == 422 and response.json()["error_code"] == 42201
    response = httpx.post(
        f"{schema_registry}/subjects/{topic}-value/versions",
        json={"schema": "syntax = 'proto3';", "schemaType": "PROTOBUF"},
    )
    assert response.status_code == 422


PRIMITIVES = (
    SchemaBuilder.struct()
    .name("Primitives")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("price", Decimal.schema(3))
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.INT64_SCHEMA).build())
    .build()
)
_VALUES = st.tuples(
    st.integers(-(2**7), 2**7 - 1),
    st.integers(-(2**15), 2**15 - 1),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(),
    st.binary(),
    st.decimals(
        places=3, allow_nan=False, allow_infinity=False, min_value=-(10**12), max_value=10**12
    ),
    st.datetimes(
        min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30)
    ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=datetime.UTC)),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=_VALUES)
def test_hypothesis_round_trip(schema_registry: str, values: tuple[Any, ...]) -> None:
    conv = _shared(schema_registry)
    value = Struct.from_values(PRIMITIVES, list(values))
    data = conv.from_connect_data("proto-hypothesis", PRIMITIVES, value)
    assert plain(conv.to_connect_data("proto-hypothesis", data).value) == plain(value)


_CONVERTERS: dict[str, ProtobufConverter] = {}


def _shared(url: str) -> ProtobufConverter:
    if url not in _CONVERTERS:
        _CONVERTERS[url] = converter(url)
    return _CONVERTERS[url]


def test_names_defaults_and_null_elements(schema_registry: str, topic: str) -> None:
    schema = (
        SchemaBuilder.struct()
        .name("Odd")
        .field("class", Schema.STRING_SCHEMA)
        .field("bad-name", Schema.INT32_SCHEMA)
        .field("level", SchemaBuilder.int16().default_value(3).build())
        .field("tags", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build())
        .build()
    )
    conv = converter(schema_registry, **{"scrub.invalid.names": "true"})
    value = Struct(schema).put("class", "c").put("bad-name", 5).put("tags", ["x"])
    data = conv.from_connect_data(topic, schema, value)
    result = conv.to_connect_data(topic, data).value
    # Python keywords are fine as field names; invalid names are scrubbed; defaults applied
    assert plain(result) == {"class": "c", "bad_name": 5, "level": 3, "tags": ["x"]}
    with pytest.raises(DataError, match=f"^Failed to serialize Protobuf data from topic {topic}"):
        conv.from_connect_data(topic, schema, value.put("tags", ["x", None]))
    empty = SchemaBuilder.struct().name("Empty").build()
    data = conv.from_connect_data(topic, empty, Struct(empty))
    assert data is not None and data[5:] == b"\x00"
    assert conv.to_connect_data(topic, data).value.values == []


def test_use_latest_version(schema_registry: str, topic: str) -> None:
    v1 = SchemaBuilder.struct().name("acme.Item").field("a", Schema.INT32_SCHEMA).build()
    v2 = (
        SchemaBuilder.struct()
        .name("acme.Item")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    converter(schema_registry).from_connect_data(topic, v2, Struct(v2).put("a", 1).put("b", "x"))
    latest_id = latest(schema_registry, f"{topic}-value")["id"]
    conv = converter(
        schema_registry,
        **{"use.latest.version": "true", "auto.register.schemas": "false"},
    )
    data = conv.from_connect_data(topic, v1, Struct(v1).put("a", 2))
    assert data is not None and int.from_bytes(data[1:5], "big") == latest_id
    assert plain(conv.to_connect_data(topic, data).value) == {"a": 2, "b": ""}


def test_an_invalid_schema_is_refused_before_it_is_registered(
    schema_registry: str, topic: str
) -> None:
    # proto3 enums must start at 0
    bad_enum = (
        SchemaBuilder.string()
        .parameter("io.confluent.connect.protobuf.Enum", "Level")
        .parameter("io.confluent.connect.protobuf.Enum.HIGH", "1")
        .build()
    )
    schema = SchemaBuilder.struct().name("Levels").field("level", bad_enum).build()
    with pytest.raises(DataError, match=r"Invalid Protobuf schema Levels\.proto"):
        converter(schema_registry).from_connect_data(
            topic, schema, Struct(schema).put("level", "HIGH")
        )
    assert httpx.get(f"{schema_registry}/subjects/{topic}-value/versions").status_code == 404


def test_batch_methods_give_what_the_per_record_methods_give(
    schema_registry: str, topic: str
) -> None:
    conv = converter(schema_registry)
    values = [order(), None, order()]
    batch = conv.from_connect_data_batch(topic, ORDER, values)
    assert batch == [conv.from_connect_data(topic, ORDER, v) for v in values]
    assert batch[1] is None
    datas = [d for d in batch if d is not None]
    column = conv.to_connect_data_batch(topic, datas)
    assert column.schemas is None and column.schema is conv.to_connect_data(topic, datas[0]).schema
    assert [plain(v) for v in column.values] == [
        plain(conv.to_connect_data(topic, d).value) for d in datas
    ]
    # mixed schemas, nulls and bad bytes take the per-record path with its results and errors
    inner = conv.from_connect_data(topic, INNER, Struct(INNER).put("x", 1))
    assert inner is not None
    mixed = conv.to_connect_data_batch(topic, [datas[0], None, inner])
    assert mixed.schemas is not None and mixed.values[1] is None
    assert plain(mixed.values[2]) == {"x": 1}
    with pytest.raises(DataError, match="Unknown magic byte!"):
        conv.to_connect_data_batch(topic, [datas[0], b"\x05junk"])
