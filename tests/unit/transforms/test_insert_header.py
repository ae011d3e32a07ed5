from __future__ import annotations

import pytest

from sparkcat.api.data import Type
from sparkcat.api.errors import ConfigError
from sparkcat.api.records import Header
from sparkcat.transforms.insert_header import InsertHeader


@pytest.mark.parametrize(
    ("literal", "type_", "value"),
    [("42", Type.INT8, 42), ("hello", Type.STRING, "hello"), ("true", Type.BOOLEAN, True)],
)
def test_appends_parsed_literal(side, apply, literal, type_, value):
    smt = InsertHeader()
    smt.configure({"header": "h", "value.literal": literal})
    record = side.record(None, {"a": 1}, headers=[Header("h", None, "old")])
    out = apply(smt, record)
    assert [h.key for h in out.headers] == ["h", "h"]
    last = out.headers.last_with_name("h")
    assert last.value == value and last.schema.type is type_


def test_requires_both_configs():
    with pytest.raises(ConfigError, match=r'Missing required configuration "value\.literal"'):
        InsertHeader().configure({"header": "h"})
