from __future__ import annotations

import pytest

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError
from sparkcat.transforms.header_from import HeaderFrom

INT = SchemaBuilder.int32().build()
SCHEMA = SchemaBuilder.struct().field("a", INT).field("b", SchemaBuilder.string().build()).build()


@pytest.mark.parametrize("operation", ["copy", "move"])
def test_with_schema(side, apply, operation):
    smt = side.variant(HeaderFrom)
    smt.configure({"fields": "a", "headers": "h", "operation": operation})
    record = side.record(SCHEMA, Struct(SCHEMA).put("a", 1).put("b", "x"))
    out = apply(smt, record)
    header = out.headers.last_with_name("h")
    assert header.value == 1 and header.schema == INT
    names = [f.name for f in side.schema(out).fields]
    assert names == (["a", "b"] if operation == "copy" else ["b"])
    assert side.data(out).get("b") == "x"


@pytest.mark.parametrize("operation", ["copy", "move"])
def test_schemaless(side, apply, operation):
    smt = side.variant(HeaderFrom)
    smt.configure({"fields": "a,b", "headers": "h1,h2", "operation": operation})
    out = apply(smt, side.record(None, {"a": 1, "c": 2}))
    assert [(h.key, h.value) for h in out.headers] == [("h1", 1), ("h2", None)]
    assert side.data(out) == ({"a": 1, "c": 2} if operation == "copy" else {"c": 2})


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"fields": "a,b", "headers": "h", "operation": "copy"},
         "'fields' config must have the same number of elements as 'headers' config."),
        ({"fields": "a", "headers": "h", "operation": "cut"}, "String must be one of: move, copy"),
    ],
)  # fmt: skip
def test_config_errors(configs, message):
    with pytest.raises(ConfigError, match=message):
        HeaderFrom.Value().configure(configs)
