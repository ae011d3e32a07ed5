from __future__ import annotations

from sparkcat.api.records import SinkRecord, SourceRecord
from sparkcat.transforms.predicates.record_is_tombstone import RecordIsTombstone


def test_null_value_is_tombstone():
    predicate = RecordIsTombstone()
    predicate.configure({})
    assert predicate.test(SourceRecord(None, None, "t", key="k"))
    assert not predicate.test(SourceRecord(None, None, "t", value=0))
    assert predicate.test(SinkRecord("t", 0, None, "k", None, None, 1))
    assert repr(predicate) == "RecordIsTombstone{}"
