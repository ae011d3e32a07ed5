"""Per-batch conversion for leases: SMTs and converters between task records and Kafka.

A :class:`Pipeline` holds one connector generation's converters and transformation chain,
built once per Python process (:func:`pipeline_for`) and reused by every lease of that
generation. Its two hot loops are written for throughput, not beauty: methods bound to
locals, no per-record dicts, headers skipped when a record has none.

* Source side (:meth:`Pipeline.produce_records`), Kafka's order: transformations, then
  header, key and value conversion, then ``producer.produce``.
* Sink side (:meth:`Pipeline.to_sink_records`): key, value and header conversion into
  :class:`~sparkcat.api.records.SinkRecord`, then transformations.

The columnar path (:mod:`sparkcat.api.batch`): without transformations, a consumed batch of
one topic without headers is converted column by column (the converters'
``to_connect_data_batch``) into a :class:`~sparkcat.api.batch.SinkRecordBatch`, and a
:class:`~sparkcat.api.batch.SourceRecordBatch` from ``poll`` goes to the producer with one
``from_connect_data_batch`` per column and its header column as it is when the header
converter declares ``bytes_pass_through`` (:meth:`Pipeline.produce_batch`). Anything else, or
a column that fails to convert, takes the per-record path, which gives the same bytes.

Converters are never recognised by name: the shortcuts above follow the capabilities they
declare (``Converter.null_pass_through``, ``HeaderConverter.bytes_pass_through``).

Errors: the hot loops have no per-stage error handling, only a try around each record (free
in CPython 3.11 until something raises). A record that raises is processed again by
:mod:`sparkcat.runtime.errors.record_paths`, each stage through the lease's
``RetryWithToleranceOperator`` (Kafka's retries, ``errors.tolerance``, log/DLQ reporting and
metrics); the loop then goes on with the next record on the fast path.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

from sparkcat.api.batch import SourceRecordBatch
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.api.records import (
    Header,
    Headers,
    SinkRecord,
    SourceRecord,
    TimestampType,
)
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import RetryWithToleranceOperator
from sparkcat.runtime.errors.record_paths import (
    produce_per_record,
    sink_records_per_record,
)
from sparkcat.runtime.errors.reporters import LogReporter
from sparkcat.runtime.tasks import columnar
from sparkcat.runtime.transformation_chain import TransformationChain, TransformationStage

__all__ = [
    "DEFAULT_HEADER_CONVERTER",
    "Pipeline",
    "converter_settings",
    "gc_paused",
    "pipeline_for",
]

log = logging.getLogger(__name__)

DEFAULT_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

_CONVERT, _PRODUCE = range(2)

# confluent-kafka's timestamp type codes (0 not available, 1 create, 2 log append).
_TIMESTAMP_TYPES = (
    TimestampType.NO_TIMESTAMP_TYPE,
    TimestampType.CREATE_TIME,
    TimestampType.LOG_APPEND_TIME,
)
_EMPTY_HEADERS = Headers.EMPTY

Chain = Callable[[Any], Any]
Resolve = Callable[[str, str], Any]


def converter_settings(
    connector_config: Mapping[str, str], worker_config: Mapping[str, str], kind: str
) -> tuple[str, dict[str, str]]:
    """The class name and configs of the ``kind`` converter (``key``/``value``/``header``).

    Kafka's rule: if the connector config sets ``<kind>.converter``, its
    ``<kind>.converter.*`` props configure it; otherwise the worker's converter and props.
    ``converter.type`` is set to ``kind``.
    """
    name = f"{kind}.converter"
    source = connector_config if name in connector_config else worker_config
    class_name = source.get(name)
    if not class_name:
        if kind != "header":
            raise ConfigError(
                f'Missing required configuration "{name}" which has no default value.'
            )
        class_name = DEFAULT_HEADER_CONVERTER
        source = worker_config
    prefix = name + "."
    props = {k[len(prefix) :]: v for k, v in source.items() if k.startswith(prefix)}
    props["converter.type"] = kind
    return class_name, props


class Pipeline:
    """Converters and transformation chain of one connector generation (thread-safe use:
    converters and transformations are expected to be stateless per record, as in Kafka)."""

    def __init__(
        self,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: Chain | None,
        closeables: Iterable[Any] = (),
        errors: Mapping[str, str] | None = None,
        transform_stages: Iterable[TransformationStage] = (),
    ) -> None:
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self._closeables = list(closeables)
        self._errors_config = dict(errors or {})
        # The chain's stages one by one, for the per-record path (executing class per stage).
        self.transform_stages = tuple(transform_stages)
        # A key converter that declares null_pass_through turns a null key without schema
        # into null (the source loop skips that call for the common keyless record) and
        # reads a null key the same way for every topic (converted once, here).
        self._null_pass_through = bool(getattr(key_converter, "null_pass_through", False))
        self._null_key = (
            key_converter.to_connect_data("", None) if self._null_pass_through else None
        )

    # ----------------------------------------------------------------- source side
    def produce_records(
        self,
        records: list[SourceRecord],
        producer: Any,
        on_delivery: Callable[[Any, Any], None] | None,
        ensure_topic: Callable[[str], None],
        known_topics: set[str],
        record_callback: Callable[[SourceRecord], Callable[[Any, Any], None]] | None = None,
        errors: RetryWithToleranceOperator | None = None,
    ) -> int:
        """Transform, convert and hand ``records`` to ``producer``; the number produced.

        ``ensure_topic`` is called for a topic not in ``known_topics`` before its first
        record (it must add the topic to the set). ``on_delivery`` is passed to every
        ``produce`` call, unless ``record_callback`` is given: then each record's own
        callback, ``record_callback(polled_record)``, which is also called with
        ``(None, None)`` for a record the transformations dropped or ``errors`` skipped. A
        full producer queue is served by polling, then retried. A failing record is redone stage by
        stage through ``errors`` (the lease's operator; a default one built from the
        connector config when ``None``); a failed ``produce`` call fails the task.
        """
        with gc_paused():
            return self._produce_records(
                records, producer, on_delivery, ensure_topic, known_topics, record_callback,
                errors,
            )  # fmt: skip

    def _produce_records(
        self,
        records: list[SourceRecord],
        producer: Any,
        on_delivery: Callable[[Any, Any], None] | None,
        ensure_topic: Callable[[str], None],
        known_topics: set[str],
        record_callback: Callable[[SourceRecord], Callable[[Any, Any], None]] | None = None,
        errors: RetryWithToleranceOperator | None = None,
    ) -> int:
        chain = self.chain
        kconv = self.key_converter.from_connect_data
        vconv = self.value_converter.from_connect_data
        produce = producer.produce
        empty = _EMPTY_HEADERS
        skip_null_keys = self._null_pass_through
        produced = 0
        stage = _CONVERT
        for polled in records:
            record = polled
            try:
                if record_callback is not None:
                    on_delivery = record_callback(polled)
                if chain is not None:
                    record = chain(polled)
                    if record is None:
                        if on_delivery is not None and record_callback is not None:
                            on_delivery(None, None)
                        continue
                # The records' slots, not their properties: this loop runs per record and a
                # property read costs three times a slot read. Records are sparkcat's own
                # __slots__ classes (api.records), so the slots are always there.
                topic = record._topic
                if topic not in known_topics:
                    ensure_topic(topic)
                headers = record._headers
                if headers is empty or not headers:
                    kafka_headers = None
                else:
                    kafka_headers = self._headers_out(topic, headers)
                key = record._key
                if key is not None or not skip_null_keys or record._key_schema is not None:
                    key = kconv(topic, record._key_schema, key)
                value = vconv(topic, record._value_schema, record._value)
                stage = _PRODUCE
                partition = record._kafka_partition
                if partition is None:
                    partition = -1
                # Positional arguments: confluent-kafka parses keywords far slower. The
                # sixth is on_delivery (an alias of the fifth, callback); 0 = "now".
                timestamp = record._timestamp or 0
                try:
                    if kafka_headers is None:
                        produce(topic, value, key, partition, on_delivery, None, timestamp)
                    else:
                        produce(
                            topic, value, key, partition, on_delivery, None, timestamp,
                            kafka_headers,
                        )  # fmt: skip
                except BufferError:
                    _produce_when_room(
                        producer, topic, value, key, partition, on_delivery, timestamp,
                        kafka_headers,
                    )  # fmt: skip
                produced += 1
                stage = _CONVERT
            except Exception as exc:
                if stage == _PRODUCE:
                    if isinstance(exc, ConnectError):
                        raise
                    raise ConnectError("Unrecoverable exception trying to send") from exc
                # This record again, stage by stage; then back to the fast path.
                if errors is None:
                    errors = self._default_operator(False)

                def send(rec: Any, hdrs: Any, key: Any, value: Any, callback: Any) -> None:
                    self._send(
                        producer, rec, hdrs, key, value, callback, ensure_topic, known_topics
                    )

                produced += produce_per_record(
                    self, [polled], 0, send, errors,
                    on_delivery if record_callback is None else None, record_callback,
                )  # fmt: skip
                stage = _CONVERT
        return produced

    def produce_batch(
        self,
        batch: SourceRecordBatch,
        producer: Any,
        on_delivery: Callable[[Any, Any], None] | None,
        ensure_topic: Callable[[str], None],
        known_topics: set[str],
        errors: RetryWithToleranceOperator | None = None,
        delivery: columnar.BatchDelivery | None = None,
    ) -> int:
        """Convert and produce a polled :class:`~sparkcat.api.batch.SourceRecordBatch`; the
        number produced. Column by column without transformations; otherwise (or when a
        column does not convert) its records go through :meth:`produce_records`.

        ``delivery``: the batch's report collector when the task overrides ``commit_batch``
        (its callbacks then replace ``on_delivery``)."""
        sent = 0
        if self.chain is None and batch.values:
            callbacks = repeat(on_delivery) if delivery is None else delivery.callbacks()
            with gc_paused():
                sent = columnar.send_batch(self, batch, producer, callbacks, ensure_topic,
                                           known_topics, _produce_when_room,
                                           whole=delivery is not None)  # fmt: skip
            if sent == len(batch):
                return sent
        # The records not sent column by column (a delivery's batch is sent whole or not).
        records = batch.records()[sent:] if sent else batch.records()
        record_callback = None if delivery is None else delivery.record_callback(records)
        return sent + self.produce_records(
            records, producer, on_delivery, ensure_topic, known_topics, record_callback, errors
        )

    def _send(
        self,
        producer: Any,
        record: Any,
        headers: Any,
        key: Any,
        value: Any,
        callback: Any,
        ensure_topic: Callable[[str], None],
        known_topics: set[str],
    ) -> None:
        """One ``produce`` of the per-record path (a failure fails the task, as in Kafka)."""
        topic = record.topic
        if topic not in known_topics:
            ensure_topic(topic)
        partition = -1 if record.kafka_partition is None else record.kafka_partition
        timestamp = record.timestamp or 0
        try:
            try:
                producer.produce(topic, value, key, partition, callback, None, timestamp, headers)
            except BufferError:
                _produce_when_room(
                    producer, topic, value, key, partition, callback, timestamp, headers
                )
        except ConnectError:
            raise
        except Exception as exc:
            raise ConnectError("Unrecoverable exception trying to send") from exc

    def _default_operator(self, sink: bool) -> RetryWithToleranceOperator:
        """An operator for callers without a lease (tests, tools): log reporting only."""
        metrics = ErrorHandlingMetrics()
        operator = RetryWithToleranceOperator.from_config(self._errors_config, metrics)
        operator.reporters = [LogReporter("unknown", self._errors_config, metrics, sink)]
        return operator

    def _headers_out(self, topic: str, headers: Headers) -> list[tuple[str, bytes | None]]:
        convert = self.header_converter.from_connect_header
        return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in headers]

    # ------------------------------------------------------------------- sink side
    def to_sink_records(
        self,
        messages: list[Any],
        offsets: dict[tuple[str, int], int],
        errors: RetryWithToleranceOperator | None = None,
        single_partition: tuple[str, int] | None = None,
    ) -> Sequence[SinkRecord]:
        """Convert consumed ``messages`` into transformed :class:`SinkRecord`\\ s (a
        :class:`~sparkcat.api.batch.SinkRecordBatch` when the columnar path applies).
        ``single_partition``: the only topic-partition the consumer is assigned, if so.

        ``offsets`` receives, per consumed topic-partition, the offset after the last
        message (also for messages a transformation dropped or tolerance skipped). A failing
        record is redone stage by stage through ``errors`` (the lease's operator; a default
        one when ``None``); when the task must fail, ``offsets`` stop at the failing
        message and :class:`~sparkcat.runtime.errors.record_paths.BatchFailedError`
        carries the records converted before it. Raises :class:`ConnectError` for a
        consumer error in the batch.
        """
        if self.chain is None and messages:
            batch = columnar.sink_batch(
                messages,
                offsets,
                self.key_converter,
                self.value_converter,
                self._null_key,
                single_partition,
            )
            if batch is not None:
                return batch
        with gc_paused():
            return self._to_sink_records(messages, offsets, errors)

    def _to_sink_records(
        self,
        messages: list[Any],
        offsets: dict[tuple[str, int], int],
        errors: RetryWithToleranceOperator | None,
    ) -> list[SinkRecord]:
        kconv = self.key_converter.to_connect_data
        vconv = self.value_converter.to_connect_data
        null_key = self._null_key
        chain = self.chain
        ts_types = _TIMESTAMP_TYPES
        out: list[SinkRecord] = []
        append = out.append
        # ``offsets`` is written when the topic-partition changes, before the per-record
        # path and at the end, not per message: a batch is mostly one partition's run.
        run_topic: str | None = None
        run_partition = -1
        run_next = 0
        for msg in messages:
            if msg.error() is not None:
                if run_topic is not None:
                    offsets[(run_topic, run_partition)] = run_next
                _consumer_error(msg)
                continue
            topic = msg.topic()
            partition = msg.partition()
            offset = msg.offset()
            if partition != run_partition or topic != run_topic:
                if run_topic is not None:
                    offsets[(run_topic, run_partition)] = run_next
                run_topic, run_partition = topic, partition
            run_next = offset + 1
            try:
                raw_key = msg.key()
                if raw_key is None and null_key is not None:
                    key_schema, key = null_key
                else:
                    key_schema, key = kconv(topic, raw_key)
                value_schema, value = vconv(topic, msg.value())
                raw_headers = msg.headers()
                headers = None if raw_headers is None else self._headers_in(topic, raw_headers)
                ts_type, timestamp = msg.timestamp()
                record = SinkRecord(
                    topic, partition, key_schema, key, value_schema, value, offset,
                    timestamp if ts_type else None, ts_types[ts_type], headers,
                )  # fmt: skip
                if chain is not None:
                    record = chain(record)
                    if record is None:
                        continue
                append(record)
            except Exception:
                # This message again, stage by stage; then back to the fast path.
                offsets[(topic, partition)] = run_next
                if errors is None:
                    errors = self._default_operator(True)
                sink_records_per_record(self, [msg], 0, offsets, out, errors, _consumer_error)
        if run_topic is not None:
            offsets[(run_topic, run_partition)] = run_next
        return out

    def _headers_in(self, topic: str, raw: list[tuple[str, bytes | None]]) -> Headers:
        convert = self.header_converter.to_connect_header
        items = []
        for key, data in raw:
            schema, value = convert(topic, key, data)
            items.append(Header(key, schema, value))
        return Headers(items)

    def close(self) -> None:
        """Close the converters and transformations (when the generation is replaced)."""
        for closeable in self._closeables:
            try:
                closeable.close()
            except Exception:
                log.warning("Error closing %r", closeable, exc_info=True)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (nests: an inner block leaves it off).

    The hot loops allocate thousands of container objects (records, schema/value pairs) that
    never form cycles; with the collector on, its generation-0 runs (every 700 allocations)
    rescan them again and again. Collection resumes after the block: a lease pauses it for
    its whole poll/consume loop, so cyclic garbage a task makes waits at most one lease.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _produce_when_room(
    producer: Any,
    topic: str,
    value: Any,
    key: Any,
    partition: int,
    on_delivery: Callable[[Any, Any], None] | None,
    timestamp: int,
    headers: list[tuple[str, bytes | None]] | None,
) -> None:
    """``produce`` once the queue has room, serving delivery callbacks meanwhile."""
    while True:
        producer.poll(0.05)
        try:
            producer.produce(topic, value, key, partition, on_delivery, None, timestamp, headers)
            return
        except BufferError:
            continue


def _consumer_error(msg: Any) -> None:
    err = msg.error()
    # Reaching a partition's end is information, not a failure.
    if err.code() == -191:  # KafkaError._PARTITION_EOF
        return
    if err.retriable():
        log.warning("Retriable consumer error: %s", err)
        return
    raise ConnectError(f"Error consuming from Kafka: {err}")


# ------------------------------------------------------------------ building & cache
def build_pipeline(
    connector_config: Mapping[str, str], worker_config: Mapping[str, str], resolve: Resolve
) -> Pipeline:
    """Instantiate and configure the converters and the chain of one connector config."""
    converters: list[Any] = []
    for kind in ("key", "value"):
        class_name, props = converter_settings(connector_config, worker_config, kind)
        converter = resolve(class_name, "converter")()
        converter.configure(props, kind == "key")
        converters.append(converter)
    class_name, props = converter_settings(connector_config, worker_config, "header")
    header_converter = resolve(class_name, "header_converter")()
    header_converter.configure(props)
    chain, chain_parts = build_chain(connector_config, resolve)
    stages = next((p.stages for p in chain_parts if isinstance(p, TransformationChain)), ())
    return Pipeline(
        converters[0],
        converters[1],
        header_converter,
        chain,
        closeables=[*converters, header_converter, *chain_parts],
        errors=connector_config,
        transform_stages=stages,
    )


_cache_lock = threading.Lock()
_cache: dict[str, tuple[int, Pipeline]] = {}


def pipeline_for(
    connector: str,
    generation: int,
    connector_config: Mapping[str, str],
    worker_config: Mapping[str, str],
    resolve: Resolve,
) -> Pipeline:
    """The process's pipeline of ``connector`` at ``generation``, built on first use; a new
    generation replaces (and closes) the previous one."""
    with _cache_lock:
        cached = _cache.get(connector)
        if cached is not None and cached[0] == generation:
            return cached[1]
    pipeline = build_pipeline(connector_config, worker_config, resolve)
    with _cache_lock:
        previous = _cache.get(connector)
        if previous is not None and previous[0] == generation:
            pipeline.close()  # another thread won the race
            return previous[1]
        _cache[connector] = (generation, pipeline)
    if previous is not None:
        previous[1].close()
    return pipeline


def build_chain(
    connector_config: Mapping[str, str], resolve: Resolve
) -> tuple[Chain | None, list[Any]]:
    """The ``transforms`` chain as one callable (``None`` when there are none; the bare
    ``apply`` of a single unconditional transformation) and what to close later."""
    chain = TransformationChain.from_config(connector_config, resolve)
    stages = chain.stages
    if not stages:
        return None, []
    if len(stages) == 1 and stages[0].predicate is None:
        return stages[0].transformation.apply, [chain]
    return chain.apply, [chain]
