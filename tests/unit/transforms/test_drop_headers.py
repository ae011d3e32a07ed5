from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.api.records import Header
from sparkcat.transforms.drop_headers import DropHeaders


def test_drops_named_headers(side, apply):
    smt = DropHeaders()
    smt.configure({"headers": "a,c"})
    headers = [
        Header("a", None, 1),
        Header("b", None, 2),
        Header("a", None, 3),
        Header("c", None, 4),
    ]
    record = side.record(None, {"x": 1}, headers=headers)
    out = apply(smt, record)
    assert [h.key for h in out.headers] == ["b"]
    assert out.value == record.value and out.key == record.key


def test_requires_non_empty_list():
    with pytest.raises(ConfigError, match="Empty list"):
        DropHeaders().configure({"headers": ""})
    with pytest.raises(ConfigError, match='Missing required configuration "headers"'):
        DropHeaders().configure({})
