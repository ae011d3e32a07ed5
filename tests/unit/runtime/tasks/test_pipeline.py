"""The lease pipeline: converter selection, per-batch conversion both ways, error tolerance."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from confluent_kafka import Message

from sparkcat.api.batch import SinkRecordBatch
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import STRING_SCHEMA, SchemaAndValue
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.api.records import Header, Headers, SourceRecord, TimestampType
from sparkcat.converters.bytes import ByteArrayConverter
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import RetryWithToleranceOperator
from sparkcat.runtime.errors.record_paths import BatchFailedError
from sparkcat.runtime.tasks.lease import resolver_for
from sparkcat.runtime.tasks.pipeline import (
    DEFAULT_HEADER_CONVERTER,
    Pipeline,
    build_pipeline,
    converter_settings,
    pipeline_for,
)

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
WORKER = {
    "key.converter": STRING,
    "value.converter": JSON,
    "value.converter.schemas.enable": "false",
}


class RecordingProducer:
    """Keeps ``produce`` calls; the pipeline's only use of a producer besides ``poll``."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def produce(self, *args: Any) -> None:
        self.sent.append(args)

    def poll(self, timeout: float = 0) -> int:
        return 0


def send(pipeline: Any, records: list[SourceRecord], errors: Any = None) -> list[tuple[Any, ...]]:
    producer = RecordingProducer()
    known = {"t", "routed"}
    pipeline.produce_records(records, producer, None, known.add, known, None, errors)
    return producer.sent


def test_connector_converter_wins_with_its_own_props_only() -> None:
    connector = {"value.converter": STRING, "value.converter.encoding": "UTF-16"}

    assert converter_settings(connector, WORKER, "value") == (
        STRING,
        {"encoding": "UTF-16", "converter.type": "value"},
    )
    assert converter_settings({}, WORKER, "value") == (
        JSON,
        {"schemas.enable": "false", "converter.type": "value"},
    )


def test_header_converter_defaults_and_key_converter_is_required() -> None:
    assert converter_settings({}, WORKER, "header") == (
        DEFAULT_HEADER_CONVERTER,
        {"converter.type": "header"},
    )
    with pytest.raises(ConfigError, match=r'"key\.converter"'):
        converter_settings({}, {"value.converter": STRING}, "key")


def test_source_side_transforms_then_converts_in_order() -> None:
    connector = {
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "t",
        "transforms.route.replacement": "routed",
    }
    pipeline = build_pipeline(connector, WORKER, resolver_for({}))
    record = SourceRecord({"p": 1}, {"o": 1}, "t", 2, STRING_SCHEMA, "k", None, {"a": 1}, 42,
                          Headers([Header("h", STRING_SCHEMA, "v")]))  # fmt: skip

    [(topic, value, key, partition, _cb, _alias, timestamp, headers)] = send(pipeline, [record])

    assert (topic, key, partition, timestamp) == ("routed", b"k", 2, 42)
    assert orjson.loads(value) == {"a": 1}
    assert headers == [("h", b"v")]


def test_source_side_keyless_record_without_timestamp() -> None:
    pipeline = build_pipeline({}, WORKER, resolver_for({}))

    sent = send(pipeline, [SourceRecord(None, None, "t", value="x")])

    assert sent == [("t", b'"x"', None, -1, None, None, 0)]


def test_filtered_records_are_not_produced() -> None:
    connector = {
        "transforms": "drop",
        "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
    }
    pipeline = build_pipeline(connector, WORKER, resolver_for({}))

    assert send(pipeline, [SourceRecord(None, None, "t", value="x")]) == []


def test_conversion_failure_fails_unless_tolerated() -> None:
    bad = SourceRecord(None, None, "t", value_schema=STRING_SCHEMA, value=12)
    good = SourceRecord(None, None, "t", value_schema=STRING_SCHEMA, value="ok")
    strict = build_pipeline({}, WORKER, resolver_for({}))
    tolerant = build_pipeline({"errors.tolerance": "all"}, WORKER, resolver_for({}))

    metrics = ErrorHandlingMetrics()
    operator = RetryWithToleranceOperator.from_config({"errors.tolerance": "all"}, metrics)

    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler"):
        send(strict, [bad, good])
    assert [args[1] for args in send(tolerant, [bad, good, good], operator)] == [b'"ok"'] * 2
    assert metrics.get("total-records-skipped") == 1


def message(offset: int, key: bytes | None, value: bytes | None, **extra: Any) -> Message:
    return Message(topic="t", partition=3, offset=offset, key=key, value=value,
                   timestamp=extra.get("timestamp", (1, 1000 + offset)),
                   headers=extra.get("headers"))  # fmt: skip


def test_sink_side_builds_records_and_next_offsets() -> None:
    pipeline = build_pipeline({}, WORKER, resolver_for({}))
    offsets: dict[tuple[str, int], int] = {}
    messages = [
        message(7, b"k", b'{"a":1}', headers=[("h", b"42")]),
        message(8, None, b"null", timestamp=(0, -1)),
    ]

    first, second = pipeline.to_sink_records(messages, offsets)

    assert offsets == {("t", 3): 9}
    assert (first.topic, first.kafka_partition, first.kafka_offset) == ("t", 3, 7)
    assert (first.key, first.value, first.timestamp) == ("k", {"a": 1}, 1007)
    assert first.timestamp_type is TimestampType.CREATE_TIME
    assert [(h.key, h.value) for h in first.headers] == [("h", 42)]
    assert (second.key, second.value, second.timestamp) == (None, None, None)
    assert second.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
    assert len(second.headers) == 0


def test_sink_side_offsets_cover_records_dropped_by_transforms() -> None:
    connector = {
        "transforms": "drop",
        "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
    }
    pipeline = build_pipeline(connector, WORKER, resolver_for({}))
    offsets: dict[tuple[str, int], int] = {}

    assert pipeline.to_sink_records([message(4, None, b"1")], offsets) == []
    assert offsets == {("t", 3): 5}


def test_sink_side_bad_value_fails_at_that_record() -> None:
    pipeline = build_pipeline({}, WORKER, resolver_for({}))
    offsets: dict[tuple[str, int], int] = {}

    with pytest.raises(BatchFailedError, match="Tolerance exceeded in error handler") as info:
        pipeline.to_sink_records(
            [message(1, None, b"1"), message(2, None, b"{not json"), message(3, None, b"3")],
            offsets,
        )
    assert [r.value for r in info.value.records] == [1]
    assert offsets == {("t", 3): 2}  # the failing record is the next to consume


def test_pipelines_are_cached_per_connector_generation() -> None:
    resolve = resolver_for({})
    first = pipeline_for("cache-test", 1, {}, WORKER, resolve)

    assert pipeline_for("cache-test", 1, {}, WORKER, resolve) is first
    assert pipeline_for("cache-test", 2, {}, WORKER, resolve) is not first


def test_sink_side_single_partition_gives_the_same_batch_and_offsets() -> None:
    """A lease assigned one partition skips the topic, partition and offset columns until a
    task reads them: records, columns and next offsets are the same as without the hint."""
    pipeline = build_pipeline({}, WORKER, resolver_for({}))
    messages = [message(n, None if n % 2 else b"k", b'{"n":%d}' % n) for n in range(5, 9)]
    plain: dict[tuple[str, int], int] = {}
    hinted: dict[tuple[str, int], int] = {}

    expected = pipeline.to_sink_records(messages, plain)
    batch = pipeline.to_sink_records(messages, hinted, single_partition=("t", 3))

    assert isinstance(batch, SinkRecordBatch) and isinstance(expected, SinkRecordBatch)
    assert hinted == plain == {("t", 3): 9}
    assert batch.values() == expected.values() == [{"n": n} for n in range(5, 9)]
    assert (batch.topics(), batch.partitions(), batch.offsets(), batch.timestamps()) == (
        ["t"] * 4, [3] * 4, [5, 6, 7, 8], [1005, 1006, 1007, 1008],
    )  # fmt: skip
    assert list(batch) == list(expected)


class CountingConverter(Converter):
    """Serializes a null key as b"null" (as a converter may), counting its calls; not one of
    sparkcat's converters by module."""

    def __init__(self) -> None:
        self.calls = 0

    def configure(self, configs: Any, is_key: bool) -> None:
        pass

    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> Any:
        self.calls += 1
        return b"null" if value is None else value

    def to_connect_data(self, topic: str, data: Any, headers: Any = None) -> Any:
        self.calls += 1
        return SchemaAndValue(None, data)


class DeclaringConverter(CountingConverter):
    null_pass_through = True

    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> Any:
        self.calls += 1
        return value


def keyless_pipeline(key_converter: Converter) -> Pipeline:
    value_converter = ByteArrayConverter()
    return Pipeline(key_converter, value_converter, value_converter, None)


def test_a_key_converter_that_declares_nothing_converts_every_null_key() -> None:
    converter = CountingConverter()
    sent = send(keyless_pipeline(converter), [SourceRecord(None, None, "t", value=b"v")] * 3)
    assert [args[2] for args in sent] == [b"null"] * 3
    assert converter.calls == 3


def test_null_pass_through_is_a_declared_capability_not_a_module_name() -> None:
    converter = DeclaringConverter()
    pipeline = keyless_pipeline(converter)
    calls_at_build = converter.calls  # the null key read once, for every topic
    sent = send(pipeline, [SourceRecord(None, None, "t", value=b"v")] * 3)
    assert [args[2] for args in sent] == [None] * 3
    assert converter.calls == calls_at_build
    assert calls_at_build == 1


def test_converter_capabilities_default_off_and_byte_array_declares_them() -> None:
    assert Converter.null_pass_through is False
    assert HeaderConverter.bytes_pass_through is False
    assert ByteArrayConverter.null_pass_through is True
    assert ByteArrayConverter.bytes_pass_through is True
