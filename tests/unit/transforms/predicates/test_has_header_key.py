from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.api.records import Header, SinkRecord, SourceRecord
from sparkcat.transforms.predicates.has_header_key import HasHeaderKey


@pytest.mark.parametrize("kind", ["source", "sink"])
def test_matches_header_name(kind):
    predicate = HasHeaderKey()
    predicate.configure({"name": "h"})
    headers = [Header("x", None, 1), Header("h", None, None)]
    if kind == "source":
        with_h = SourceRecord(None, None, "t", headers=headers)
        without = SourceRecord(None, None, "t", headers=headers[:1])
    else:
        with_h = SinkRecord("t", 0, None, None, None, None, 1, headers=headers)
        without = SinkRecord("t", 0, None, None, None, None, 1, headers=headers[:1])
    assert predicate.test(with_h) and not predicate.test(without)


def test_name_required_non_empty():
    with pytest.raises(ConfigError, match="String must be non-empty"):
        HasHeaderKey().configure({"name": ""})
