"""Behaviour of records, headers and topic partitions (sparkcat.api.records)."""

from __future__ import annotations

import pickle

import pytest

from sparkcat.api.records import (
    ConnectRecord,
    Header,
    Headers,
    SinkRecord,
    SourceRecord,
    TimestampType,
    TopicPartition,
)


def _source(**overrides: object) -> SourceRecord:
    fields: dict[str, object] = {
        "source_partition": {"filename": "a.txt"},
        "source_offset": {"position": 6},
        "topic": "t",
        "kafka_partition": 2,
        "key": "k",
        "value": "hello",
        "timestamp": 1_700_000_000_000,
        "headers": Headers([Header("h", None, 1)]),
    }
    fields.update(overrides)
    return SourceRecord(**fields)  # type: ignore[arg-type]


def _sink(**overrides: object) -> SinkRecord:
    fields: dict[str, object] = {
        "topic": "t",
        "kafka_partition": 1,
        "key_schema": None,
        "key": b"k",
        "value_schema": None,
        "value": {"a": [1, 2]},
        "kafka_offset": 41,
        "timestamp": 5,
        "timestamp_type": TimestampType.CREATE_TIME,
    }
    fields.update(overrides)
    return SinkRecord(**fields)  # type: ignore[arg-type]


def test_source_record_defaults() -> None:
    record = SourceRecord({"p": 1}, {"o": 2}, "topic")
    assert (record.kafka_partition, record.key, record.value, record.timestamp) == (
        None,
        None,
        None,
        None,
    )
    assert record.headers is Headers.EMPTY
    assert record.source_partition == {"p": 1}
    assert record.source_offset == {"o": 2}


def test_fields_are_read_only() -> None:
    record = _source()
    with pytest.raises(AttributeError):
        record.topic = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.extra = 1  # type: ignore[attr-defined]


def test_sink_record_original_coordinates_default_to_given_ones() -> None:
    record = _sink()
    assert (record.original_topic, record.original_kafka_partition) == ("t", 1)
    assert record.original_kafka_offset == 41


def test_sink_new_record_keeps_class_specific_fields() -> None:
    record = _sink(headers=[Header("x", None, "y")])
    renamed = record.new_record("u", 7, None, "k2", None, "v2", 9)
    assert isinstance(renamed, SinkRecord)
    assert (renamed.topic, renamed.kafka_partition, renamed.key, renamed.value) == (
        "u",
        7,
        "k2",
        "v2",
    )
    assert renamed.kafka_offset == 41
    assert renamed.timestamp_type is TimestampType.CREATE_TIME
    assert (renamed.original_topic, renamed.original_kafka_partition) == ("t", 1)
    assert renamed.original_kafka_offset == 41
    assert renamed.headers == record.headers
    assert record.topic == "t"  # the original is untouched


def test_source_new_record_keeps_partition_and_offset_and_replaces_headers() -> None:
    record = _source()
    new = record.new_record("u", None, None, None, None, "v", None, Headers.EMPTY)
    assert isinstance(new, SourceRecord)
    assert new.source_partition == {"filename": "a.txt"}
    assert new.source_offset == {"position": 6}
    assert len(new.headers) == 0
    assert len(record.headers) == 1


@pytest.mark.parametrize("make", [_source, _sink], ids=["source", "sink"])
def test_records_pickle_round_trip(make: object) -> None:
    record = make()  # type: ignore[operator]
    copy = pickle.loads(pickle.dumps(record))
    assert copy == record
    assert type(copy) is type(record)
    assert copy is not record


def test_equality_is_by_fields() -> None:
    assert _source() == _source()
    assert _source() != _source(value="other")
    assert _source() != _source(source_offset={"position": 7})
    assert _sink() == _sink()
    assert _sink() != _sink(kafka_offset=42)
    assert _sink() != _sink(original_topic="before")
    assert _source() != _sink()


def test_records_are_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(_sink())


def test_repr_shows_kafka_style_fields() -> None:
    text = repr(_sink())
    assert text.startswith("SinkRecord{kafkaOffset=41, timestampType=CreateTime")
    assert "ConnectRecord{topic='t', kafkaPartition=1" in text
    assert repr(_source()).startswith("SourceRecord{sourcePartition={'filename': 'a.txt'}")


def test_connect_record_base_has_no_new_record() -> None:
    with pytest.raises(NotImplementedError):
        ConnectRecord().new_record("t", None, None, None, None, None, None)


def test_headers_lookup_and_immutable_updates() -> None:
    headers = Headers().with_header("a", 1).with_header("b", 2).with_header("a", 3)
    assert len(headers) == 3
    assert headers.last_with_name("a") == Header("a", None, 3)
    assert headers.last_with_name("missing") is None
    assert [h.value for h in headers.all_with_name("a")] == [1, 3]
    without = headers.without("a")
    assert [h.key for h in without] == ["b"]
    assert len(headers) == 3
    assert [h.value for h in headers.retain_latest()] == [2, 3]
    assert headers[1:] == Headers([Header("b", None, 2), Header("a", None, 3)])
    assert pickle.loads(pickle.dumps(headers)) == headers


def test_header_derivations() -> None:
    header = Header("a", None, 1)
    assert header.rename("b") == Header("b", None, 1)
    assert header.with_value(None, 2) == Header("a", None, 2)


def test_headers_accept_any_iterable_of_headers() -> None:
    record = SourceRecord(None, None, "t", headers=[Header("a", None, 1)])
    assert isinstance(record.headers, Headers)
    assert record.headers.last_with_name("a") == Header("a", None, 1)


def test_topic_partition_and_timestamp_type() -> None:
    tp = TopicPartition("orders", 3)
    assert str(tp) == "orders-3"
    assert {tp: 1}[TopicPartition("orders", 3)] == 1
    assert [str(t) for t in TimestampType] == ["NoTimestampType", "CreateTime", "LogAppendTime"]
    assert TimestampType(0) is TimestampType.CREATE_TIME
