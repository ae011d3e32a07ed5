"""The columnar source path: a SourceRecordBatch's columns go to the producer as they are,
with the bytes the per-record path gives, and its delivery reports come back per batch."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.batch import SourceRecordBatch, SourceRun
from sparkcat.api.converter import Converter
from sparkcat.api.data import (
    INT32_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
)
from sparkcat.runtime.tasks.columnar import (
    CHUNK_RECORDS,
    BatchDelivery,
    convert_groups,
    record_groups,
)
from sparkcat.runtime.tasks.lease import resolver_for
from sparkcat.runtime.tasks.pipeline import build_pipeline

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
SIMPLE = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
WORKER = {"key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES}


class RecordingProducer:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def produce(self, *args: Any) -> None:
        self.sent.append(args)

    def poll(self, timeout: float = 0) -> int:
        return 0


class Report:
    """A delivery report's message: where Kafka stored one record."""

    def __init__(self, partition: int, offset: int, topic: str = "t") -> None:
        self._partition, self._offset, self._topic = partition, offset, topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def topic(self) -> str:
        return self._topic


def mirror_like_batch(**columns: Any) -> SourceRecordBatch:
    """What MirrorSourceTask returns: bytes, explicit partitions, timestamps, header tuples."""
    settings: dict[str, Any] = {
        "keys": [b"k0", None, b"k2"],
        "key_schema": OPTIONAL_BYTES_SCHEMA,
        "kafka_partitions": [0, 0, 1],
        "timestamps": [1_600_000_000_000, None, 1_600_000_000_002],
        "headers": [[("h", b"0"), ("empty", None)], None, [("h", b"2")]],
    }
    settings.update(columns)
    runs = [SourceRun({"p": 0}, {"o": 1}, 2), SourceRun({"p": 1}, {"o": 0}, 1)]
    return SourceRecordBatch("t", [b"v0", b"v1", None], OPTIONAL_BYTES_SCHEMA, runs, **settings)


def send_both_ways(worker: dict[str, str], batch: SourceRecordBatch) -> tuple[list[Any], ...]:
    """The batch through the columnar path, then its records through the per-record path."""
    pipeline = build_pipeline({}, worker, resolver_for({}))
    columnar, per_record = RecordingProducer(), RecordingProducer()
    known = {"t"}
    assert pipeline.produce_batch(batch, columnar, None, known.add, known) == len(batch)
    pipeline.produce_records(batch.records(), per_record, None, known.add, known)
    return columnar.sent, per_record.sent


def normalised(sent: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``produce`` arguments with "no headers" spelled one way (None, [] or absent)."""
    return [(*args[:7], (args[7] if len(args) > 7 else None) or None) for args in sent]


def test_bytes_headers_and_timestamps_go_to_the_producer_as_the_task_gave_them() -> None:
    batch = mirror_like_batch()
    columnar, per_record = send_both_ways(WORKER, batch)
    assert columnar == [
        ("t", b"v0", b"k0", 0, None, None, 1_600_000_000_000, batch.headers[0]),  # type: ignore[index]
        ("t", b"v1", None, 0, None, None, 0, None),
        ("t", None, b"k2", 1, None, None, 1_600_000_000_002, batch.headers[2]),  # type: ignore[index]
    ]
    # No copy per record: the producer gets the task's own header lists.
    assert columnar[0][7] is batch.headers[0]  # type: ignore[index]
    assert normalised(columnar) == normalised(per_record)


def test_a_header_converter_without_bytes_pass_through_converts_each_header() -> None:
    batch = mirror_like_batch()
    columnar, per_record = send_both_ways({**WORKER, "header.converter": SIMPLE}, batch)
    assert normalised(columnar) == normalised(per_record)
    assert columnar[0][7] is not batch.headers[0]  # type: ignore[index]


def test_a_header_value_that_is_not_bytes_is_converted_not_passed_through() -> None:
    batch = mirror_like_batch(headers=[[("h", bytearray(b"0"))], None, None])
    columnar, per_record = send_both_ways(WORKER, batch)
    assert columnar[0][7] == [("h", b"0")]
    assert normalised(columnar) == normalised(per_record)


def test_shared_partition_and_timestamp_without_per_record_columns() -> None:
    batch = SourceRecordBatch.of("t", [b"a", b"b"], None, None, None, kafka_partition=3,
                                 timestamp=42)  # fmt: skip
    columnar, per_record = send_both_ways(WORKER, batch)
    assert columnar == [("t", b"a", None, 3, None, None, 42, None),
                        ("t", b"b", None, 3, None, None, 42, None)]  # fmt: skip
    assert normalised(columnar) == normalised(per_record)


def delivered(batch: SourceRecordBatch, ordered: bool, on_error: Any = None) -> BatchDelivery:
    return BatchDelivery(batch, on_error or (lambda record, err: True), ordered)


def test_ordered_reports_are_paired_with_records_per_partition() -> None:
    batch = mirror_like_batch()
    delivery = delivered(batch, ordered=True)
    callbacks = list(delivery.callbacks())
    assert len({id(c) for c in callbacks}) == 1  # one bound method, no object per record
    # Partition 1's report comes first: reports of different partitions interleave.
    for report in (Report(1, 70), Report(0, 40)):
        callbacks[0](None, report)
    assert not delivery.complete
    callbacks[0](None, Report(0, 41))
    assert delivery.complete
    metadata = delivery.metadata()
    assert (metadata.topics, metadata.partitions, metadata.offsets) == (
        ["t", "t", "t"], [0, 0, 1], [40, 41, 70],
    )  # fmt: skip


def test_exact_reports_when_records_name_no_partition() -> None:
    batch = mirror_like_batch(kafka_partitions=None)
    delivery = delivered(batch, ordered=True)
    callbacks = list(delivery.callbacks())
    callbacks[2](None, Report(1, 7))
    callbacks[0](None, Report(0, 5))
    callbacks[1](None, Report(1, 6))
    metadata = delivery.metadata()
    assert (metadata.partitions, metadata.offsets) == ([0, 1, 1], [5, 6, 7])


@pytest.mark.parametrize("ordered", [True, False])
def test_a_send_skipped_by_tolerance_has_offset_minus_one(ordered: bool) -> None:
    skipped: list[Any] = []

    def skip(record: Any, err: Any) -> bool:
        skipped.append(err)
        return True

    batch = mirror_like_batch()
    delivery = delivered(batch, ordered, skip)
    callbacks = list(delivery.callbacks())
    callbacks[0](None, Report(0, 40))
    callbacks[1]("MSG_SIZE_TOO_LARGE", Report(0, -1001))
    callbacks[2](None, Report(1, 70))
    assert delivery.complete and skipped == ["MSG_SIZE_TOO_LARGE"]
    assert delivery.metadata().offsets == [40, -1, 70]


def test_a_failed_send_the_task_fails_for_never_completes_its_batch() -> None:
    delivery = delivered(mirror_like_batch(), True, lambda record, err: False)
    callbacks = list(delivery.callbacks())
    callbacks[0](None, Report(0, 40))
    callbacks[1]("BROKER_NOT_AVAILABLE", Report(0, -1001))
    callbacks[2](None, Report(1, 70))
    assert not delivery.complete


def test_per_record_path_reports_dropped_records_as_minus_one() -> None:
    batch = mirror_like_batch()
    delivery = delivered(batch, ordered=True)
    records = batch.records()
    callback_for = delivery.record_callback(records)
    callback_for(records[1])(None, None)  # dropped by a transformation
    callback_for(records[0])(None, Report(0, 40, "routed"))
    callback_for(records[2])(None, Report(1, 70, "routed"))
    metadata = delivery.metadata()
    assert (metadata.topics, metadata.partitions, metadata.offsets) == (
        ["routed", "t", "routed"], [0, -1, 1], [40, -1, 70],
    )  # fmt: skip


JSON = "org.apache.kafka.connect.json.JsonConverter"


def interleaved_batch() -> SourceRecordBatch:
    """Records of two topics alternating, each topic with its own schemas, and a tombstone:
    a CDC stream of transactions that touch two tables."""
    a_key = SchemaBuilder.struct().name("a.Key").field("id", INT32_SCHEMA).build()
    b_key = SchemaBuilder.struct().name("b.Key").field("no", STRING_SCHEMA).build()
    a_value = SchemaBuilder.struct().name("a.Value").field("id", INT32_SCHEMA).build()
    b_value = SchemaBuilder.struct().name("b.Value").field("x", OPTIONAL_STRING_SCHEMA).build()

    def struct(schema: Any, value: Any) -> Struct:
        return Struct(schema).put(schema.fields[0].name, value)

    rows = [("a", a_key, 1, a_value), ("b", b_key, "n1", b_value), ("a", a_key, 2, a_value),
            ("b", b_key, "n2", b_value), ("a", a_key, 3, None)]  # fmt: skip
    return SourceRecordBatch(
        None,
        [None if vs is None else struct(vs, k) for _, _, k, vs in rows],
        None,
        [SourceRun({"server": "s"}, {"lsn": 5}, len(rows))],
        keys=[struct(ks, k) for _, ks, k, _ in rows],
        record_offsets=lambda: [{"lsn": i} for i in range(1, len(rows) + 1)],
        topics=[t for t, _, _, _ in rows],
        key_schemas=[ks for _, ks, _, _ in rows],
        value_schemas=[vs for _, _, _, vs in rows],
    )


def test_a_topic_per_record_gives_the_per_record_paths_bytes_in_order() -> None:
    batch = interleaved_batch()
    ensured: list[str] = []
    pipeline = build_pipeline({}, {"key.converter": JSON, "value.converter": JSON},
                              resolver_for({}))  # fmt: skip
    columnar, per_record = RecordingProducer(), RecordingProducer()
    assert pipeline.produce_batch(batch, columnar, None, ensured.append, set()) == 5
    pipeline.produce_records(batch.records(), per_record, None, lambda t: None, {"a", "b"})
    assert ensured == ["a", "b"]  # each topic once, in order of appearance
    assert normalised(columnar.sent) == normalised(per_record.sent)
    assert [args[0] for args in columnar.sent] == ["a", "b", "a", "b", "a"]
    assert columnar.sent[4][1] is None  # the tombstone


def test_one_converter_call_per_group_of_topic_and_schema() -> None:
    calls: list[tuple[str, int]] = []

    class Spy:
        def from_connect_data_batch(self, topic: str, schema: Any, values: list[Any]) -> list[Any]:
            calls.append((topic, len(values)))
            return [f"{topic}:{v}" for v in values]

    topics = ["a", "b", "a", "a", "b"]
    schemas = [INT32_SCHEMA, STRING_SCHEMA, INT32_SCHEMA, None, STRING_SCHEMA]
    groups = record_groups(topics, schemas)
    assert groups == [[0, 2], [1, 4], [3]]
    out = convert_groups(Spy(), topics, schemas, [1, "x", 2, None, "y"], groups)
    assert out == ["a:1", "b:x", "a:2", "a:None", "b:y"]
    assert calls == [("a", 2), ("b", 2), ("a", 1)]


def test_many_groups_are_found_by_one_pass() -> None:
    topics = [f"t{i % 20}" for i in range(60)]
    groups = record_groups(topics, [None] * 60)
    assert groups == [list(range(i, 60, 20)) for i in range(20)]


def test_reports_of_a_batch_with_several_topics_are_paired_exactly() -> None:
    batch = interleaved_batch()
    delivery = delivered(batch, ordered=True)
    callbacks = list(delivery.callbacks())
    assert len({id(c) for c in callbacks}) == 5  # ordered pairing needs one topic
    for i in (4, 1, 0, 3, 2):
        callbacks[i](None, Report(0, 10 + i, batch.topic_column()[i]))
    metadata = delivery.metadata()
    assert metadata.topics == ["a", "b", "a", "b", "a"]
    assert metadata.offsets == [10, 11, 12, 13, 14]


class BatchShyConverter(Converter):
    """Converts values to bytes one by one; its batch method fails on a batch holding "bad"."""

    null_pass_through = True

    def configure(self, configs: Any, is_key: bool | None = None) -> None:
        pass

    def from_connect_data(
        self, topic: str, schema: Any, value: Any, headers: Any = None
    ) -> bytes | None:
        return None if value is None else str(value).encode()

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> Any:
        return SchemaAndValue(None, value)

    def from_connect_data_batch(self, topic: str, schema: Any, values: list[Any]) -> list[Any]:
        if "bad" in values:
            raise ValueError("not as a batch")
        return [self.from_connect_data(topic, schema, v) for v in values]


def test_a_chunk_that_does_not_convert_leaves_the_rest_to_the_per_record_path() -> None:
    size = CHUNK_RECORDS * 3
    values = [f"v{i}" for i in range(size)]
    values[CHUNK_RECORDS + 5] = "bad"
    batch = SourceRecordBatch(
        None, values, None, [SourceRun({"p": 0}, {"o": size}, size)],
        topics=[("a", "b")[i % 2] for i in range(size)],
    )  # fmt: skip
    shy = f"{__name__}:BatchShyConverter"
    pipeline = build_pipeline({}, {"key.converter": shy, "value.converter": shy},
                              resolver_for({}))  # fmt: skip
    producer = RecordingProducer()
    assert pipeline.produce_batch(batch, producer, None, lambda t: None, {"a", "b"}) == size
    assert [args[1] for args in producer.sent] == [v.encode() for v in values]
    assert [args[0] for args in producer.sent] == batch.topics
