"""Struct (Kafka's StructTest)."""

from __future__ import annotations

import pickle

import pytest

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
    Struct,
)
from sparkcat.api.errors import DataError

FLAT_SCHEMA = (
    SchemaBuilder.struct()
    .field("int8", INT8_SCHEMA)
    .field("int16", INT16_SCHEMA)
    .field("int32", INT32_SCHEMA)
    .field("int64", INT64_SCHEMA)
    .field("float32", FLOAT32_SCHEMA)
    .field("float64", FLOAT64_SCHEMA)
    .field("boolean", BOOLEAN_SCHEMA)
    .field("string", STRING_SCHEMA)
    .field("bytes", BYTES_SCHEMA)
    .build()
)
ARRAY_SCHEMA = SchemaBuilder.array(INT8_SCHEMA).build()
MAP_SCHEMA = SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build()
CHILD_SCHEMA = SchemaBuilder.struct().field("int8", INT8_SCHEMA).build()
NESTED_SCHEMA = (
    SchemaBuilder.struct()
    .field("array", ARRAY_SCHEMA)
    .field("map", MAP_SCHEMA)
    .field("nested", CHILD_SCHEMA)
    .build()
)
OPTIONAL_FIELD_SCHEMA = SchemaBuilder.int8().optional().build()
DEFAULT_FIELD_SCHEMA = SchemaBuilder.int8().default_value(0).build()


def flat(string: str = "foobar", data: bytes = b"foobar") -> Struct:
    return (
        Struct(FLAT_SCHEMA)
        .put("int8", 12)
        .put("int16", 12)
        .put("int32", 12)
        .put("int64", 12)
        .put("float32", 12.0)
        .put("float64", 12.0)
        .put("boolean", True)
        .put("string", string)
        .put("bytes", data)
    )


def nested(int8: int = 12, array: list[int] | None = None) -> Struct:
    return (
        Struct(NESTED_SCHEMA)
        .put("array", [1, 2] if array is None else array)
        .put("map", {1: "string"})
        .put("nested", Struct(CHILD_SCHEMA).put("int8", int8))
    )


def test_flat_struct() -> None:
    struct = flat()
    assert struct.get_int8("int8") == 12
    assert struct.get_int16("int16") == 12
    assert struct.get_int32("int32") == 12
    assert struct.get_int64("int64") == 12
    assert struct.get_float32("float32") == 12.0
    assert struct.get_float64("float64") == 12.0
    assert struct.get_boolean("boolean") is True
    assert struct.get_string("string") == "foobar"
    assert struct.get_bytes("bytes") == b"foobar"
    assert struct.schema is FLAT_SCHEMA
    struct.validate()


def test_complex_struct() -> None:
    struct = nested()
    assert struct.get_array("array") == [1, 2]
    assert struct.get_map("map") == {1: "string"}
    child = struct.get_struct("nested")
    assert child is not None and child.get("int8") == 12
    struct.validate()


def test_typed_getter_checks_the_field_type() -> None:
    with pytest.raises(DataError, match="Field 'int8' is not of type STRING"):
        flat().get_string("int8")


def test_put_by_field_and_get_by_field() -> None:
    field = FLAT_SCHEMA.field("int32")
    assert field is not None
    struct = Struct(FLAT_SCHEMA).put(field, 5)
    assert struct.get(field) == 5 == struct.get("int32")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("array", ["should fail since elements should be int8s"]),
        ("array", [1, 300]),
        ("map", {"should fail because keys should be int32s": "x"}),
        ("nested", Struct(SchemaBuilder.struct().field("other", INT8_SCHEMA).build())),
        ("nested", Struct(CHILD_SCHEMA)),  # right schema, but its required field is unset
    ],
)
def test_put_validates_deeply(name: str, value: object) -> None:
    with pytest.raises(DataError):
        Struct(NESTED_SCHEMA).put(name, value)


def test_put_type_mismatch_message() -> None:
    with pytest.raises(DataError) as info:
        Struct(FLAT_SCHEMA).put("int8", "should fail because this is a string, not int8")
    assert str(info.value) == (
        "Invalid value for schema with type INT8: <class 'str'> for field: \"int8\""
    )
    with pytest.raises(DataError, match=r"out of range \[-128, 127\] for field: \"int8\""):
        Struct(FLAT_SCHEMA).put("int8", 128)
    with pytest.raises(DataError, match="<class 'bool'>"):
        Struct(FLAT_SCHEMA).put("int32", True)
    with pytest.raises(DataError) as info:
        Struct(FLAT_SCHEMA).put("string", None)
    assert str(info.value) == (
        'Invalid value: null used for required field: "string", schema type: STRING'
    )


def test_unknown_field() -> None:
    with pytest.raises(DataError, match=r"^nope is not a valid field name$"):
        Struct(FLAT_SCHEMA).put("nope", 1)
    with pytest.raises(DataError, match="nope is not a valid field name"):
        Struct(FLAT_SCHEMA).get("nope")


def test_not_a_struct_schema() -> None:
    with pytest.raises(DataError, match=r"Not a struct schema: Schema\{INT8\}"):
        Struct(INT8_SCHEMA)


def test_missing_field_validation() -> None:
    struct = Struct(SchemaBuilder.struct().field("field", INT8_SCHEMA).build())
    with pytest.raises(DataError) as info:
        struct.validate()
    assert str(info.value) == (
        'Invalid value: null used for required field: "field", schema type: INT8'
    )
    Struct(SchemaBuilder.struct().field("field", OPTIONAL_FIELD_SCHEMA).build()).validate()
    Struct(SchemaBuilder.struct().field("field", DEFAULT_FIELD_SCHEMA).build()).validate()


def test_optional_field_accepts_null() -> None:
    struct = Struct(SchemaBuilder.struct().field("field", OPTIONAL_FIELD_SCHEMA).build())
    assert struct.put("field", 3).put("field", None).get("field") is None


def test_get_falls_back_to_default() -> None:
    with_default = Struct(SchemaBuilder.struct().field("field", DEFAULT_FIELD_SCHEMA).build())
    assert with_default.get("field") == 0
    assert with_default.get_without_default("field") is None
    assert with_default.get_int8("field") is None  # typed getters return the stored value
    assert Struct(SchemaBuilder.struct().field("field", INT8_SCHEMA).build()).get("field") is None


def test_equality_and_hash() -> None:
    assert flat() == flat() and hash(flat()) == hash(flat())
    assert flat(data=bytearray(b"foobar")) == flat()  # type: ignore[arg-type]
    assert hash(flat(data=bytearray(b"foobar"))) == hash(flat())  # type: ignore[arg-type]
    assert flat() != flat(string="mismatching string")
    assert flat() != flat(data=b"mismatching_string")
    assert hash(flat()) != hash(flat(data=b"mismatching_string"))
    assert nested() == nested() and hash(nested()) == hash(nested())
    assert nested() != nested(int8=13)
    assert nested() != nested(array=[1, 2, 3])
    assert flat() != "Struct{}"


def test_repr_omits_unset_fields() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("field1", BOOLEAN_SCHEMA)
        .field("field2", STRING_SCHEMA)
        .field("unset", SchemaBuilder.string().optional().build())
        .field("list", SchemaBuilder.array(INT8_SCHEMA).optional().build())
        .field("child", SchemaBuilder.struct().field("b", BOOLEAN_SCHEMA).optional().build())
        .build()
    )
    struct = Struct(schema).put("field1", True).put("field2", "string2")
    assert repr(struct) == "Struct{field1=true,field2=string2}"
    child_schema = schema.field("child")
    assert child_schema is not None
    struct.put("list", [1, 2]).put("child", Struct(child_schema.schema).put("b", False))
    assert repr(struct) == "Struct{field1=true,field2=string2,list=[1, 2],child=Struct{b=false}}"


def test_pickle_round_trip() -> None:
    original = nested()
    copy = pickle.loads(pickle.dumps(original))
    assert copy == original and hash(copy) == hash(original)
    copy.put("array", [9])  # the copy is independent
    assert original.get("array") == [1, 2]
    copy.validate()


# -- whole-struct operations (sparkcat additions) -----------------------------------------------

PAIR_SCHEMA = (
    SchemaBuilder.struct()
    .field("id", INT32_SCHEMA)
    .field("note", SchemaBuilder.string().optional().build())
    .build()
)


def test_from_values_equals_struct_built_with_put() -> None:
    built = Struct.from_values(PAIR_SCHEMA, (7, "x"))
    assert built == Struct(PAIR_SCHEMA).put("id", 7).put("note", "x")
    assert built.schema is PAIR_SCHEMA
    assert list(built.values) == [7, "x"]
    assert Struct.from_values(PAIR_SCHEMA, [7, None]).get("note") is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([None, "x"], 'Invalid value: null used for required field: "id"'),
        ([2**31, "x"], 'out of range [-2147483648, 2147483647] for field: "id"'),
        ([1, 2], """Invalid value for schema with type STRING: <class 'int'> for field: "note\""""),
        ([1], "Struct schema has 2 fields but 1 values were given"),
        ([1, "x", "y"], "Struct schema has 2 fields but 3 values were given"),
    ],
)
def test_from_values_rejects_what_put_rejects(values: list[object], message: str) -> None:
    with pytest.raises(DataError) as error:
        Struct.from_values(PAIR_SCHEMA, values)
    assert message in str(error.value)


def test_from_values_needs_a_struct_schema() -> None:
    with pytest.raises(DataError):
        Struct.from_values(INT8_SCHEMA, [1])


def test_from_valid_values_adopts_the_list_without_checks() -> None:
    values: list[object] = [3, None]
    struct = Struct.from_valid_values(PAIR_SCHEMA, values)
    assert struct == Struct(PAIR_SCHEMA).put("id", 3)
    assert struct.values is values
    # Trusted by contract: a broken contract surfaces when the struct is validated.
    broken = Struct.from_valid_values(PAIR_SCHEMA, [None, None])
    with pytest.raises(DataError, match='null used for required field: "id"'):
        broken.validate()


def test_values_reflect_puts_and_keep_unset_fields_as_none() -> None:
    schema = SchemaBuilder.struct().field("a", DEFAULT_FIELD_SCHEMA).field("b", INT8_SCHEMA).build()
    struct = Struct(schema)
    assert list(struct.values) == [None, None]
    struct.put("b", 5)
    assert list(struct.values) == [None, 5]
    assert struct.get("a") == 0  # get applies the default, values does not


def test_schema_and_values_are_read_only() -> None:
    struct = Struct(PAIR_SCHEMA)
    with pytest.raises(AttributeError):
        struct.schema = PAIR_SCHEMA
    with pytest.raises(AttributeError):
        struct.values = [1, None]


def test_struct_from_valid_values_pickles() -> None:
    struct = Struct.from_valid_values(PAIR_SCHEMA, [1, "x"])
    assert pickle.loads(pickle.dumps(struct)) == struct


def test_subclasses_keep_their_own_attributes() -> None:
    class Tagged(Struct):
        tag: str

        def __init__(self, schema: Schema) -> None:
            super().__init__(schema)
            self.tag = "t"

    tagged = Tagged(PAIR_SCHEMA)
    tagged.put("id", 1)
    assert tagged.tag == "t" and tagged.get("id") == 1
    with pytest.raises(AttributeError):
        tagged.schema = PAIR_SCHEMA
    with pytest.raises(AttributeError):
        del tagged.values
