"""The columnar batch types: sequences of records identical to the ones built per record."""

from __future__ import annotations

import pytest

from sparkcat.api.batch import RecordMetadataBatch, SinkRecordBatch, SourceRecordBatch, SourceRun
from sparkcat.api.data import (
    INT32_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
)
from sparkcat.api.records import Header, SinkRecord, SourceRecord, TimestampType


def sink_batch() -> SinkRecordBatch:
    return SinkRecordBatch(
        ["t", "t", "t"],
        [0, 1, 0],
        [10, 20, 11],
        [None, OPTIONAL_STRING_SCHEMA, None],
        [None, "k", None],
        [OPTIONAL_STRING_SCHEMA] * 3,
        ["a", "b", None],
        [(1, 1000), (0, -1), (2, 3000)],
    )


def test_sink_batch_builds_the_records_the_per_record_path_builds() -> None:
    batch = sink_batch()
    expected = [
        SinkRecord("t", 0, None, None, OPTIONAL_STRING_SCHEMA, "a", 10, 1000,
                   TimestampType.CREATE_TIME),
        SinkRecord("t", 1, OPTIONAL_STRING_SCHEMA, "k", OPTIONAL_STRING_SCHEMA, "b", 20, None,
                   TimestampType.NO_TIMESTAMP_TYPE),
        SinkRecord("t", 0, None, None, OPTIONAL_STRING_SCHEMA, None, 11, 3000,
                   TimestampType.LOG_APPEND_TIME),
    ]  # fmt: skip
    assert len(batch) == 3 and bool(batch)
    assert list(batch) == expected
    assert batch == expected
    assert batch[-1] == expected[2] and batch[0] is batch[0]  # built once
    assert batch[1:] == expected[1:]
    with pytest.raises(IndexError):
        batch[3]
    assert not SinkRecordBatch([], [], [], [], [], [], [], [])


def test_sink_batch_columns() -> None:
    batch = sink_batch()
    assert batch.values() == ["a", "b", None]
    assert batch.keys() == [None, "k", None]
    assert batch.offsets() == [10, 20, 11]
    assert batch.partitions() == [0, 1, 0]
    assert batch.topics() == ["t"] * 3
    assert batch.timestamps() == [1000, None, 3000]
    assert batch.value_schemas() == [OPTIONAL_STRING_SCHEMA] * 3


def test_sink_batch_computes_a_column_given_as_a_callable_once_and_only_when_read() -> None:
    calls: list[str] = []

    def column(name: str, values: list[object]) -> object:
        return lambda: calls.append(name) or values

    batch = SinkRecordBatch(
        column("topics", ["t", "t"]), column("partitions", [0, 0]), column("offsets", [4, 5]),
        [None, None], [None, None], [STRING_SCHEMA] * 2, ["a", "b"],
        column("timestamps", [(1, 7), (1, 8)]),
    )  # fmt: skip
    assert batch.values() == ["a", "b"] and calls == []
    assert batch.offsets() == [4, 5] and batch.offsets() == [4, 5]
    assert calls == ["offsets"]
    assert batch[1] == SinkRecord("t", 0, None, None, STRING_SCHEMA, "b", 5, 8,
                                  TimestampType.CREATE_TIME)  # fmt: skip
    assert sorted(calls) == ["offsets", "partitions", "timestamps", "topics"]


def test_sink_batch_to_arrow() -> None:
    table = sink_batch().to_arrow()
    assert table.column_names == ["topic", "partition", "offset", "timestamp", "key", "value"]
    assert table.column("value").to_pylist() == ["a", "b", None]
    assert table.column("timestamp").to_pylist() == [1000, None, 3000]
    assert table.column("offset").to_pylist() == [10, 20, 11]


def test_source_batch_records_carry_their_runs_offsets() -> None:
    p1, p2 = {"f": "a"}, {"f": "b"}
    batch = SourceRecordBatch(
        "t", ["x", "y", "z"], STRING_SCHEMA,
        [SourceRun(p1, {"pos": 2}, 2), SourceRun(p2, {"pos": 9}, 1)], timestamp=5,
    )  # fmt: skip
    assert list(batch) == [
        SourceRecord(p1, {"pos": 2}, "t", None, None, None, STRING_SCHEMA, "x", 5),
        SourceRecord(p1, {"pos": 2}, "t", None, None, None, STRING_SCHEMA, "y", 5),
        SourceRecord(p2, {"pos": 9}, "t", None, None, None, STRING_SCHEMA, "z", 5),
    ]
    assert len(batch) == 3 and batch[1].value == "y"


def test_source_batch_record_offsets_are_computed_only_when_records_are_built() -> None:
    calls = []

    def offsets() -> list[dict[str, int]]:
        calls.append(1)
        return [{"pos": 1}, {"pos": 2}]

    batch = SourceRecordBatch.of("t", ["a", "b"], None, {"f": 1}, {"pos": 2},
                                 keys=["k1", "k2"], key_schema=STRING_SCHEMA,
                                 record_offsets=offsets)  # fmt: skip
    assert calls == []
    assert [(r.key, r.source_offset) for r in batch] == [("k1", {"pos": 1}), ("k2", {"pos": 2})]
    assert [r.source_offset for r in batch] and calls == [1]


def test_source_batch_runs_must_cover_the_values() -> None:
    with pytest.raises(ValueError, match="runs must cover"):
        SourceRecordBatch("t", ["a"], None, [SourceRun(None, None, 2)])
    with pytest.raises(ValueError, match="keys and values"):
        SourceRecordBatch.of("t", ["a"], None, None, None, keys=[])


def test_source_batch_per_record_columns_build_the_records_the_per_record_path_builds() -> None:
    headers = [[("h", b"1"), ("empty", None)], None, []]
    batch = SourceRecordBatch(
        "t", [b"a", None, b"c"], OPTIONAL_BYTES_SCHEMA, [SourceRun({"p": 0}, {"o": 3}, 3)],
        keys=[b"k", None, b"m"], key_schema=OPTIONAL_BYTES_SCHEMA,
        kafka_partitions=[2, 0, 1], timestamps=[1000, None, 3000], headers=headers,
    )  # fmt: skip
    assert list(batch) == [
        SourceRecord({"p": 0}, {"o": 3}, "t", 2, OPTIONAL_BYTES_SCHEMA, b"k",
                     OPTIONAL_BYTES_SCHEMA, b"a", 1000,
                     [Header("h", OPTIONAL_BYTES_SCHEMA, b"1"),
                      Header("empty", OPTIONAL_BYTES_SCHEMA, None)]),
        SourceRecord({"p": 0}, {"o": 3}, "t", 0, OPTIONAL_BYTES_SCHEMA, None,
                     OPTIONAL_BYTES_SCHEMA, None, None),
        SourceRecord({"p": 0}, {"o": 3}, "t", 1, OPTIONAL_BYTES_SCHEMA, b"m",
                     OPTIONAL_BYTES_SCHEMA, b"c", 3000),
    ]  # fmt: skip
    assert batch.headers is headers  # the task's column, not a copy


def test_source_batch_per_record_columns_override_the_shared_ones() -> None:
    batch = SourceRecordBatch.of(
        "t", [b"a", b"b"], None, None, None, kafka_partition=7, timestamp=5,
        kafka_partitions=[0, 1], timestamps=[10, 20],
    )  # fmt: skip
    assert [(r.kafka_partition, r.timestamp) for r in batch] == [(0, 10), (1, 20)]


@pytest.mark.parametrize("column", ["keys", "kafka_partitions", "timestamps", "headers"])
def test_source_batch_rejects_a_column_of_another_length(column: str) -> None:
    with pytest.raises(ValueError, match=column):
        SourceRecordBatch.of("t", [b"a", b"b"], None, None, None, **{column: [None]})


def test_record_metadata_batch_is_columns_by_name() -> None:
    metadata = RecordMetadataBatch(["t", "t"], [0, -1], [41, -1])
    assert metadata.topics == ["t", "t"]
    assert metadata.partitions == [0, -1]
    assert metadata.offsets == [41, -1]


def test_source_batch_with_a_topic_and_schemas_per_record() -> None:
    p = {"server": "s"}
    batch = SourceRecordBatch(
        None, ["a", None, 3], None, [SourceRun(p, {"lsn": 3}, 3)],
        keys=["k", "k", 1], record_offsets=lambda: [{"lsn": 1}, {"lsn": 2}, {"lsn": 3}],
        topics=["t1", "t1", "t2"], key_schemas=[STRING_SCHEMA, STRING_SCHEMA, INT32_SCHEMA],
        value_schemas=[STRING_SCHEMA, None, INT32_SCHEMA],
    )  # fmt: skip
    assert list(batch) == [
        SourceRecord(p, {"lsn": 1}, "t1", None, STRING_SCHEMA, "k", STRING_SCHEMA, "a"),
        SourceRecord(p, {"lsn": 2}, "t1", None, STRING_SCHEMA, "k", None, None),
        SourceRecord(p, {"lsn": 3}, "t2", None, INT32_SCHEMA, 1, INT32_SCHEMA, 3),
    ]
    assert batch.topic_column() == ["t1", "t1", "t2"]
    assert "2 topics" in repr(batch)


def test_source_batch_shared_columns_repeat() -> None:
    batch = SourceRecordBatch.of("t", ["a", "b"], STRING_SCHEMA, None, None)
    assert batch.topic_column() == ["t", "t"]
    assert batch.value_schema_column() == [STRING_SCHEMA, STRING_SCHEMA]
    assert batch.key_schema_column() == [None, None]


def test_source_batch_needs_a_topic() -> None:
    with pytest.raises(ValueError, match="topic"):
        SourceRecordBatch.of(None, ["a"], None, None, None)


@pytest.mark.parametrize("column", ["topics", "key_schemas", "value_schemas"])
def test_source_batch_rejects_a_per_record_column_of_another_length(column: str) -> None:
    with pytest.raises(ValueError, match=column):
        SourceRecordBatch.of("t", [b"a", b"b"], None, None, None, **{column: [None]})
