from __future__ import annotations

from sparkcat.api.data import SchemaBuilder
from sparkcat.transforms.hoist_field import HoistField


def test_with_schema(side, apply):
    smt = side.variant(HoistField)
    smt.configure({"field": "f"})
    int_schema = SchemaBuilder.int32().build()
    record = side.record(int_schema, 5)
    out = apply(smt, record)
    assert side.schema(out).field("f").schema == int_schema
    assert side.data(out).get("f") == 5
    assert side.other_unchanged(record, out)


def test_schemaless(side, apply):
    smt = side.variant(HoistField)
    smt.configure({"field": "f"})
    assert side.data(apply(smt, side.record(None, [1]))) == {"f": [1]}
    assert side.data(apply(smt, side.record(None, None))) == {"f": None}
