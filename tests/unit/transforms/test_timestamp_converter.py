from __future__ import annotations

import datetime

import pytest

from sparkcat.api.data import Date, SchemaBuilder, Struct, Time, Timestamp, Type
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms.timestamp_converter import TimestampConverter

MILLIS = 1_700_000_000_123
DT = datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, datetime.UTC)
FMT = "yyyy-MM-dd HH:mm:ss.SSS"
TEXT = "2023-11-14 22:13:20.123"


@pytest.mark.parametrize(
    ("target", "extra", "expected"),
    [
        ("unix", {}, MILLIS),
        ("unix", {"unix.precision": "seconds"}, MILLIS // 1000),
        ("unix", {"unix.precision": "microseconds"}, MILLIS * 1000),
        ("string", {"format": FMT}, TEXT),
        ("Date", {}, datetime.date(2023, 11, 14)),
        ("Time", {}, datetime.time(22, 13, 20, 123000)),
        ("Timestamp", {}, DT),
    ],
)
def test_whole_value_from_timestamp_schema(side, apply, target, extra, expected):
    smt = side.variant(TimestampConverter)
    smt.configure({"target.type": target, **extra})
    out = apply(smt, side.record(Timestamp.SCHEMA, DT))
    assert side.data(out) == expected
    assert side.schema(out).optional is False


@pytest.mark.parametrize(
    ("value", "extra"),
    [(TEXT, {"format": FMT}), (MILLIS, {}), (MILLIS * 1_000_000, {"unix.precision": "nanoseconds"}),
     ("20231114T221320.123+0000", {"format": "yyyyMMdd'T'HHmmss.SSSZ"}), (DT, {})],
)  # fmt: skip
def test_schemaless_inputs_to_timestamp(side, apply, value, extra):
    smt = side.variant(TimestampConverter)
    smt.configure({"target.type": "Timestamp", **extra})
    assert side.data(apply(smt, side.record(None, value))) == DT


def test_field_with_schema(side, apply):
    schema = (
        SchemaBuilder.struct()
        .field("ts", SchemaBuilder.int64().build())
        .field("o", SchemaBuilder.string().build())
        .build()
    )
    smt = side.variant(TimestampConverter)
    smt.configure({"target.type": "string", "field": "ts", "format": "yyyy-MM-dd"})
    record = side.record(schema, Struct(schema).put("ts", MILLIS).put("o", "x"))
    out = apply(smt, record)
    assert side.schema(out).field("ts").schema.type is Type.STRING
    assert side.data(out).get("ts") == "2023-11-14" and side.data(out).get("o") == "x"
    assert side.other_unchanged(record, out)


def test_field_schemaless(side, apply):
    smt = side.variant(TimestampConverter)
    smt.configure({"target.type": "Date", "field": "ts"})
    out = apply(smt, side.record(None, {"ts": MILLIS, "o": 1}))
    assert side.data(out) == {"ts": datetime.date(2023, 11, 14), "o": 1}
    assert Date.from_logical(Date.SCHEMA, side.data(out)["ts"]) == 19675
    assert Time.SCHEMA.name == Time.LOGICAL_NAME


def test_errors(side):
    smt = side.variant(TimestampConverter)
    smt.configure({"target.type": "unix", "format": FMT})
    with pytest.raises(
        DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern \(yyyy"
    ):
        smt.apply(side.record(None, "nope"))
    with pytest.raises(
        DataError, match="TimestampConverter does not support float objects as timestamps"
    ):
        smt.apply(side.record(None, 1.5))
    with pytest.raises(
        ConfigError, match="requires format option to be specified when using string"
    ):
        side.variant(TimestampConverter).configure({"target.type": "string"})
    with pytest.raises(
        ConfigError, match="String must be one of: string, unix, Date, Time, Timestamp"
    ):
        side.variant(TimestampConverter).configure({"target.type": "date"})
