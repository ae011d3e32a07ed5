from __future__ import annotations

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import DataError
from sparkcat.transforms.flatten import Flatten

INT = SchemaBuilder.int32().build()
INNER = (
    SchemaBuilder.struct()
    .optional()
    .field("x", INT)
    .field("arr", SchemaBuilder.array(INT).build())
    .build()
)
SCHEMA = SchemaBuilder.struct().field("a", INT).field("in", INNER).build()


def test_with_schema(side, apply):
    smt = side.variant(Flatten)
    smt.configure({"delimiter": "_"})
    record = side.record(
        SCHEMA, Struct(SCHEMA).put("a", 1).put("in", Struct(INNER).put("x", 2).put("arr", [3]))
    )
    out = apply(smt, record)
    schema = side.schema(out)
    assert [f.name for f in schema.fields] == ["a", "in_x", "in_arr"]
    assert schema.field("in_x").schema.optional  # the parent struct was optional
    value = side.data(out)
    assert (value.get("a"), value.get("in_x"), value.get("in_arr")) == (1, 2, [3])
    assert side.other_unchanged(record, out)


def test_with_schema_null_nested(side, apply):
    smt = side.variant(Flatten)
    smt.configure({})
    out = apply(smt, side.record(SCHEMA, Struct(SCHEMA).put("a", 1)))
    assert side.data(out).get("in.x") is None


def test_schemaless(side, apply):
    smt = side.variant(Flatten)
    smt.configure({})
    out = apply(smt, side.record(None, {"a": {"b": {"c": 1}, "d": [1]}, "e": None}))
    assert side.data(out) == {"a.b.c": 1, "a.d": [1], "e": None}


def test_map_in_struct_is_unsupported(side):
    schema = SchemaBuilder.struct().field("m", SchemaBuilder.map(INT, INT).build()).build()
    smt = side.variant(Flatten)
    smt.configure({})
    with pytest.raises(
        DataError,
        match=r"does not support MAP for record with schemas \(for field m\)\.",
    ):
        smt.apply(side.record(schema, Struct(schema).put("m", {})))
