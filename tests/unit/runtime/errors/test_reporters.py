"""Log and dead-letter-queue reporters: Kafka's texts and __connect.errors.* headers."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from confluent_kafka import Message

from sparkcat.api.errors import DataError
from sparkcat.api.records import SourceRecord
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import ProcessingContext, Stage
from sparkcat.runtime.errors.reporters import (
    DeadLetterQueueReporter,
    LogReporter,
    context_headers,
)


def failed_context(original: Any, error: BaseException | None = None) -> ProcessingContext:
    context = ProcessingContext(original)
    context.stage = Stage.VALUE_CONVERTER
    context.executing_class = "sparkcat.converters.json.converter.JsonConverter"
    try:
        raise error or DataError("Converting byte[] to Kafka Connect data failed")
    except Exception as exc:
        context.error = exc
    return context


def consumed(**extra: Any) -> Message:
    return Message(topic="orders", partition=2, offset=5, key=b"k", value=b"{bad",
                   timestamp=extra.get("timestamp", (1, 1700000000000)),
                   headers=extra.get("headers", [("h", b"v")]))  # fmt: skip


def test_log_reporter_texts(caplog: pytest.LogCaptureFixture) -> None:
    metrics = ErrorHandlingMetrics()
    config = {"errors.log.enable": "true", "errors.log.include.messages": "true"}
    sink = LogReporter("conn-0", config, metrics, sink=True)
    source = LogReporter("conn-0", config, metrics, sink=False)
    quiet = LogReporter("conn-0", {"errors.log.enable": "true"}, metrics, sink=True)
    record = SourceRecord({"p": 1}, {"o": 2}, "t", value="v")

    with caplog.at_level(logging.ERROR):
        sink.report(failed_context(consumed())).result()
    assert caplog.records[-1].getMessage() == (
        "Error encountered in task conn-0. Executing stage 'VALUE_CONVERTER' with class "
        "'sparkcat.converters.json.converter.JsonConverter', where consumed record is "
        "{topic='orders', partition=2, offset=5, timestamp=1700000000000, "
        "timestampType=CreateTime}."
    )
    assert caplog.records[-1].exc_info is not None
    assert quiet.message(failed_context(consumed(timestamp=(0, -1)))).endswith("JsonConverter'.")
    assert sink.message(failed_context(consumed(timestamp=(0, -1)))).endswith(
        "{topic='orders', partition=2, offset=5}."
    )
    assert source.message(failed_context(record)).endswith(
        f", where source record is = {record!r}."
    )
    assert metrics.get("total-errors-logged") == 1


def test_log_reporter_disabled_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    metrics = ErrorHandlingMetrics()
    with caplog.at_level(logging.ERROR):
        LogReporter("c-1", {}, metrics, sink=True).report(failed_context(consumed()))
    assert caplog.records == [] and metrics.snapshot() == {}


def test_context_headers_are_kafkas() -> None:
    headers = dict(context_headers(failed_context(consumed()), "conn", 3))

    assert list(headers)[:8] == [
        "__connect.errors.topic", "__connect.errors.partition", "__connect.errors.offset",
        "__connect.errors.connector.name", "__connect.errors.task.id", "__connect.errors.stage",
        "__connect.errors.class.name", "__connect.errors.exception.class.name",
    ]  # fmt: skip
    assert headers["__connect.errors.topic"] == b"orders"
    assert headers["__connect.errors.partition"] == b"2"
    assert headers["__connect.errors.offset"] == b"5"
    assert headers["__connect.errors.connector.name"] == b"conn"
    assert headers["__connect.errors.task.id"] == b"3"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.exception.class.name"] == b"sparkcat.api.errors.DataError"
    assert headers["__connect.errors.exception.message"] == (
        b"Converting byte[] to Kafka Connect data failed"
    )
    trace = headers["__connect.errors.exception.stacktrace"]
    assert trace is not None and trace.startswith(b"Traceback (most recent call last):")
    assert trace.rstrip().endswith(b"DataError: Converting byte[] to Kafka Connect data failed")


def test_exception_without_message_has_a_null_message_header() -> None:
    headers = dict(context_headers(failed_context(consumed(), ValueError()), "c", 0))

    assert headers["__connect.errors.exception.class.name"] == b"ValueError"
    assert headers["__connect.errors.exception.message"] is None


class RecordingProducer:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.callbacks: list[Any] = []

    def produce(self, topic: str, value: Any, key: Any, **kwargs: Any) -> None:
        self.sent.append((topic, value, key, kwargs.get("timestamp"), kwargs.get("headers")))
        self.callbacks.append(kwargs["on_delivery"])

    def poll(self, timeout: float = 0) -> int:
        return 0

    def flush(self, timeout: float = 0) -> int:
        for callback in self.callbacks:
            callback(None, None)
        self.callbacks = []
        return 0


def test_dlq_reporter_sends_the_original_record_with_context_headers() -> None:
    producer = RecordingProducer()
    metrics = ErrorHandlingMetrics()
    config = {
        "errors.deadletterqueue.topic.name": " dlq ",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    reporter = DeadLetterQueueReporter(producer, "conn", 0, config, metrics)

    future = reporter.report(failed_context(consumed()))
    assert not future.done()
    reporter.flush(1)
    assert future.result() is None
    topic, value, key, timestamp, headers = producer.sent[0]
    assert (topic, value, key, timestamp) == ("dlq", b"{bad", b"k", 1700000000000)
    assert headers[0] == ("h", b"v")  # the original headers first
    assert ("__connect.errors.stage", b"VALUE_CONVERTER") in headers
    assert metrics.get("deadletterqueue-produce-requests") == 1


def test_dlq_reporter_without_context_headers_or_timestamp() -> None:
    producer = RecordingProducer()
    config = {"errors.deadletterqueue.topic.name": "dlq"}
    reporter = DeadLetterQueueReporter(producer, "c", 0, config, ErrorHandlingMetrics())

    reporter.report(failed_context(consumed(timestamp=(0, -1), headers=None)))
    assert producer.sent == [("dlq", b"{bad", b"k", None, None)]
