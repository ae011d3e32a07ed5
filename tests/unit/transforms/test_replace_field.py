from __future__ import annotations

import logging

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError
from sparkcat.transforms.replace_field import ReplaceField

INT = SchemaBuilder.int32().build()
SCHEMA = (
    SchemaBuilder.struct().field("a", INT).field("b", INT).field("c", INT).field("d", INT).build()
)
DATA = {"a": 1, "b": 2, "c": 3, "d": 4}


def _struct():
    s = Struct(SCHEMA)
    for k, v in DATA.items():
        s.put(k, v)
    return s


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ({"exclude": "b"}, {"a": 1, "c": 3, "d": 4}),
        ({"include": "a,b"}, {"a": 1, "b": 2}),
        ({"include": "a,b", "exclude": "b"}, {"a": 1}),
        ({"renames": "a:x,c:y", "exclude": "d"}, {"x": 1, "b": 2, "y": 3}),
        ({"blacklist": "b"}, {"a": 1, "c": 3, "d": 4}),
        ({"whitelist": "a"}, {"a": 1}),
        ({"include": "c", "whitelist": "a"}, {"c": 3}),
    ],
)
def test_schemaless_and_with_schema(side, apply, configs, expected):
    smt = side.variant(ReplaceField)
    smt.configure(configs)
    record = side.record(None, dict(DATA))
    out = apply(smt, record)
    assert side.data(out) == expected
    assert side.other_unchanged(record, out)
    out = apply(smt, side.record(SCHEMA, _struct()))
    assert [f.name for f in side.schema(out).fields] == list(expected)
    assert {k: side.data(out).get(k) for k in expected} == expected


def test_tombstone_passes_through(side, apply):
    smt = side.variant(ReplaceField)
    smt.configure({"exclude": "a"})
    record = side.record(SCHEMA, None)
    assert apply(smt, record) is record


def test_deprecated_alias_logs(caplog):
    with caplog.at_level(logging.WARNING):
        ReplaceField.Value().configure({"blacklist": "a"})
    assert "blacklist is deprecated" in caplog.text


@pytest.mark.parametrize("renames", ["a", "a:b:c", "a:b,c"])
def test_invalid_rename(renames):
    with pytest.raises(ConfigError, match="Invalid rename mapping: "):
        ReplaceField.Value().configure({"renames": renames})
