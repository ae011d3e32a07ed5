"""Schema, SchemaBuilder, Type and SchemaAndValue (Kafka's ConnectSchemaTest, SchemaBuilderTest)."""

from __future__ import annotations

import datetime
import decimal
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkcat.api import data
from sparkcat.api.data import (
    INT8_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    ConnectSchema,
    Date,
    Decimal,
    Field,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError, SchemaBuilderError


def test_public_names() -> None:
    assert set(data.__all__) >= {
        "Type",
        "Schema",
        "ConnectSchema",
        "SchemaBuilder",
        "Field",
        "Struct",
        "Decimal",
        "Date",
        "Time",
        "Timestamp",
        "SchemaAndValue",
        "SchemaProjector",
        "INT8_SCHEMA",
        "OPTIONAL_BYTES_SCHEMA",
    }
    for name in data.__all__:
        assert hasattr(data, name)
    assert ConnectSchema is Schema


def test_type_names() -> None:
    names = "int8 int16 int32 int64 float32 float64 boolean string bytes array map struct"
    assert [t.value for t in Type] == names.split(" ")
    assert str(Type.INT32) == "INT32"
    assert Type("int64") is Type.INT64
    assert [t for t in Type if not t.is_primitive] == [Type.ARRAY, Type.MAP, Type.STRUCT]


@pytest.mark.parametrize("type_", [t for t in Type if t.is_primitive])
def test_constant_schemas(type_: Type) -> None:
    required = getattr(data, f"{type_.name}_SCHEMA")
    optional = getattr(data, f"OPTIONAL_{type_.name}_SCHEMA")
    assert required is getattr(Schema, f"{type_.name}_SCHEMA")
    assert (required.type, required.optional) == (type_, False)
    assert (optional.type, optional.optional) == (type_, True)
    assert required.name is None and required.default_value is None
    assert required.parameters is None
    assert SchemaBuilder.type(type_).build() == required


# -- SchemaBuilder -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "type_", "default"),
    [
        (SchemaBuilder.int8, Type.INT8, 12),
        (SchemaBuilder.int16, Type.INT16, 12),
        (SchemaBuilder.int32, Type.INT32, 12),
        (SchemaBuilder.int64, Type.INT64, 12),
        (SchemaBuilder.float32, Type.FLOAT32, 12.0),
        (SchemaBuilder.float64, Type.FLOAT64, 12.0),
        (SchemaBuilder.boolean, Type.BOOLEAN, True),
        (SchemaBuilder.string, Type.STRING, "a default string"),
        (SchemaBuilder.bytes, Type.BYTES, b"a default byte array"),
    ],
)
def test_primitive_builders(builder: Any, type_: Type, default: Any) -> None:
    plain = builder().build()
    assert (plain.type, plain.optional, plain.default_value) == (type_, False, None)
    assert (plain.name, plain.version, plain.doc, plain.parameters) == (None, None, None, None)
    full = builder().name("name").optional().default_value(default).version(2).doc("doc").build()
    assert (full.type, full.optional, full.default_value) == (type_, True, default)
    assert (full.name, full.version, full.doc) == ("name", 2, "doc")


@pytest.mark.parametrize(
    ("builder", "default"),
    [
        (SchemaBuilder.int8, "invalid"),
        (SchemaBuilder.int8, 128),
        (SchemaBuilder.int16, -(2**15) - 1),
        (SchemaBuilder.int32, 2**31),
        (SchemaBuilder.int64, 2**63),
        (SchemaBuilder.int32, True),
        (SchemaBuilder.float32, "invalid"),
        (SchemaBuilder.float64, False),
        (SchemaBuilder.boolean, "invalid"),
        (SchemaBuilder.boolean, 1),
        (SchemaBuilder.string, True),
        (SchemaBuilder.bytes, "a string, not bytes"),
        (SchemaBuilder.string, None),  # a required schema's default cannot be null
    ],
)
def test_invalid_default(builder: Any, default: Any) -> None:
    with pytest.raises(SchemaBuilderError, match="Invalid default value"):
        builder().default_value(default).build()


def test_parameters() -> None:
    expected = {"foo": "val", "bar": "baz"}
    by_one = SchemaBuilder.string().parameter("foo", "val").parameter("bar", "baz").build()
    at_once = SchemaBuilder.string().parameters(expected).build()
    assert by_one.parameters == expected == at_once.parameters
    assert list(by_one.parameters or ()) == ["foo", "bar"]  # insertion order kept
    assert SchemaBuilder.string().parameters({}).build().parameters is None
    with pytest.raises(TypeError):
        by_one.parameters["foo"] = "changed"  # type: ignore[index]


def test_struct_builder() -> None:
    schema = (
        SchemaBuilder.struct().field("field1", INT8_SCHEMA).field("field2", INT8_SCHEMA).build()
    )
    assert schema.type is Type.STRUCT and schema.default_value is None
    assert schema.fields == (Field("field1", 0, INT8_SCHEMA), Field("field2", 1, INT8_SCHEMA))
    assert schema.field("field2") == Field("field2", 1, INT8_SCHEMA)
    assert schema.field("missing") is None
    assert SchemaBuilder.struct().build().fields == ()


def test_struct_builder_errors() -> None:
    with pytest.raises(SchemaBuilderError, match="Cannot create fields on type INT8"):
        SchemaBuilder.int8().field("field", INT8_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="field name duplication id"):
        SchemaBuilder.struct().field("id", STRING_SCHEMA).field("id", STRING_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="fieldName cannot be null"):
        SchemaBuilder.struct().field("", STRING_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="fieldSchema for field f cannot be null"):
        SchemaBuilder.struct().field("f", None)  # type: ignore[arg-type]


def test_array_and_map_builders() -> None:
    array = SchemaBuilder.array(INT8_SCHEMA).default_value([1, 2]).build()
    assert (array.type, array.value_schema, array.default_value) == (
        Type.ARRAY,
        INT8_SCHEMA,
        [1, 2],
    )
    mapping = SchemaBuilder.map(INT8_SCHEMA, STRING_SCHEMA).default_value({5: "x"}).build()
    assert (mapping.key_schema, mapping.value_schema) == (INT8_SCHEMA, STRING_SCHEMA)
    with pytest.raises(SchemaBuilderError):
        SchemaBuilder.array(INT8_SCHEMA).default_value(["string"]).build()
    with pytest.raises(SchemaBuilderError):
        SchemaBuilder.map(INT8_SCHEMA, INT8_SCHEMA).default_value({5: "foo"}).build()
    with pytest.raises(SchemaBuilderError, match="valueSchema cannot be null"):
        SchemaBuilder.array(None)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderError, match="keySchema cannot be null"):
        SchemaBuilder.map(None, STRING_SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderError, match="type cannot be null"):
        SchemaBuilder.type(None)  # type: ignore[arg-type]


def test_setters_may_repeat_the_same_value_only() -> None:
    builder = SchemaBuilder.string().name("testing").version(123).optional()
    builder.name("testing").version(123).optional()
    with pytest.raises(SchemaBuilderError, match=r"^Invalid SchemaBuilder call: version has"):
        builder.version(456)
    with pytest.raises(SchemaBuilderError, match=r"name has already been set\."):
        builder.name("other")
    with pytest.raises(SchemaBuilderError, match=r"optional has already been set\."):
        builder.required()
    with pytest.raises(SchemaBuilderError, match=r"doc has already been set\."):
        builder.doc("a").doc("b")


def test_struct_default_value() -> None:
    builder = SchemaBuilder.struct().field("field", INT32_SCHEMA)
    default = Struct(builder.build()).put("field", 12)
    schema = builder.default_value(default).build()
    assert schema.default_value == default
    incomplete = Struct(SchemaBuilder.struct().field("field", INT32_SCHEMA).build())
    with pytest.raises(SchemaBuilderError, match="Invalid default value"):
        SchemaBuilder.struct().field("field", INT32_SCHEMA).default_value(incomplete)
    late_field = SchemaBuilder.struct().field("field", INT32_SCHEMA).default_value(default)
    with pytest.raises(SchemaBuilderError, match="Invalid default value"):
        late_field.field("other", INT32_SCHEMA).build()


# -- Schema ------------------------------------------------------------------------------------


def test_accessors_only_valid_for_their_types() -> None:
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        _ = INT8_SCHEMA.fields
    with pytest.raises(DataError, match="Cannot look up fields on non-struct type"):
        INT8_SCHEMA.field("a")
    with pytest.raises(DataError, match="Cannot look up key schema on non-map type"):
        _ = SchemaBuilder.array(INT8_SCHEMA).build().key_schema
    with pytest.raises(DataError, match="non-array and non-map type"):
        _ = INT8_SCHEMA.value_schema


def test_schema_is_immutable() -> None:
    schema = SchemaBuilder.int8().build()
    with pytest.raises(AttributeError):
        schema.name = "x"
    with pytest.raises(AttributeError):
        Field("a", 0, schema).index = 3


def test_equality_and_hash() -> None:
    def struct_schema(name: str = "a", doc: str | None = None) -> Schema:
        builder = SchemaBuilder.struct().field(name, INT8_SCHEMA)
        return (builder.doc(doc) if doc else builder).build()

    equal_pairs = [
        (SchemaBuilder.int8().build(), INT8_SCHEMA),
        (SchemaBuilder.array(INT8_SCHEMA).build(), SchemaBuilder.array(INT8_SCHEMA).build()),
        (
            SchemaBuilder.array(INT8_SCHEMA).default_value([1]).build(),
            SchemaBuilder.array(INT8_SCHEMA).default_value([1]).build(),
        ),
        (struct_schema(), struct_schema()),
        (Decimal.schema(2), Decimal.schema(2)),
    ]
    for a, b in equal_pairs:
        assert a == b and hash(a) == hash(b)
    different = [
        INT8_SCHEMA,
        SchemaBuilder.int8().optional().build(),
        SchemaBuilder.int8().default_value(1).build(),
        SchemaBuilder.int8().name("n").build(),
        SchemaBuilder.int8().version(1).build(),
        SchemaBuilder.int8().doc("d").build(),
        SchemaBuilder.int8().parameter("k", "v").build(),
        SchemaBuilder.int16().build(),
        SchemaBuilder.array(INT8_SCHEMA).build(),
        SchemaBuilder.array(INT8_SCHEMA).default_value([2]).build(),
        SchemaBuilder.map(INT8_SCHEMA, INT8_SCHEMA).build(),
        SchemaBuilder.map(INT8_SCHEMA, STRING_SCHEMA).build(),
        struct_schema(),
        struct_schema("b"),
        struct_schema(doc="d"),
        Decimal.schema(3),
    ]
    for i, a in enumerate(different):
        for b in different[i + 1 :]:
            assert a != b
    assert len(set(different)) == len(different)


def test_repr() -> None:
    assert repr(INT32_SCHEMA) == "Schema{INT32}"
    assert repr(Date.SCHEMA) == "Schema{org.apache.kafka.connect.data.Date:INT32}"
    assert repr(Field("f", 0, INT32_SCHEMA)) == "Field{name=f, index=0, schema=Schema{INT32}}"


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (data.INT8_SCHEMA, 127),
        (data.INT8_SCHEMA, -128),
        (data.INT16_SCHEMA, 2**15 - 1),
        (data.INT32_SCHEMA, -(2**31)),
        (data.INT64_SCHEMA, 2**63 - 1),
        (data.FLOAT32_SCHEMA, 1.5),
        (data.FLOAT64_SCHEMA, 3),
        (data.BOOLEAN_SCHEMA, False),
        (data.STRING_SCHEMA, "s"),
        (data.BYTES_SCHEMA, b"b"),
        (data.BYTES_SCHEMA, bytearray(b"b")),
        (data.BYTES_SCHEMA, memoryview(b"b")),
        (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2]),
        (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"a": 1}),
        (Decimal.schema(2), decimal.Decimal("1.56")),
        (Date.SCHEMA, datetime.date(2020, 1, 1)),
        (Time.SCHEMA, datetime.time(1, 2)),
        (Timestamp.SCHEMA, datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)),
        (OPTIONAL_STRING_SCHEMA, None),
    ],
)
def test_validate_value_matching(schema: Schema, value: Any) -> None:
    Schema.validate_value(schema, value)


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (INT8_SCHEMA, object(), "with type INT8: <class 'object'> for value"),
        (INT8_SCHEMA, 128, "out of range [-128, 127] for value"),
        (data.INT16_SCHEMA, 2**15, "out of range"),
        (data.INT64_SCHEMA, -(2**63) - 1, "out of range"),
        (INT32_SCHEMA, True, "with type INT32: <class 'bool'>"),
        (INT32_SCHEMA, 1.0, "<class 'float'>"),
        (data.FLOAT64_SCHEMA, True, "with type FLOAT64: <class 'bool'>"),
        (data.BOOLEAN_SCHEMA, 1, "<class 'int'>"),
        (STRING_SCHEMA, b"s", "<class 'bytes'>"),
        (data.BYTES_SCHEMA, "s", "<class 'str'>"),
        (SchemaBuilder.array(INT8_SCHEMA).build(), (1,), "<class 'tuple'>"),
        (SchemaBuilder.array(INT8_SCHEMA).build(), [1, "s"], "for element of array value"),
        (SchemaBuilder.map(INT8_SCHEMA, INT8_SCHEMA).build(), {"k": 1}, "for key of map value"),
        (SchemaBuilder.map(INT8_SCHEMA, INT8_SCHEMA).build(), {1: "v"}, "for value of map value"),
        (Decimal.schema(2), 1.56, 'schema "org.apache.kafka.connect.data.Decimal" with type BYTES'),
        (Date.SCHEMA, 10000, "<class 'int'>"),
        (Date.SCHEMA, datetime.datetime(2020, 1, 1), "<class 'datetime.datetime'>"),
        (Time.SCHEMA, 1000, "with type INT32"),
        (Timestamp.SCHEMA, 1000, "with type INT64: <class 'int'>"),
        (Timestamp.SCHEMA, datetime.date(2020, 1, 1), "<class 'datetime.date'>"),
        (STRING_SCHEMA, None, "Invalid value: null used for required value, schema type: STRING"),
    ],
)
def test_validate_value_mismatch(schema: Schema, value: Any, message: str) -> None:
    with pytest.raises(DataError, match=r"^Invalid value") as info:
        Schema.validate_value(schema, value)
    assert message in str(info.value)


def test_validate_value_messages_name_the_field() -> None:
    with pytest.raises(DataError) as info:
        Schema.validate_value(INT8_SCHEMA, object(), "field")
    assert str(info.value) == (
        "Invalid value for schema with type INT8: <class 'object'> for field: \"field\""
    )
    strings = SchemaBuilder.array(STRING_SCHEMA).build()
    with pytest.raises(DataError) as info:
        Schema.validate_value(strings, ["hello", None], "field")
    assert str(info.value) == (
        'Invalid value: null used for required element of array field: "field", schema type: STRING'
    )
    with pytest.raises(DataError, match='for key of map field: "field"'):
        Schema.validate_value(
            SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build(), {1: "v"}, "field"
        )
    no_elements = Schema(Type.ARRAY)
    with pytest.raises(DataError, match='No schema defined for element of array field: "f"'):
        Schema.validate_value(no_elements, [], "f")


def test_validate_struct_value() -> None:
    child = SchemaBuilder.struct().field("int8", INT8_SCHEMA).build()
    other = SchemaBuilder.struct().field("int8", INT8_SCHEMA).name("other").build()
    with pytest.raises(DataError, match=r"^Struct schemas do not match\.$"):
        Schema.validate_value(child, Struct(other).put("int8", 1))
    with pytest.raises(DataError, match='required field: "int8"'):
        Schema.validate_value(child, Struct(child))
    Schema.validate_value(child, Struct(child).put("int8", 1))


# -- SchemaAndValue and pickling ---------------------------------------------------------------


def test_schema_and_value() -> None:
    assert SchemaAndValue(None, None) == SchemaAndValue.NULL
    pair = SchemaAndValue(INT32_SCHEMA, 5)
    assert (pair.schema, pair.value) == (INT32_SCHEMA, 5)
    schema, value = pair
    assert (schema, value) == (INT32_SCHEMA, 5)
    assert repr(pair) == "SchemaAndValue{schema=Schema{INT32}, value=5}"


def test_pickle_round_trip() -> None:
    nested = (
        SchemaBuilder.struct()
        .name("outer")
        .version(3)
        .doc("doc")
        .parameter("k", "v")
        .field("list", SchemaBuilder.array(Decimal.schema(2)).optional().build())
        .field("map", SchemaBuilder.map(STRING_SCHEMA, Timestamp.SCHEMA).build())
        .field("d", SchemaBuilder.int32().default_value(7).build())
        .build()
    )
    copy = pickle.loads(pickle.dumps(nested))
    assert copy == nested and hash(copy) == hash(nested)
    assert copy.field("d") == nested.field("d")
    assert copy.parameters == {"k": "v"}
    with pytest.raises(AttributeError):
        copy.doc = "changed"
    pair = pickle.loads(pickle.dumps(SchemaAndValue(nested, None)))
    assert pair == SchemaAndValue(nested, None)


# -- properties --------------------------------------------------------------------------------

_PRIMITIVES: dict[Type, st.SearchStrategy[Any]] = {
    Type.INT8: st.integers(-(2**7), 2**7 - 1),
    Type.INT16: st.integers(-(2**15), 2**15 - 1),
    Type.INT32: st.integers(-(2**31), 2**31 - 1),
    Type.INT64: st.integers(-(2**63), 2**63 - 1),
    Type.FLOAT32: st.floats(width=32, allow_nan=False),
    Type.FLOAT64: st.floats(allow_nan=False),
    Type.BOOLEAN: st.booleans(),
    Type.STRING: st.text(max_size=5),
    Type.BYTES: st.binary(max_size=5),
}
_NAMES = st.text("abcdef", min_size=1, max_size=4)


def _schemas() -> st.SearchStrategy[Schema]:
    leaves = st.builds(
        lambda t, opt: (
            SchemaBuilder.type(t).optional().build() if opt else SchemaBuilder.type(t).build()
        ),
        st.sampled_from(sorted(_PRIMITIVES, key=lambda t: t.value)),
        st.booleans(),
    )

    def extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
        def struct(fields: dict[str, Schema]) -> Schema:
            builder = SchemaBuilder.struct()
            for name, schema in fields.items():
                builder.field(name, schema)
            return builder.build()

        return st.one_of(
            children.map(lambda s: SchemaBuilder.array(s).build()),
            st.tuples(leaves, children).map(lambda kv: SchemaBuilder.map(*kv).build()),
            st.dictionaries(_NAMES, children, max_size=4).map(struct),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def _values(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.type in _PRIMITIVES:
        base = _PRIMITIVES[schema.type]
    elif schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        base = st.lists(_values(schema.value_schema), max_size=3)
    elif schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key_schema = SchemaBuilder.type(schema.key_schema.type).build()  # keys: never None
        base = st.dictionaries(_values(key_schema), _values(schema.value_schema), max_size=3)
    else:

        def fill(values: list[Any]) -> Struct:
            struct = Struct(schema)
            for field, value in zip(schema.fields, values, strict=True):
                struct.put(field.name, value)
            return struct

        base = st.tuples(*(_values(f.schema) for f in schema.fields)).map(lambda t: fill(list(t)))
    return st.one_of(st.none(), base) if schema.optional else base


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_generated_values_validate_and_pickle(drawn: st.DataObject) -> None:
    schema = drawn.draw(_schemas())
    value = drawn.draw(_values(schema))
    Schema.validate_value(schema, value)
    schema_copy, value_copy = pickle.loads(pickle.dumps((schema, value)))
    assert schema_copy == schema and hash(schema_copy) == hash(schema)
    assert value_copy == value
    Schema.validate_value(schema_copy, value_copy)
