from __future__ import annotations

import datetime

import pytest

from sparkcat.api.data import Schema, SchemaBuilder, Struct, Timestamp, Type
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.cast import Cast

SCHEMA = (
    SchemaBuilder.struct()
    .field("i", SchemaBuilder.int32().build())
    .field("f", SchemaBuilder.float64().optional().default_value(2.5).build())
    .field("s", SchemaBuilder.string().build())
    .field("b", SchemaBuilder.bytes().build())
    .field("t", Timestamp.SCHEMA)
    .field("keep", SchemaBuilder.int8().build())
    .build()
)


def _struct():
    return (
        Struct(SCHEMA).put("i", 300).put("s", "42").put("b", b"hi").put("keep", 1)
        .put("t", datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC))
    )  # fmt: skip


def test_with_schema(side, apply):
    smt = side.variant(Cast)
    smt.configure({"spec": "i:int8,f:string,s:int64,b:string,t:int64"})
    record = side.record(SCHEMA, _struct())
    out = apply(smt, record)
    schema: Schema = side.schema(out)
    assert [schema.field(n).schema.type for n in ("i", "f", "s", "b", "t", "keep")] == [
        Type.INT8, Type.STRING, Type.INT64, Type.STRING, Type.INT64, Type.INT8,
    ]  # fmt: skip
    assert schema.field("f").schema.optional and schema.field("f").schema.default_value == "2.5"
    value = side.data(out)
    assert (value.get("i"), value.get("f"), value.get("s")) == (44, "2.5", 42)
    assert (value.get("b"), value.get("t"), value.get("keep")) == ("aGk=", 1000, 1)
    assert side.other_unchanged(record, out)


def test_schemaless(side, apply):
    smt = side.variant(Cast)
    smt.configure({"spec": "a:float32,b:boolean,c:string,d:int16"})
    out = apply(smt, side.record(None, {"a": 1.1, "b": "TRUE", "c": True, "d": 70000.9, "e": 1}))
    assert side.data(out) == {
        "a": pytest.approx(1.100000023841858, abs=0), "b": True, "c": "true", "d": 4464, "e": 1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "schema", "value", "expected"),
    [
        ("int32", SchemaBuilder.int64().build(), 2**40 + 5, 5),
        ("string", SchemaBuilder.float64().build(), 1e20, "1.0E20"),
        ("boolean", None, 0, False),
        ("float64", None, "1e3", 1000.0),
    ],
)
def test_whole_value(side, apply, spec, schema, value, expected):
    smt = side.variant(Cast)
    smt.configure({"spec": spec})
    out = apply(smt, side.record(schema, value))
    assert side.data(out) == expected
    if schema is not None:
        assert side.schema(out).type is Type[spec.upper()]


def test_data_errors(side):
    smt = side.variant(Cast)
    smt.configure({"spec": "int8"})
    with pytest.raises(DataError, match=r"Value \(999\) was out of range for requested data type"):
        smt.apply(side.record(None, "999"))
    with pytest.raises(DataError, match=r"does not support casting from ARRAY; supported types"):
        smt.apply(side.record(None, [1]))
    smt.configure({"spec": "a:int8"})
    with pytest.raises(DataError, match="Unexpected type in Cast transformation: bytes"):
        smt.apply(side.record(None, {"a": b"x"}))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ("a:foo", "Invalid type found in casting spec: foo"),
        ("a:struct", "Cast transformation does not support casting to STRUCT; supported types "
         "are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"),
        ("int8,a:int8", "Cast transformations that specify a type to cast the entire value to may "
         "only specify a single cast in their spec"),
        ("a:b:c", "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"),
    ],
)  # fmt: skip
def test_config_errors(spec, message):
    with pytest.raises(ConfigError) as info:
        Cast.Key().configure({"spec": spec})
    assert str(info.value) == message
