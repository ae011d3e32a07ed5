"""The per-record, per-stage paths of the pipeline, used for a record whose fast path failed.

:class:`~sparkcat.runtime.tasks.pipeline.Pipeline` converts and transforms a batch in one tight
loop; a record that raises there is processed again by these functions (given a list and a
start index, they handle ``items[start:]``), which run every stage through the
:class:`~sparkcat.runtime.errors.operator.RetryWithToleranceOperator` (Kafka's stage
order and executing classes), so retries, tolerance, reporting and metrics apply per record.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import Header, Headers, SinkRecord, SourceRecord, TimestampType
from sparkcat.runtime.errors.operator import (
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
)

__all__ = ["BatchFailedError", "index_of", "produce_per_record", "sink_records_per_record"]

_TIMESTAMP_TYPES = (
    TimestampType.NO_TIMESTAMP_TYPE,
    TimestampType.CREATE_TIME,
    TimestampType.LOG_APPEND_TIME,
)


class BatchFailedError(ConnectError):
    """A sink batch failed the task at one record; :attr:`records` are the records converted
    before it (to be put before the task fails, so their offsets can be committed)."""

    def __init__(self, message: str, records: list[SinkRecord]) -> None:
        super().__init__(message)
        self.records = records


def index_of(items: list[Any], item: Any) -> int:
    """The position of ``item`` in ``items`` by identity (records may compare equal)."""
    for i, candidate in enumerate(items):
        if candidate is item:
            return i
    raise ValueError("item not in list")


def _transform(
    operator: RetryWithToleranceOperator, context: ProcessingContext, stages: Any, record: Any
) -> Any:
    """Each transformation stage through the operator; ``None`` if dropped or failed."""
    for stage in stages:
        current = record
        record = operator.execute(
            context, partial(stage.apply, current), Stage.TRANSFORMATION, stage.transformation,
        )  # fmt: skip
        if record is None or context.failed:
            return None
    return record


def sink_records_per_record(
    pipeline: Any,
    messages: list[Any],
    start: int,
    offsets: dict[tuple[str, int], int],
    out: list[SinkRecord],
    operator: RetryWithToleranceOperator,
    consumer_error: Callable[[Any], None],
) -> list[SinkRecord]:
    """Convert (key, value, headers) and transform ``messages[start:]`` into ``out``.

    Skipped and dropped records still advance ``offsets``. When the task must fail,
    ``offsets`` stop *at* the failing message and :class:`BatchFailedError` carries ``out``.
    """
    key_converter = pipeline.key_converter
    value_converter = pipeline.value_converter
    header_converter = pipeline.header_converter
    stages = pipeline.transform_stages
    execute = operator.execute
    for msg in messages[start:]:
        if msg.error() is not None:
            consumer_error(msg)
            continue
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        offsets[(topic, partition)] = offset + 1
        context = ProcessingContext(msg)
        try:
            key = execute(
                context, partial(key_converter.to_connect_data, topic, msg.key()),
                Stage.KEY_CONVERTER, key_converter,
            )  # fmt: skip
            value = execute(
                context, partial(value_converter.to_connect_data, topic, msg.value()),
                Stage.VALUE_CONVERTER, value_converter,
            )  # fmt: skip
            raw_headers = msg.headers()
            headers = None
            if raw_headers is not None:
                headers = execute(
                    context, partial(_headers_in, header_converter, topic, raw_headers),
                    Stage.HEADER_CONVERTER, header_converter,
                )  # fmt: skip
            if context.failed:
                continue
            ts_type, timestamp = msg.timestamp()
            record: Any = SinkRecord(
                topic, partition, key[0], key[1], value[0], value[1], offset,  # type: ignore[index]
                timestamp if ts_type else None, _TIMESTAMP_TYPES[ts_type], headers,
            )  # fmt: skip
            record = _transform(operator, context, stages, record)
        except ConnectError as exc:
            offsets[(topic, partition)] = offset
            raise BatchFailedError(str(exc), out) from exc.__cause__ or exc
        if record is not None:
            out.append(record)
    return out


def _headers_in(converter: Any, topic: str, raw: list[tuple[str, bytes | None]]) -> Headers:
    items = []
    for key, data in raw:
        schema, value = converter.to_connect_header(topic, key, data)
        items.append(Header(key, schema, value))
    return Headers(items)


def _headers_out(converter: Any, topic: str, headers: Headers) -> list[tuple[str, bytes | None]]:
    convert = converter.from_connect_header
    return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in headers]


def produce_per_record(
    pipeline: Any,
    records: list[SourceRecord],
    start: int,
    send: Callable[[SourceRecord, Any, Any, Any, Callable[[Any, Any], None] | None], None],
    operator: RetryWithToleranceOperator,
    on_delivery: Callable[[Any, Any], None] | None,
    record_callback: Callable[[SourceRecord], Callable[[Any, Any], None]] | None,
) -> int:
    """Transform, then convert headers, key and value of ``records[start:]`` and ``send``
    each (``send(record, headers, key, value, callback)``); the number sent. A skipped or
    dropped record gets ``callback(None, None)`` when ``record_callback`` is given (Kafka's
    ``commitRecord(record, null)``)."""
    key_converter = pipeline.key_converter
    value_converter = pipeline.value_converter
    header_converter = pipeline.header_converter
    stages = pipeline.transform_stages
    execute = operator.execute
    sent = 0
    for polled in records[start:]:
        callback = record_callback(polled) if record_callback is not None else on_delivery
        context = ProcessingContext(polled)
        record = _transform(operator, context, stages, polled)
        if record is not None:
            topic = record.topic
            headers = None
            if record.headers:
                headers = execute(
                    context, partial(_headers_out, header_converter, topic, record.headers),
                    Stage.HEADER_CONVERTER, header_converter,
                )  # fmt: skip
            key = execute(
                context,
                partial(key_converter.from_connect_data, topic, record.key_schema, record.key),
                Stage.KEY_CONVERTER, key_converter,
            )  # fmt: skip
            value = execute(
                context,
                partial(
                    value_converter.from_connect_data, topic, record.value_schema, record.value
                ),
                Stage.VALUE_CONVERTER, value_converter,
            )  # fmt: skip
            if not context.failed:
                send(record, headers, key, value, callback)
                sent += 1
                continue
        if record_callback is not None and callback is not None:
            callback(None, None)
    return sent
