"""Error reporters: the error log and the dead letter queue (Kafka's ``LogReporter`` and
``DeadLetterQueueReporter``).

Sink contexts carry the consumed confluent-kafka ``Message`` as ``original``; source contexts
the polled :class:`~sparkcat.api.records.SourceRecord`.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import ProcessingContext, class_name

__all__ = [
    "HEADER_PREFIX",
    "DeadLetterQueueReporter",
    "LogReporter",
    "context_headers",
    "ensure_dlq_topic",
]

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
_ADMIN_TIMEOUT_S = 30.0
_TIMESTAMP_TYPE_NAMES = {1: "CreateTime", 2: "LogAppendTime"}


def _done() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


def _flag(config: Mapping[str, str], key: str) -> bool:
    return str(config.get(key, "false")).strip().lower() == "true"


class LogReporter:
    """Logs failed contexts at ERROR when ``errors.log.enable=true`` (Kafka's texts); with
    ``errors.log.include.messages=true`` the record is described too."""

    def __init__(
        self, task_id: str, config: Mapping[str, str], metrics: ErrorHandlingMetrics, sink: bool
    ) -> None:
        self.task_id = task_id
        self.enabled = _flag(config, "errors.log.enable")
        self.include_messages = _flag(config, "errors.log.include.messages")
        self.metrics = metrics
        self.sink = sink

    def report(self, context: ProcessingContext) -> Future[None]:
        error = context.error
        if self.enabled and error is not None:
            log.error(self.message(context), exc_info=(type(error), error, error.__traceback__))
            self.metrics.record_error_logged()
        return _done()

    def message(self, context: ProcessingContext) -> str:
        text = (
            f"Error encountered in task {self.task_id}. Executing stage "
            f"'{context.stage.name}' with class '{context.executing_class or 'null'}'"
        )
        if self.include_messages:
            text += self._describe(context.original)
        return text + "."

    def _describe(self, original: Any) -> str:
        if not self.sink:
            return (
                f", where source record is = {original!r}"
                if original is not None
                else (", where source record is = null")
            )
        if original is None:
            return ", where consumed record is null"
        text = (
            f", where consumed record is {{topic='{original.topic()}', "
            f"partition={original.partition()}, offset={original.offset()}"
        )
        ts_type, timestamp = original.timestamp()
        if ts_type in _TIMESTAMP_TYPE_NAMES:
            text += f", timestamp={timestamp}, timestampType={_TIMESTAMP_TYPE_NAMES[ts_type]}"
        return text + "}"

    def close(self) -> None:
        return None


def _text(value: Any) -> bytes | None:
    return None if value is None else str(value).encode("utf-8")


def context_headers(
    context: ProcessingContext, connector: str, task: int
) -> list[tuple[str, bytes | None]]:
    """The ``__connect.errors.*`` headers of a failed sink context (UTF-8 strings, Kafka's
    order); the exception message header is null when the exception has no message."""
    headers: list[tuple[str, bytes | None]] = []
    original = context.original
    if original is not None:
        headers.append((HEADER_PREFIX + "topic", _text(original.topic())))
        headers.append((HEADER_PREFIX + "partition", _text(original.partition())))
        headers.append((HEADER_PREFIX + "offset", _text(original.offset())))
    headers.append((HEADER_PREFIX + "connector.name", _text(connector)))
    headers.append((HEADER_PREFIX + "task.id", _text(task)))
    headers.append((HEADER_PREFIX + "stage", _text(context.stage.name)))
    headers.append((HEADER_PREFIX + "class.name", _text(context.executing_class)))
    error = context.error
    if error is not None:
        message = str(error)
        headers.append((HEADER_PREFIX + "exception.class.name", _text(class_name(error))))
        headers.append((HEADER_PREFIX + "exception.message", _text(message or None)))
        trace = "".join(traceback.format_exception(error))
        headers.append((HEADER_PREFIX + "exception.stacktrace", _text(trace)))
    return headers


class DeadLetterQueueReporter:
    """Produces the original consumed record (raw key, value, headers, timestamp) of a failed
    sink context to ``errors.deadletterqueue.topic.name``, plus the context headers when
    ``errors.deadletterqueue.context.headers.enable=true``. The returned future completes in
    the producer's delivery callback (served by :meth:`flush`)."""

    def __init__(
        self,
        producer: Any,
        connector: str,
        task: int,
        config: Mapping[str, str],
        metrics: ErrorHandlingMetrics,
    ) -> None:
        self.producer = producer
        self.connector = connector
        self.task = task
        self.topic = str(config.get("errors.deadletterqueue.topic.name", "")).strip()
        self.context_headers = _flag(config, "errors.deadletterqueue.context.headers.enable")
        self.metrics = metrics
        self.pending = 0

    def report(self, context: ProcessingContext) -> Future[None]:
        if not self.topic:
            return _done()
        self.metrics.record_dlq_produce_request()
        original = context.original
        if original is None:
            self.metrics.record_dlq_produce_failed()
            return _done()
        headers = list(original.headers() or ())
        if self.context_headers:
            headers.extend(context_headers(context, self.connector, self.task))
        ts_type, timestamp = original.timestamp()
        future: Future[None] = Future()
        future.set_running_or_notify_cancel()

        def delivered(err: Any, _msg: Any) -> None:
            if err is None:
                future.set_result(None)
                return
            log.error(
                "Could not produce message to dead letter queue. topic=%s: %s", self.topic, err
            )
            self.metrics.record_dlq_produce_failed()
            future.set_exception(KafkaException(err))

        kwargs: dict[str, Any] = {"headers": headers or None, "on_delivery": delivered}
        if ts_type and timestamp is not None and timestamp >= 0:
            kwargs["timestamp"] = timestamp
        while True:
            try:
                self.producer.produce(self.topic, original.value(), original.key(), **kwargs)
                break
            except BufferError:
                self.producer.poll(0.05)
        self.producer.poll(0)
        return future

    def flush(self, timeout_s: float) -> int:
        """Deliver what was reported; the number of reports still in flight."""
        return int(self.producer.flush(timeout_s))

    def close(self) -> None:
        return None  # the producer is the process's cached one


_created_lock = threading.Lock()
_created: set[tuple[str, str]] = set()


def ensure_dlq_topic(admin: Any, servers: str, topic: str, replication_factor: int) -> None:
    """Create the DLQ topic (1 partition) unless it exists; known topics are cached per
    process. Raises ``ConnectError("Could not initialize dead letter queue with topic=...")``."""
    key = (servers, topic)
    with _created_lock:
        if key in _created:
            return
    try:
        if topic not in admin.list_topics(timeout=_ADMIN_TIMEOUT_S).topics:
            log.error("Topic %s doesn't exist. Will attempt to create topic.", topic)
            future = admin.create_topics(
                [NewTopic(topic, 1, replication_factor)], request_timeout=_ADMIN_TIMEOUT_S
            )[topic]
            try:
                future.result()
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
    except Exception as exc:
        raise ConnectError(f"Could not initialize dead letter queue with topic={topic}") from exc
    with _created_lock:
        _created.add(key)
