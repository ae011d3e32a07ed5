from __future__ import annotations

import datetime
import decimal

import pytest

from sparkcat.api.data import Date, Decimal, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.mask_field import MaskField

SCHEMA = (
    SchemaBuilder.struct()
    .field("i8", SchemaBuilder.int8().build())
    .field("i32", SchemaBuilder.int32().build())
    .field("f64", SchemaBuilder.float64().build())
    .field("b", SchemaBuilder.boolean().build())
    .field("s", SchemaBuilder.string().build())
    .field("d", Date.SCHEMA)
    .field("dec", Decimal.schema(2))
    .field("arr", SchemaBuilder.array(SchemaBuilder.int32().build()).build())
    .field("keep", SchemaBuilder.string().build())
    .build()
)
VALUES = {
    "i8": 5, "i32": 123, "f64": 1.5, "b": True, "s": "secret", "d": datetime.date(2020, 1, 2),
    "dec": decimal.Decimal("3.14"), "arr": [1, 2], "keep": "kept",
}  # fmt: skip
MASKED = {
    "i8": 0, "i32": 0, "f64": 0.0, "b": False, "s": "", "d": datetime.date(1970, 1, 1),
    "dec": decimal.Decimal(0), "arr": [], "keep": "kept",
}  # fmt: skip
FIELDS = ",".join(k for k in VALUES if k != "keep")


def _struct():
    s = Struct(SCHEMA)
    for k, v in VALUES.items():
        s.put(k, v)
    return s


def test_with_schema_masks_to_empty(side, apply):
    smt = side.variant(MaskField)
    smt.configure({"fields": FIELDS})
    record = side.record(SCHEMA, _struct())
    out = apply(smt, record)
    assert side.schema(out) == SCHEMA
    assert {k: side.data(out).get(k) for k in VALUES} == MASKED
    assert side.other_unchanged(record, out)


def test_schemaless(side, apply):
    smt = side.variant(MaskField)
    smt.configure({"fields": "i32,s,arr,m,missing"})
    out = apply(smt, side.record(None, {"i32": 9, "s": "x", "arr": [1], "m": {"a": 1}, "k": 1}))
    assert side.data(out) == {"i32": 0, "s": "", "arr": [], "m": {}, "k": 1, "missing": None}


def test_replacement(side, apply):
    smt = side.variant(MaskField)
    smt.configure({"fields": "i8,i32,f64,s,dec", "replacement": "12"})
    out = apply(smt, side.record(SCHEMA, _struct()))
    got = side.data(out)
    assert (got.get("i8"), got.get("i32"), got.get("f64"), got.get("s")) == (12, 12, 12.0, "12")
    assert got.get("dec") == decimal.Decimal(12)


def test_replacement_errors(side):
    smt = side.variant(MaskField)
    smt.configure({"fields": "b", "replacement": "x"})
    with pytest.raises(
        DataError, match=r"Cannot mask value of type bool with custom replacement\."
    ):
        smt.apply(side.record(None, {"b": True}))
    smt.configure({"fields": "i", "replacement": "abc"})
    with pytest.raises(DataError):
        smt.apply(side.record(None, {"i": 1}))


def test_requires_struct(side):
    smt = side.variant(MaskField)
    smt.configure({"fields": "a"})
    with pytest.raises(
        DataError, match=r"Only Struct objects supported for \[mask fields\], found: null"
    ):
        smt.apply(side.record(SCHEMA, None))


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"fields": ""}, "Invalid value [] for configuration fields: Empty list"),
        ({"fields": "a", "replacement": ""}, "String must be non-empty"),
    ],
)
def test_config_errors(configs, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        MaskField.Value().configure(configs)
