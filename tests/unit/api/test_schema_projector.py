"""SchemaProjector (Kafka's SchemaProjectorTest)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

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
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaProjector,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError, SchemaProjectorError

project = SchemaProjector.project
NUMERIC = [INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA, INT64_SCHEMA, FLOAT32_SCHEMA, FLOAT64_SCHEMA]


@pytest.mark.parametrize(
    ("source", "value", "target"),
    [
        (BOOLEAN_SCHEMA, False, BOOLEAN_SCHEMA),
        (BYTES_SCHEMA, b"\x01\x02", BYTES_SCHEMA),
        (STRING_SCHEMA, "abc", STRING_SCHEMA),
        (BOOLEAN_SCHEMA, False, OPTIONAL_BOOLEAN_SCHEMA),
        (BYTES_SCHEMA, b"\x01\x02", OPTIONAL_BYTES_SCHEMA),
        (STRING_SCHEMA, "abc", OPTIONAL_STRING_SCHEMA),
    ],
)
def test_primitive_projection(source: Schema, value: Any, target: Schema) -> None:
    assert project(source, value, target) == value


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (OPTIONAL_BOOLEAN_SCHEMA, False),
        (OPTIONAL_BYTES_SCHEMA, b"\x01"),
        (OPTIONAL_STRING_SCHEMA, "a"),
    ],
)
def test_optional_onto_required_without_default(source: Schema, value: Any) -> None:
    target = SchemaBuilder.type(source.type).build()
    with pytest.raises(SchemaProjectorError, match="target schema does not provide a default"):
        project(source, value, target)


@pytest.mark.parametrize("i", range(len(NUMERIC)))
def test_numeric_promotion(i: int) -> None:
    source = NUMERIC[i]
    value = [127, 255, 32767, 327890, 1.25, 1.2345][i]
    for target in NUMERIC[i:]:
        for optional in (False, True):
            schema = SchemaBuilder.type(target.type).optional().build() if optional else target
            projected = project(source, value, schema)
            assert projected == value
            is_float = target.type in (Type.FLOAT32, Type.FLOAT64)
            assert type(projected) is (float if is_float else int)
    for target in NUMERIC[:i]:
        with pytest.raises(SchemaProjectorError, match="Schema type mismatch"):
            project(source, value, target)
    for target in (BOOLEAN_SCHEMA, BYTES_SCHEMA, STRING_SCHEMA):
        with pytest.raises(SchemaProjectorError) as info:
            project(source, value, target)
        assert str(info.value) == (
            f"Schema type mismatch. source type: {source.type} and target type: {target.type}"
        )


@pytest.mark.parametrize(
    ("source_type", "target_type", "value", "default", "expected"),
    [
        (Type.BOOLEAN, Type.BOOLEAN, False, True, False),
        (Type.BYTES, Type.BYTES, b"\x01", b"\x03", b"\x01"),
        (Type.STRING, Type.STRING, "abc", "def", "abc"),
        (Type.INT8, Type.INT8, 12, 127, 12),
        (Type.INT8, Type.INT64, 12, 127890, 12),
        (Type.INT16, Type.FLOAT32, 12, 3.45, 12.0),
        (Type.INT32, Type.FLOAT64, 12, 3.4567, 12.0),
        (Type.INT64, Type.FLOAT64, 12, 3.4567, 12.0),
        (Type.FLOAT32, Type.FLOAT64, 12.345, 3.4567, 12.345),
    ],
)
@pytest.mark.parametrize("optional_target", [True, False])
def test_optional_projection(
    source_type: Type,
    target_type: Type,
    value: Any,
    default: Any,
    expected: Any,
    optional_target: bool,
) -> None:
    source = SchemaBuilder.type(source_type).optional().build()
    builder = SchemaBuilder.type(target_type)
    target = (builder.optional() if optional_target else builder).default_value(default).build()
    assert project(source, value, target) == expected
    assert project(source, None, target) == (None if optional_target else default)


def test_struct_add_field() -> None:
    source = SchemaBuilder.struct().field("field", INT32_SCHEMA).build()
    struct = Struct(source).put("field", 1)
    target = (
        SchemaBuilder.struct()
        .field("field", INT32_SCHEMA)
        .field("field2", SchemaBuilder.int32().default_value(123).build())
        .build()
    )
    projected = project(source, struct, target)
    assert projected.schema is target
    assert (projected.get_int32("field"), projected.get_int32("field2")) == (1, 123)
    incompatible = (
        SchemaBuilder.struct().field("field", INT32_SCHEMA).field("field2", INT32_SCHEMA).build()
    )
    with pytest.raises(SchemaProjectorError) as info:
        project(source, struct, incompatible)
    assert str(info.value) == (
        "Required field `field2` is missing from source schema: Schema{STRUCT}"
    )


def test_struct_remove_field() -> None:
    source = (
        SchemaBuilder.struct().field("field", INT32_SCHEMA).field("field2", INT32_SCHEMA).build()
    )
    struct = Struct(source).put("field", 1).put("field2", 234)
    target = SchemaBuilder.struct().field("field", INT32_SCHEMA).build()
    projected = project(source, struct, target)
    assert projected.get("field") == 1
    with pytest.raises(DataError, match="field2 is not a valid field name"):
        projected.get("field2")


def test_struct_default_value() -> None:
    source = (
        SchemaBuilder.struct()
        .optional()
        .field("field", INT32_SCHEMA)
        .field("field2", INT32_SCHEMA)
        .build()
    )
    builder = SchemaBuilder.struct().field("field", INT32_SCHEMA).field("field2", INT32_SCHEMA)
    default = Struct(builder.build()).put("field", 12).put("field2", 345)
    target = builder.default_value(default).build()
    assert project(source, None, target) == default
    projected = project(source, Struct(source).put("field", 45).put("field2", 678), target)
    assert (projected.get("field"), projected.get("field2")) == (45, 678)


def test_nested_projection() -> None:
    source_flat = SchemaBuilder.struct().field("field", INT32_SCHEMA).build()
    target_flat = (
        SchemaBuilder.struct()
        .field("field", INT32_SCHEMA)
        .field("field2", SchemaBuilder.int32().default_value(123).build())
        .build()
    )

    def nested(flat: Schema) -> Schema:
        return (
            SchemaBuilder.struct()
            .field("first", INT32_SCHEMA)
            .field("second", STRING_SCHEMA)
            .field("array", SchemaBuilder.array(INT32_SCHEMA).build())
            .field("map", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build())
            .field("nested", flat)
            .build()
        )

    source = (
        Struct(nested(source_flat))
        .put("first", 1)
        .put("second", "abc")
        .put("array", [1, 2])
        .put("map", {5: "def"})
        .put("nested", Struct(source_flat).put("field", 113))
    )
    projected = project(nested(source_flat), source, nested(target_flat))
    assert projected.get("first") == 1
    assert projected.get("second") == "abc"
    assert projected.get("array") == [1, 2]
    assert projected.get("map") == {5: "def"}
    inner = projected.get("nested")
    assert (inner.get("field"), inner.get("field2")) == (113, 123)
    projected.validate()


def test_nested_error_names_the_field() -> None:
    source = SchemaBuilder.struct().field("f", SchemaBuilder.string().optional().build()).build()
    target = SchemaBuilder.struct().field("f", STRING_SCHEMA).build()
    with pytest.raises(SchemaProjectorError, match=r"^Error projecting f$") as info:
        project(source, Struct(source).put("f", "x"), target)
    assert isinstance(info.value.__cause__, SchemaProjectorError)


def test_logical_type_projection() -> None:
    amount = decimal.Decimal("1.56")
    assert project(Decimal.schema(2), amount, Decimal.schema(2)) == amount
    day = datetime.date(2020, 1, 1)
    assert project(Date.SCHEMA, day, Date.SCHEMA) == day
    assert project(Time.SCHEMA, datetime.time(1), Time.SCHEMA) == datetime.time(1)
    instant = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    assert project(Timestamp.SCHEMA, instant, Timestamp.SCHEMA) == instant
    named = SchemaBuilder.int32().name("invalidLogicalTypeName").build()
    for logical in (Decimal.schema(2), Date.SCHEMA, Time.SCHEMA, Timestamp.SCHEMA):
        for source, target in (
            (logical, BOOLEAN_SCHEMA),
            (logical, named),
            (BOOLEAN_SCHEMA, logical),
        ):
            with pytest.raises(SchemaProjectorError):
                project(source, None, target)
    with pytest.raises(SchemaProjectorError, match="Schema parameters not equal"):
        project(Decimal.schema(2), amount, Decimal.schema(3))


def test_array_projection() -> None:
    source = SchemaBuilder.array(INT32_SCHEMA).build()
    assert project(source, [1, 2, 3], source) == [1, 2, 3]
    optional_source = SchemaBuilder.array(INT32_SCHEMA).optional().build()
    target = SchemaBuilder.array(INT32_SCHEMA).default_value([1, 2, 3]).build()
    assert project(optional_source, [4, 5], target) == [4, 5]
    assert project(optional_source, None, target) == [1, 2, 3]
    promoted = SchemaBuilder.array(INT64_SCHEMA).default_value([1, 2, 3]).build()
    assert project(optional_source, [4, 5], promoted) == [4, 5]
    with pytest.raises(SchemaProjectorError):
        project(optional_source, None, SchemaBuilder.array(INT32_SCHEMA).build())
    promoted_floats = SchemaBuilder.array(FLOAT64_SCHEMA).build()
    assert [type(v) for v in project(source, [1, 2], promoted_floats)] == [float, float]
    with pytest.raises(SchemaProjectorError):
        project(source, [1], SchemaBuilder.array(BOOLEAN_SCHEMA).build())


def test_map_projection() -> None:
    source = SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).optional().build()
    target = SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).default_value({1: 2}).build()
    assert project(source, {3: 4}, target) == {3: 4}
    assert project(source, None, target) == {1: 2}
    promoted = SchemaBuilder.map(INT64_SCHEMA, FLOAT32_SCHEMA).default_value({3: 4.5}).build()
    projected = project(source, {3: 4}, promoted)
    assert projected == {3: 4.0} and type(projected[3]) is float
    assert project(source, None, promoted) == {3: 4.5}
    with pytest.raises(SchemaProjectorError):
        project(source, None, SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build())
    with pytest.raises(SchemaProjectorError):
        project(source, None, SchemaBuilder.map(BOOLEAN_SCHEMA, STRING_SCHEMA).build())


def test_maybe_compatible() -> None:
    source = SchemaBuilder.int32().name("source").build()
    target = SchemaBuilder.int32().name("target").build()
    with pytest.raises(SchemaProjectorError) as info:
        project(source, 12, target)
    assert str(info.value) == "Schema name mismatch. source name: source and target name: target"
    with_parameters = SchemaBuilder.int32().parameter("key", "value").build()
    with pytest.raises(SchemaProjectorError) as info:
        project(INT32_SCHEMA, 34, with_parameters)
    assert str(info.value) == (
        "Schema parameters not equal. source parameters: null and target parameters: {key=value}"
    )


def test_missing_struct_fields() -> None:
    source = SchemaBuilder.struct().build()
    with_default = SchemaBuilder.struct().field(
        "id", SchemaBuilder.int64().default_value(42).build()
    )
    assert project(source, Struct(source), with_default.build()).get_int64("id") == 42
    optional = SchemaBuilder.struct().field("id", OPTIONAL_INT64_SCHEMA).build()
    assert project(source, Struct(source), optional).get_int64("id") is None
    required = SchemaBuilder.struct().field("id", INT64_SCHEMA).build()
    with pytest.raises(SchemaProjectorError, match="Required field `id` is missing"):
        project(source, Struct(source), required)
