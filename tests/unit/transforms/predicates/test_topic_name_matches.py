from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.api.records import SinkRecord, SourceRecord
from sparkcat.transforms.predicates.topic_name_matches import TopicNameMatches


@pytest.mark.parametrize(
    ("pattern", "topic", "expected"),
    [("foo.*", "foobar", True), ("foo", "foobar", False), ("\\p{Alpha}+-\\d", "abc-1", True)],
)
def test_full_match(pattern, topic, expected):
    predicate = TopicNameMatches()
    predicate.configure({"pattern": pattern})
    assert predicate.test(SourceRecord(None, None, topic)) is expected
    assert predicate.test(SinkRecord(topic, 0, None, None, None, None, 1)) is expected


@pytest.mark.parametrize(
    ("pattern", "message"), [("", "String must be non-empty"), ("[", "Invalid regex")]
)
def test_config_errors(pattern, message):
    with pytest.raises(ConfigError, match=message):
        TopicNameMatches().configure({"pattern": pattern})
