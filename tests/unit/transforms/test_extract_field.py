from __future__ import annotations

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.extract_field import ExtractField, FieldSyntaxVersion, SingleFieldPath

INNER = (
    SchemaBuilder.struct()
    .field("c", SchemaBuilder.int32().optional().default_value(9).build())
    .build()
)
SCHEMA = (
    SchemaBuilder.struct().field("a.b", SchemaBuilder.string().build()).field("n", INNER).build()
)


def _struct():
    return Struct(SCHEMA).put("a.b", "dotted").put("n", Struct(INNER))


@pytest.mark.parametrize(
    ("field", "version", "expected", "default_off"),
    [
        ("a.b", "V1", "dotted", "dotted"),
        ("n.c", "v2", 9, None),
        ("`a.b`", "V2", "dotted", "dotted"),
    ],
)
def test_with_schema(side, apply, field, version, expected, default_off):
    for flag, want in (("true", expected), ("false", default_off)):
        smt = side.variant(ExtractField)
        smt.configure(
            {"field": field, "field.syntax.version": version, "replace.null.with.default": flag}
        )
        record = side.record(SCHEMA, _struct())
        out = apply(smt, record)
        assert side.data(out) == want
        assert side.other_unchanged(record, out)


def test_schemaless(side, apply):
    smt = side.variant(ExtractField)
    smt.configure({"field": "x.y", "field.syntax.version": "V2"})
    assert side.data(apply(smt, side.record(None, {"x": {"y": 5}}))) == 5
    assert side.data(apply(smt, side.record(None, {"x": None}))) is None
    assert side.data(apply(smt, side.record(None, None))) is None


def test_unknown_field_and_wrong_types(side):
    smt = side.variant(ExtractField)
    smt.configure({"field": "zzz"})
    with pytest.raises(DataError, match="Unknown field: zzz"):
        smt.apply(side.record(SCHEMA, _struct()))
    with pytest.raises(
        DataError,
        match=r"in absence of schema for \[field extraction\], found: list",
    ):
        smt.apply(side.record(None, [1]))


@pytest.mark.parametrize(
    ("path", "steps"),
    [("a.b.c", ("a", "b", "c")), ("`a.b`.c", ("a.b", "c")), ("a.", ("a", "")),
     ("`a\\`.b`.c", ("a`.b", "c")), ("`x`y`.z", ("x`y", "z"))],
)  # fmt: skip
def test_v2_paths(path, steps):
    assert SingleFieldPath(path, FieldSyntaxVersion.V2).steps == steps


def test_incomplete_backtick():
    with pytest.raises(
        ConfigError,
        match=r"Incomplete backtick pair in path: \[`a.b\], consider adding a backslash before "
        r"backtick at position 0 to escape it",
    ):
        SingleFieldPath("`a.b", FieldSyntaxVersion.V2)


def test_invalid_version():
    with pytest.raises(ConfigError, match=r"field\.syntax\.version"):
        ExtractField.Value().configure({"field": "a", "field.syntax.version": "V3"})
