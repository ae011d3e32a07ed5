from __future__ import annotations

from sparkcat.transforms.filter import Filter


def test_drops_every_record(side, apply):
    smt = Filter()
    smt.configure({})
    assert apply(smt, side.record(None, {"a": 1})) is None
    assert smt.config().names() == Filter.CONFIG_DEF.names()
    smt.close()
