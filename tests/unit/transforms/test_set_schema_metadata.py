from __future__ import annotations

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.set_schema_metadata import SetSchemaMetadata

SCHEMA = (
    SchemaBuilder.struct()
    .name("old")
    .version(1)
    .doc("d")
    .field("a", SchemaBuilder.int32().build())
    .build()
)


def test_struct_is_rebound_to_renamed_schema(side, apply):
    smt = side.variant(SetSchemaMetadata)
    smt.configure({"schema.name": "new", "schema.version": "7"})
    record = side.record(SCHEMA, Struct(SCHEMA).put("a", 1))
    out = apply(smt, record)
    schema = side.schema(out)
    assert (schema.name, schema.version, schema.doc) == ("new", 7, "d")
    assert side.data(out).schema is schema and side.data(out).get("a") == 1
    assert side.other_unchanged(record, out)


def test_primitive_and_version_only(side, apply):
    smt = side.variant(SetSchemaMetadata)
    smt.configure({"schema.version": "3"})
    schema = SchemaBuilder.string().name("keep").build()
    out = apply(smt, side.record(schema, "x"))
    assert (side.schema(out).name, side.schema(out).version, side.data(out)) == ("keep", 3, "x")


def test_schemaless(side, apply):
    smt = side.variant(SetSchemaMetadata)
    smt.configure({"schema.name": "n"})
    record = side.record(None, None)
    assert apply(smt, record) is record
    with pytest.raises(DataError, match=r"Schema required for \[updating schema metadata\]"):
        smt.apply(side.record(None, {"a": 1}))


def test_requires_name_or_version():
    with pytest.raises(ConfigError, match="Neither schema name nor version configured"):
        SetSchemaMetadata.Value().configure({})
