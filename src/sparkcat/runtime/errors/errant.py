"""The errant record reporter handed to sink tasks (KIP-610, Kafka's
``WorkerErrantRecordReporter``).

A reported record goes to the task's reporters (error log, DLQ) with stage ``TASK_PUT`` and
executing class ``org.apache.kafka.connect.sink.SinkTask``. The DLQ receives the original
consumed message when the record came from the current batch (looked up by its original
topic, partition and offset), else the record re-serialized with the task's converters.
Under ``errors.tolerance=none`` the report raises, and the lease fails the task after ``put``
even if the task swallowed that error.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SinkRecord, TimestampType
from sparkcat.api.sink import ErrantRecordReporter
from sparkcat.runtime.errors.operator import (
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
)

__all__ = ["RawMessage", "WorkerErrantRecordReporter"]

SINK_TASK_CLASS = "org.apache.kafka.connect.sink.SinkTask"
_TS_CODES = {
    TimestampType.NO_TIMESTAMP_TYPE: 0,
    TimestampType.CREATE_TIME: 1,
    TimestampType.LOG_APPEND_TIME: 2,
}


class RawMessage:
    """A consumed-message look-alike (confluent-kafka ``Message`` methods) for a record that
    had to be re-serialized."""

    __slots__ = ("_headers", "_key", "_offset", "_partition", "_timestamp", "_topic", "_value")

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        timestamp: tuple[int, int],
    ) -> None:
        self._topic, self._partition, self._offset = topic, partition, offset
        self._key, self._value, self._headers = key, value, headers
        self._timestamp = timestamp

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return self._timestamp


class WorkerErrantRecordReporter(ErrantRecordReporter):
    """See the module docs. :meth:`set_batch` tells it the consumed batch being put."""

    def __init__(self, operator: RetryWithToleranceOperator, pipeline: Any) -> None:
        self.operator = operator
        self.pipeline = pipeline
        self._lock = threading.Lock()
        self._futures: list[Future[None]] = []
        self._batch: Sequence[Any] = ()
        self._index: dict[tuple[str, int, int], Any] | None = None
        self.task_put_error: BaseException | None = None

    def set_batch(self, messages: Sequence[Any]) -> None:
        """The messages whose records the next ``put`` receives (indexed only on demand)."""
        with self._lock:
            self._batch, self._index = messages, None

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        context = ProcessingContext(self._original(record))
        with self._lock:
            if self.task_put_error is None:
                self.task_put_error = error
        future = self.operator.execute_failed(context, Stage.TASK_PUT, SINK_TASK_CLASS, error)
        if not future.done() or future.exception() is not None:
            with self._lock:
                self._futures.append(future)
        return future

    def pending(self) -> list[Future[None]]:
        """Take the reports made so far (to be awaited before offsets are committed)."""
        with self._lock:
            futures, self._futures = self._futures, []
        return futures

    def maybe_throw_async_error(self) -> None:
        """Fail the task if a record was reported beyond the tolerance (Kafka's check after
        each ``put``)."""
        error = self.task_put_error
        if error is not None and not self.operator.within_tolerance_limits():
            raise ConnectError("Tolerance exceeded in error handler") from error

    def _original(self, record: SinkRecord) -> Any:
        key = (
            record.original_topic,
            record.original_kafka_partition,
            record.original_kafka_offset,
        )
        with self._lock:
            if self._index is None:
                self._index = {
                    (m.topic(), m.partition(), m.offset()): m
                    for m in self._batch
                    if m.error() is None
                }
            found = self._index.get(key)  # type: ignore[arg-type]
        return found if found is not None else self._serialize(record)

    def _serialize(self, record: SinkRecord) -> RawMessage:
        topic = record.topic
        pipeline = self.pipeline
        key = pipeline.key_converter.from_connect_data(topic, record.key_schema, record.key)
        value = pipeline.value_converter.from_connect_data(topic, record.value_schema, record.value)
        convert = pipeline.header_converter.from_connect_header
        headers = [(h.key, convert(topic, h.key, h.schema, h.value)) for h in record.headers]
        timestamp = record.timestamp
        ts = (_TS_CODES[record.timestamp_type], timestamp) if timestamp is not None else (0, -1)
        return RawMessage(
            topic,
            record.kafka_partition if record.kafka_partition is not None else -1,
            record.kafka_offset,
            key,
            value,
            headers or None,
            ts,
        )
