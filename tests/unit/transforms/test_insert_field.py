from __future__ import annotations

import datetime

import pytest

from sparkcat.api.data import SchemaBuilder, Struct, Timestamp
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.insert_field import InsertField

TIMESTAMP = 1_700_000_000_123

SCHEMA = (
    SchemaBuilder.struct().name("n").version(2).field("a", SchemaBuilder.int32().build()).build()
)
ALL = {
    "topic.field": "t!",
    "partition.field": "p",
    "timestamp.field": "ts?",
    "static.field": "s",
    "static.value": "v",
}


def test_schemaless_adds_metadata(side, apply):
    smt = side.variant(InsertField)
    smt.configure(ALL)
    record = side.record(None, {"a": 1})
    out = apply(smt, record)
    assert side.data(out) == {"a": 1, "t": "topic", "p": 3, "ts": TIMESTAMP, "s": "v"}
    assert side.other_unchanged(record, out)


def test_with_schema_builds_schema_with_optionality(side, apply):
    smt = side.variant(InsertField)
    smt.configure(ALL)
    record = side.record(SCHEMA, Struct(SCHEMA).put("a", 7))
    out = apply(smt, record)
    schema = side.schema(out)
    assert schema.name == "n" and schema.version == 2
    assert [f.name for f in schema.fields] == ["a", "t", "p", "ts", "s"]
    assert not schema.field("t").schema.optional
    assert schema.field("p").schema.optional
    assert schema.field("ts").schema.name == Timestamp.LOGICAL_NAME
    value = side.data(out)
    assert value.get("a") == 7 and value.get("t") == "topic" and value.get("p") == 3
    assert value.get("ts") == datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, datetime.UTC)
    # the cached schema is reused for the next record with the same schema
    assert side.schema(apply(smt, record)) is schema


def test_tombstone_passes_through(side, apply):
    smt = side.variant(InsertField)
    smt.configure({"topic.field": "t"})
    record = side.record(SCHEMA, None)
    assert apply(smt, record) is record


def test_offset_requires_sink_record(side, apply):
    smt = side.variant(InsertField)
    smt.configure({"offset.field": "o"})
    record = side.record(None, {})
    if side.kind == "sink":
        assert side.data(apply(smt, record)) == {"o": 42}
    else:
        with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\]"):
            smt.apply(record)


def test_requires_map_or_struct(side):
    smt = side.variant(InsertField)
    smt.configure({"topic.field": "t"})
    with pytest.raises(
        DataError,
        match=r"in absence of schema for \[field insertion\], found: str",
    ):
        smt.apply(side.record(None, "text"))
    with pytest.raises(
        DataError, match=r"Only Struct objects supported for \[field insertion\], found: dict"
    ):
        smt.apply(side.record(SCHEMA, {"a": 1}))


def test_replace_null_with_default(side, apply):
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.int32().optional().default_value(5).build())
        .build()
    )
    for flag, expected in (("true", 5), ("false", None)):
        smt = side.variant(InsertField)
        smt.configure({"static.field": "s", "static.value": "v", "replace.null.with.default": flag})
        out = apply(smt, side.record(schema, Struct(schema)))
        assert side.data(out).get_without_default("a") == expected


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({}, "No field insertion configured"),
        (
            {"static.field": "s"},
            "Invalid value null for configuration static.value: No value specified for static "
            "field: s",
        ),
    ],
)
def test_config_errors(configs, message):
    with pytest.raises(ConfigError) as info:
        InsertField.Value().configure(configs)
    assert str(info.value) == message


def test_abstract_base_cannot_apply():
    smt = InsertField()
    smt.configure({"topic.field": "t"})
    with pytest.raises(TypeError):
        smt.apply(None)
