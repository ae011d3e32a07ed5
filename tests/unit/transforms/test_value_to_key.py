from __future__ import annotations

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import SinkRecord
from sparkcat.transforms.value_to_key import ValueToKey

INT = SchemaBuilder.int32().build()
SCHEMA = SchemaBuilder.struct().field("a", INT).field("b", INT).field("c", INT).build()


def test_with_schema(side, apply):
    smt = ValueToKey()
    smt.configure({"fields": "c,a"})
    side.name = "Value"
    record = side.record(SCHEMA, Struct(SCHEMA).put("a", 1).put("b", 2).put("c", 3))
    out = apply(smt, record)
    assert [f.name for f in out.key_schema.fields] == ["c", "a"]
    assert (out.key.get("c"), out.key.get("a")) == (3, 1)
    assert out.value == record.value
    assert isinstance(out, SinkRecord) == (side.kind == "sink")


def test_schemaless(side, apply):
    smt = ValueToKey()
    smt.configure({"fields": "a,z"})
    side.name = "Value"
    out = apply(smt, side.record(None, {"a": 1, "b": 2}))
    assert out.key == {"a": 1, "z": None} and out.key_schema is None


def test_errors(side):
    smt = ValueToKey()
    smt.configure({"fields": "nope"})
    side.name = "Value"
    with pytest.raises(DataError, match="Field does not exist: nope"):
        smt.apply(side.record(SCHEMA, Struct(SCHEMA).put("a", 1).put("b", 2).put("c", 3)))
    with pytest.raises(ConfigError, match="Empty list"):
        ValueToKey().configure({"fields": ""})
