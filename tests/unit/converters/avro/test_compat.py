"""Avro schema resolution as latest.compatibility.strict uses it."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.converters.avro._compat import incompatibilities

R1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
R2_OPTIONAL = {
    "type": "record",
    "name": "ns.R",
    "fields": [
        {"name": "a", "type": "long"},
        {"name": "b", "type": ["null", "string"], "default": None},
    ],
}
R2_REQUIRED = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
}
TREE = {
    "type": "record",
    "name": "Node",
    "fields": [{"name": "kids", "type": {"type": "array", "items": "Node"}}],
}


@pytest.mark.parametrize(
    ("reader", "writer", "ok"),
    [
        ("long", "int", True),
        ("float", "long", True),
        ("int", "long", False),
        ("string", "bytes", True),
        (["null", "string"], "string", True),
        ("string", ["null", "string"], False),
        (["null", "long"], ["null", "int"], True),
        ({"type": "map", "values": "double"}, {"type": "map", "values": "float"}, True),
        ({"type": "array", "items": "int"}, {"type": "array", "items": "string"}, False),
        (R1, R2_REQUIRED, True),  # the reader ignores a field it does not know
        (R2_REQUIRED, R1, False),  # a new field without default
        (R2_OPTIONAL, R1, True),  # a new field with default, a promoted one, a namespace
        ({"type": "fixed", "name": "F", "size": 4}, {"type": "fixed", "name": "F", "size": 8},
         False),
        ({"type": "enum", "name": "E", "symbols": ["A"], "default": "A"},
         {"type": "enum", "name": "E", "symbols": ["A", "B"]}, True),
        ({"type": "enum", "name": "E", "symbols": ["A"]},
         {"type": "enum", "name": "E", "symbols": ["A", "B"]}, False),
        (TREE, TREE, True),  # recursive types terminate
        ({"type": "record", "name": "X", "fields": []}, R1, False),
    ],
)  # fmt: skip
def test_resolution_rules(reader: Any, writer: Any, ok: bool) -> None:
    assert (not incompatibilities(reader, writer)) is ok
