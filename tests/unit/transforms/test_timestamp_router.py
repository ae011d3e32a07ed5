from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.timestamp_router import TimestampRouter


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ({}, "topic-20231114"),
        ({"topic.format": "${timestamp}.${topic}", "timestamp.format": "yyyy-MM-dd'T'HH:mm:ss.SSS"},
         "2023-11-14T22:13:20.123.topic"),
        ({"timestamp.format": "yy MMM EEE h a"}, "topic-23 Nov Tue 10 PM"),
    ],
)  # fmt: skip
def test_routes_by_timestamp(side, apply, configs, expected):
    smt = TimestampRouter()
    smt.configure(configs)
    assert apply(smt, side.record(None, {"a": 1})).topic == expected


def test_missing_timestamp(side):
    smt = TimestampRouter()
    smt.configure({})
    with pytest.raises(DataError, match="Timestamp missing on record: "):
        smt.apply(side.record(None, {}, timestamp=None))


def test_unsupported_pattern_letter():
    with pytest.raises(ConfigError, match="'w' is not supported"):
        TimestampRouter().configure({"timestamp.format": "yyyy-ww"})
