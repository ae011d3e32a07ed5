"""ProtobufData: Connect schemas -> descriptors as Confluent builds them, and descriptors ->
Connect schemas (oneofs, enums, wrappers, unsigned types, map entries) with their readers."""

from __future__ import annotations

import pytest
from confluent_kafka.schema_registry.confluent import meta_pb2
from confluent_kafka.schema_registry.confluent.type import decimal_pb2
from google.protobuf import descriptor_pb2

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf import _builtins as builtins
from sparkcat.converters.protobuf.converter import message_class
from sparkcat.converters.protobuf.protobuf_data import (
    DataOptions,
    ProtobufData,
    scrub_name,
    to_map_entry,
    to_map_field,
)

F = descriptor_pb2.FieldDescriptorProto
INNER = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA).build()
UNION = (
    SchemaBuilder.struct()
    .name("io.confluent.connect.protobuf.Union.choice")
    .field("text", Schema.OPTIONAL_STRING_SCHEMA)
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
    .field("small", Schema.INT8_SCHEMA)
    .field("id", Schema.INT64_SCHEMA)
    .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("inner", INNER)
    .field("choice", UNION)
    .field("color", COLOR)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def fields(
    message: descriptor_pb2.DescriptorProto,
) -> dict[str, descriptor_pb2.FieldDescriptorProto]:
    return {f.name: f for f in message.field}


def test_struct_becomes_a_proto3_message_as_confluent_builds_it() -> None:
    file, name = ProtobufData().from_connect_schema(ORDER)
    assert name == "com.example.Order"
    assert (file.package, file.syntax) == ("com.example", "proto3")
    assert list(file.dependency) == [
        "confluent/type/decimal.proto",
        "google/type/date.proto",
        "google/type/timeofday.proto",
        "google/protobuf/timestamp.proto",
    ]
    (message,) = file.message_type
    by_name = fields(message)
    assert [f.number for f in message.field] == list(range(1, 14))
    assert by_name["small"].type == F.TYPE_INT32
    assert builtins.read_meta(by_name["small"].options.SerializeToString())[1] == {
        "connect.type": "int8"
    }
    assert by_name["price"].type_name == ".confluent.type.Decimal"
    assert builtins.read_meta(by_name["price"].options.SerializeToString())[1] == {
        "precision": "10",
        "scale": "2",
    }
    assert by_name["day"].type_name == ".google.type.Date"
    assert by_name["at"].type_name == ".google.type.TimeOfDay"
    assert by_name["ts"].type_name == ".google.protobuf.Timestamp"
    assert by_name["tags"].label == F.LABEL_REPEATED and by_name["tags"].type == F.TYPE_STRING
    assert by_name["counts"].type_name == ".com.example.Order.CountsEntry"
    entry = message.nested_type[0]
    assert entry.name == "CountsEntry" and entry.options.map_entry
    assert by_name["inner"].type_name == ".com.example.Order.Inner"
    assert [o.name for o in message.oneof_decl] == ["choice"]
    assert by_name["text"].oneof_index == 0 and by_name["number"].oneof_index == 0
    assert by_name["color"].type == F.TYPE_ENUM
    assert [(v.name, v.number) for v in message.enum_type[0].value] == [("RED", 0), ("BLUE", 1)]
    assert by_name["note"].type == F.TYPE_STRING and not by_name["note"].proto3_optional
    message_class(file, name)  # the descriptor builds


def test_builtin_files_agree_with_confluents_copies() -> None:
    """Ours are the files' first versions; confluent-kafka ships later ones that only add."""
    for ours, theirs in (
        (builtins.BUILTIN_FILES["confluent/meta.proto"], meta_pb2.DESCRIPTOR),
        (builtins.BUILTIN_FILES["confluent/type/decimal.proto"], decimal_pb2.DESCRIPTOR),
    ):
        reference = descriptor_pb2.FileDescriptorProto.FromString(theirs.serialized_pb)
        assert (ours.name, ours.package) == (reference.name, reference.package)
        copies = {m.name: m for m in reference.message_type}
        for mine in ours.message_type:
            theirs_fields = {f.number: f for f in copies[mine.name].field}
            for f in mine.field:
                copy = theirs_fields[f.number]
                assert (f.name, f.type, f.label) == (copy.name, copy.type, copy.label)
        extensions = {(e.name, e.number, e.extendee) for e in reference.extension}
        assert {(e.name, e.number, e.extendee) for e in ours.extension} <= extensions


@pytest.mark.parametrize(
    ("options", "kind", "type_name", "proto3_optional"),
    [
        (DataOptions(), F.TYPE_STRING, "", False),
        (
            DataOptions(wrapper_for_nullables=True),
            F.TYPE_MESSAGE,
            ".google.protobuf.StringValue",
            False,
        ),
        (DataOptions(optional_for_nullables=True), F.TYPE_STRING, "", True),
    ],
)
def test_optional_primitives(
    options: DataOptions, kind: int, type_name: str, proto3_optional: bool
) -> None:
    schema = SchemaBuilder.struct().field("note", Schema.OPTIONAL_STRING_SCHEMA).build()
    file, name = ProtobufData(options).from_connect_schema(schema)
    (note,) = file.message_type[0].field
    assert (note.type, note.type_name, note.proto3_optional) == (kind, type_name, proto3_optional)
    message_class(file, name)


def test_names_tags_and_defaults() -> None:
    unnamed = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    same = SchemaBuilder.struct().name("inner").field("a", Schema.INT32_SCHEMA).build()
    tagged = SchemaBuilder.int32().parameter("io.confluent.connect.protobuf.Tag", "7").build()
    schema = (
        SchemaBuilder.struct()
        .field("first", unnamed)
        .field("inner", same)
        .field("tagged", tagged)
        .field("after", Schema.STRING_SCHEMA)
        .build()
    )
    file, name = ProtobufData().from_connect_schema(schema)
    assert name == "ConnectDefault1" and file.package == ""
    message = file.message_type[0]
    assert [m.name for m in message.nested_type] == ["ConnectDefault2", "innerMessage"]
    assert [(f.name, f.number) for f in message.field] == [
        ("first", 1),
        ("inner", 2),
        ("tagged", 7),
        ("after", 3),
    ]


def test_refusals() -> None:
    with pytest.raises(DataError, match="Unsupported root schema of type ARRAY"):
        ProtobufData().from_connect_schema(SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    nested = SchemaBuilder.array(SchemaBuilder.array(Schema.INT32_SCHEMA).build()).build()
    with pytest.raises(DataError, match="Array cannot be nested"):
        ProtobufData().from_connect_schema(SchemaBuilder.struct().field("a", nested).build())


def test_scrub_names_and_map_names() -> None:
    assert scrub_name("1st-name") == "x1st_name"
    assert scrub_name("a.b c") == "a_b_c"
    assert scrub_name("ok_name") == "ok_name"
    assert scrub_name("-abc") == "_abc"  # Java's URLEncoder keeps "-"; only digit/_ get "x"
    assert scrub_name("_hidden") == "x_hidden"
    assert scrub_name("a~b") == "a_7Eb"
    assert to_map_entry("tag_counts") == "TagCountsEntry"
    assert to_map_field("TagCountsEntry") == "tag_counts"


def _foreign() -> descriptor_pb2.FileDescriptorProto:
    """A schema another producer registered: oneof, enum, unsigned, wrappers, recursion-free."""
    file = descriptor_pb2.FileDescriptorProto(name="shop.proto", package="shop", syntax="proto3")
    file.dependency.append("google/protobuf/wrappers.proto")
    event = file.message_type.add(name="Event")
    status = event.enum_type.add(name="Status")
    status.value.add(name="NEW", number=0)
    status.value.add(name="DONE", number=3)
    event.field.add(name="count", number=1, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
    event.field.add(name="big", number=2, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    event.field.add(
        name="status", number=3, type=F.TYPE_ENUM, type_name=".shop.Event.Status", label=1
    )
    event.field.add(name="sku", number=4, type=F.TYPE_STRING, label=1, oneof_index=0)
    event.field.add(name="code", number=5, type=F.TYPE_INT32, label=1, oneof_index=0)
    event.field.add(
        name="label",
        number=6,
        type=F.TYPE_MESSAGE,
        type_name=".google.protobuf.StringValue",
        label=1,
    )
    event.field.add(
        name="maybe", number=7, type=F.TYPE_INT32, label=1, oneof_index=1, proto3_optional=True
    )
    event.oneof_decl.add(name="ref")
    event.oneof_decl.add(name="_maybe")
    return file


def test_descriptor_to_connect_schema_as_confluent() -> None:
    schema, _ = ProtobufData().to_connect_schema([_foreign()], "shop.Event", 3)
    assert schema.name == "Event" and schema.version == 3
    assert [f.name for f in schema.fields] == [
        "ref_0",
        "count",
        "big",
        "status",
        "label",
        "maybe",
    ]
    ref = schema.field("ref_0").schema
    assert ref.name == "io.confluent.connect.protobuf.Union.ref" and ref.optional
    assert [f.name for f in ref.fields] == ["sku", "code"]
    assert schema.field("count").schema.type is Type.INT64
    status = schema.field("status").schema
    assert status.type is Type.STRING and status.name == "Status"
    assert dict(status.parameters or {}) == {
        "io.confluent.connect.protobuf.Enum": "Status",
        "io.confluent.connect.protobuf.Enum.NEW": "0",
        "io.confluent.connect.protobuf.Enum.DONE": "3",
        "io.confluent.connect.protobuf.Tag": "3",
    }
    assert schema.field("label").schema.type is Type.STRUCT  # a wrapper is a struct by default
    assert all(f.schema.optional for f in schema.fields)


def test_descriptor_options_change_the_mapping() -> None:
    options = DataOptions(
        enhanced_schema_support=True,
        generate_index_for_unions=False,
        int_for_enums=True,
        wrapper_for_nullables=True,
    )
    schema, _ = ProtobufData(options).to_connect_schema([_foreign()], "shop.Event")
    assert schema.name == "shop.Event"
    assert schema.field("ref").schema.name == "io.confluent.connect.protobuf.Union.shop.Event.ref"
    assert schema.field("status").schema.type is Type.INT32
    assert schema.field("status").schema.name == "shop.Event.Status"
    label = schema.field("label").schema
    assert label.type is Type.STRING and label.optional
    # with wrappers for nullables, plain scalars are required and presence fields optional
    assert not schema.field("count").schema.optional
    assert schema.field("maybe").schema.optional


def test_primitive_roots_are_wrapper_messages() -> None:
    file, name = ProtobufData().from_connect_schema(Schema.OPTIONAL_STRING_SCHEMA)
    assert (file.name, name) == ("google/protobuf/wrappers.proto", "google.protobuf.StringValue")
    typed = SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "uint64").build()
    assert ProtobufData().from_connect_schema(typed)[1] == "google.protobuf.UInt64Value"
    assert ProtobufData().from_connect_schema(Date.SCHEMA)[1] == "google.protobuf.Int32Value"


def test_integer_types_survive_the_round_trip() -> None:
    data = ProtobufData()
    schema, _ = data.to_connect_schema([_foreign()], "shop.Event")
    assert schema.field("count").schema.parameters is not None
    assert schema.field("count").schema.parameters["io.confluent.connect.protobuf.Type"] == "uint32"
    file, _ = data.from_connect_schema(schema)
    types = {f.name: f.type for f in file.message_type[0].field}
    assert (types["count"], types["big"], types["maybe"]) == (
        F.TYPE_UINT32,
        F.TYPE_UINT64,
        F.TYPE_INT32,
    )


def test_recursive_messages_are_refused() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="tree.proto", syntax="proto3")
    node = file.message_type.add(name="Node")
    node.field.add(name="child", number=1, type=F.TYPE_MESSAGE, type_name=".Node", label=1)
    with pytest.raises(DataError, match="Recursive Protobuf message Node"):
        ProtobufData().to_connect_schema([file], "Node")


def test_connect_schema_survives_the_round_trip() -> None:
    data = ProtobufData()
    file, name = data.from_connect_schema(ORDER)
    schema, _ = data.to_connect_schema([file], name)
    # Confluent puts oneofs first
    assert [f.name for f in schema.fields] == ["choice_0"] + [
        f.name for f in ORDER.fields if f.name != "choice"
    ]
    assert schema.field("small").schema.type is Type.INT8
    price = schema.field("price").schema
    assert price.name == Decimal.LOGICAL_NAME
    assert price.parameters is not None and price.parameters["scale"] == "2"
    assert price.parameters["connect.decimal.precision"] == "10"
    assert schema.field("counts").schema.type is Type.MAP
    assert schema.field("inner").schema.name == "Inner"
    # writing the read schema again gives the same field numbers (the Tag parameters)
    again, _ = data.from_connect_schema(schema)
    numbers = {f.name: f.number for f in file.message_type[0].field}
    assert {f.name: f.number for f in again.message_type[0].field} == numbers
