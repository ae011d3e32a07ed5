"""The source lease: one ``SourceTask`` instance polls, its records go to Kafka.

Kafka's ``WorkerSourceTask`` for one lease: create the task, ``initialize``, ``start``;
``poll()`` until the lease's time or record budget is spent or its control channel says stop;
each batch goes through the pipeline (transformations, then header, key, value conversion)
to the producer. At the end the producer is flushed and, when every record was acked, the
source offsets of the last record per source partition are reported for the driver to
commit; then ``commit()``, ``stop()`` and ``stopped()`` (exactly once, even after a failure).

Delivery reports: unless the task overrides ``commit_record`` or ``commit_batch``, the
producer reports only failures (``delivery.report.only.error``), so a successful record costs
no Python callback. For a task overriding ``commit_batch``, each polled
:class:`~sparkcat.api.batch.SourceRecordBatch` gets a
:class:`~sparkcat.runtime.tasks.columnar.BatchDelivery`; after each ``producer.poll`` and
after the final flush, the batches whose records were all acked are handed to
``commit_batch`` on this thread, in poll order, before ``commit()``.
"""

from __future__ import annotations

import logging
import operator
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import KafkaException

from sparkcat.api.batch import SourceRecordBatch
from sparkcat.api.errors import ConnectError, RetriableError
from sparkcat.api.source import RecordMetadata, SourceTask
from sparkcat.kafka import clients
from sparkcat.runtime.errors.operator import ProcessingContext, Stage
from sparkcat.runtime.errors.task import TaskErrorHandling
from sparkcat.runtime.metrics.counters import REPORT_COMMIT, new_counters
from sparkcat.runtime.tasks import client_cache, columnar, exactly_once
from sparkcat.runtime.tasks.control import address_issue
from sparkcat.runtime.tasks.lease import (
    ControlWatch,
    LeaseResult,
    LeaseSpec,
    load_task_class,
    resolver_for,
)
from sparkcat.runtime.tasks.pipeline import gc_paused, pipeline_for
from sparkcat.runtime.tasks.task_context import (
    LeaseOffsetStorageReader,
    WorkerSourceTaskContext,
    partition_key,
)
from sparkcat.runtime.tasks.topic_creation import TopicCreator

__all__ = ["SourceRun", "run_source_lease"]

log = logging.getLogger(__name__)

_IDLE_BACKOFF_MIN_S = 0.01
_IDLE_BACKOFF_MAX_S = 0.1
_DEFAULT_FLUSH_TIMEOUT_MS = 5000
_EXECUTING_CLASS = "sparkcat.runtime.tasks.worker_source_task"  # Kafka: WorkerSourceTask
# The slot behind SourceRecord.source_partition, read in C for a whole batch.
_SOURCE_PARTITION = operator.attrgetter("_source_partition")


def run_source_lease(spec: LeaseSpec) -> LeaseResult:
    """Run ``spec``'s source task for one lease (see the module docs). Task failures are
    returned as :attr:`LeaseResult.trace`; framework failures before the task exists raise."""
    started = time.monotonic()
    resolve = resolver_for(spec.worker_config)
    task_class: type[SourceTask] = load_task_class(
        spec.task_config["task.class"], SourceTask, resolve
    )
    pipeline = pipeline_for(
        spec.connector, spec.generation, spec.connector_config, spec.worker_config, resolve
    )
    wants_commit_record = task_class.commit_record is not SourceTask.commit_record
    # Successful sends are reported to Python only for a task that wants to hear of them.
    wants_reports = wants_commit_record or _wants_commit_batch(task_class)
    if exactly_once.enabled(spec.worker_config):  # KIP-618: records and offsets in transactions
        from sparkcat.runtime.tasks.exactly_once.source_task import run_exactly_once_lease

        return run_exactly_once_lease(spec, started, task_class, pipeline, wants_reports)
    config = clients.producer_config(
        spec.worker_config,
        spec.connector_config,
        clients.producer_client_id(spec.connector, spec.task),
    )
    if not wants_reports:
        config["delivery.report.only.error"] = True  # type: ignore[assignment]
    # Per issue of the control channel: an abandoned lease of an earlier issue keeps its own.
    issue = address_issue(spec.control) if spec.control else None
    producer = client_cache.get_producer(config, issue)
    errors = TaskErrorHandling.for_task(
        spec.connector, spec.task, spec.connector_config, spec.worker_config, sink=False
    )
    run = SourceRun(spec, task_class, pipeline, producer, wants_commit_record, errors)
    return run.execute(started)


class SourceRun:
    """The state of one source lease (subclassed by the exactly-once lease)."""

    def __init__(
        self,
        spec: LeaseSpec,
        task_class: type[SourceTask],
        pipeline: Any,
        producer: Any,
        wants_commit_record: bool,
        errors: TaskErrorHandling,
    ) -> None:
        self.spec = spec
        self.errors = errors
        self.task_class = task_class
        self.pipeline = pipeline
        self.producer = producer
        # The flag says whether the producer reports successes; per-record callbacks are
        # only for a task that overrides commit_record itself.
        self.wants_commit_record = (
            wants_commit_record and task_class.commit_record is not SourceTask.commit_record
        )
        self.wants_commit_batch = _wants_commit_batch(task_class)
        # Batches polled and sent, waiting for their delivery reports (commit_batch).
        self.deliveries: deque[columnar.BatchDelivery] = deque()
        self.ordered_delivery = _keeps_partition_order(spec)
        self.task: SourceTask | None = None
        self.polled = 0
        self.produced = 0
        self.acked = 0
        self.offsets: dict[bytes, tuple[Mapping[str, Any], Mapping[str, Any] | None]] = {}
        self.delivery_errors: list[Any] = []
        self.topics = TopicCreator(spec)
        self.lease_topics: set[str] = set()
        self.counters = new_counters()  # task metrics: updated once per batch

    # ----------------------------------------------------------------------- lifecycle
    def execute(self, started: float) -> LeaseResult:
        trace: str | None = None
        offsets: tuple[tuple[dict[str, Any], dict[str, Any] | None], ...] = ()
        try:
            try:
                self._start_and_poll(started)
            finally:
                offsets = self._deliver()
            if self.task is not None:
                self._commit_batches()
                self.task.commit()
        except Exception:
            trace = traceback.format_exc()
        finally:
            trace = self._finish(trace)
            self.errors.close()
        return LeaseResult(
            connector=self.spec.connector,
            task=self.spec.task,
            generation=self.spec.generation,
            records=self.acked,
            polled=self.polled,
            source_offsets=offsets,
            trace=trace,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            error_metrics=self.errors.snapshot(),
            topics=tuple(sorted(self.lease_topics)),
            task_metrics=self.counters.report(
                False,
                self.polled,
                self.acked,
                time.monotonic() - started,
                {REPORT_COMMIT: 1.0 if offsets else 0.0},
            ),
        )

    def _start_and_poll(self, started: float) -> None:
        spec = self.spec
        task = self.task_class()
        self.task = task
        reader = LeaseOffsetStorageReader(spec.source_offsets)
        task.initialize(self._task_context(reader))
        task.start(dict(spec.task_config))
        # FileStreamSourceTask-like tasks build a record and an offset map per line: with the
        # cyclic collector on, its runs over them cost ~0.6 of ~1.7 us per line.
        with gc_paused():
            self._poll_loop(task, started + spec.max_ms / 1000.0)

    def _task_context(self, reader: LeaseOffsetStorageReader) -> WorkerSourceTaskContext:
        return WorkerSourceTaskContext(dict(self.spec.task_config), reader)

    def _poll_loop(self, task: SourceTask, deadline: float) -> None:
        control = ControlWatch(self.spec.control)
        max_records = self.spec.max_records
        producer = self.producer
        produce_records = self.pipeline.produce_records
        produce_batch = self.pipeline.produce_batch
        # ``known`` is this lease's own set, so each lease reports the topics it produced to
        # (KIP-558) at the cost of one call per topic per lease; the admin round trip still
        # happens once per process and topic.
        known = self.lease_topics
        process_known = self.topics.known
        create_topic = self.topics.ensure

        def ensure_topic(topic: Any) -> None:
            if topic not in process_known:
                create_topic(topic)
            known.add(topic)

        on_delivery = None if self.wants_commit_record else self._on_delivery_error
        record_callback = self._record_callback if self.wants_commit_record else None
        track = self._track_offsets
        operator = self.errors.operator
        monotonic = time.monotonic
        backoff = _IDLE_BACKOFF_MIN_S
        retries = 0
        data_s = self.spec.data_max_ms / 1000.0
        counters = self.counters
        clock = counters.clock
        while True:
            now = monotonic()
            if now >= deadline or self.polled >= max_records or control.stop_requested(now):
                return
            try:
                poll_started = clock()
                batch = task.poll()
                retries = 0
            except RetriableError as exc:
                # Polled again after Kafka's retry backoff (300 ms, 600 ms, ...), within the lease.
                retries += 1
                wait_s = min(operator.backoff_ms(retries) / 1000.0, max(0.0, deadline - now))
                log.info(
                    "Retriable exception from poll of %s, polling again in %.3fs: %s",
                    self._name(), wait_s, exc,
                )  # fmt: skip
                time.sleep(wait_s)
                continue
            if not batch:
                producer.poll(0)
                if self.deliveries:  # a quiet task's last batches, without waiting for the end
                    self._commit_batches()
                time.sleep(min(backoff, max(0.0, deadline - now)))
                backoff = min(backoff * 2, _IDLE_BACKOFF_MAX_S)
                continue
            backoff = _IDLE_BACKOFF_MIN_S
            counters.call(poll_started)
            counters.batch(len(batch))
            if data_s and not self.polled:
                deadline = min(deadline, now + data_s)
            self.polled += len(batch)
            if isinstance(batch, SourceRecordBatch):
                self._track_runs(batch)
                if record_callback is None or self.wants_commit_batch:
                    delivery = self._delivery(batch)
                    self.produced += produce_batch(
                        batch, producer, on_delivery, ensure_topic, known, operator, delivery
                    )
                    producer.poll(0)
                    if self.delivery_errors:
                        return
                    if self.deliveries:
                        self._commit_batches()
                    continue
                batch = batch.records()  # commit_record wants each record: per record
            else:
                track(batch)
            self.produced += produce_records(
                batch, producer, on_delivery, ensure_topic, known, record_callback, operator
            )
            producer.poll(0)
            if self.delivery_errors:
                return

    def _deliver(self) -> tuple[tuple[dict[str, Any], dict[str, Any] | None], ...]:
        """Flush the producer; the offsets to commit if every record was acked."""
        timeout_ms = int(
            self.spec.worker_config.get("offset.flush.timeout.ms", _DEFAULT_FLUSH_TIMEOUT_MS)
        )
        remaining = self.producer.flush(max(timeout_ms, 0) / 1000.0)
        # The producer is shared only by leases of this task, so what remains is ours.
        self.acked = max(0, self.produced - remaining)
        if self.delivery_errors:
            self.acked = 0
            error = self.delivery_errors[0]
            raise ConnectError(
                f"Unrecoverable exception from producer send callback: {error}"
            ) from KafkaException(error)
        if remaining:
            log.warning(
                "%s: %d records not acked within offset.flush.timeout.ms=%d; "
                "their offsets are not committed in this lease",
                self._name(),
                remaining,
                timeout_ms,
            )
            return ()
        return tuple(
            (dict(partition), None if offset is None else dict(offset))
            for partition, offset in self.offsets.values()
        )

    def _finish(self, trace: str | None) -> str | None:
        task = self.task
        if task is None:
            return trace
        for step in (task.stop, task.stopped):
            try:
                step()
            except Exception:
                log.warning("%s: %s failed", self._name(), step.__name__, exc_info=True)
        return trace

    # ----------------------------------------------------------------------- per batch
    def _delivery(self, batch: SourceRecordBatch) -> columnar.BatchDelivery | None:
        """The report collector of ``batch`` when the task overrides ``commit_batch``."""
        if not self.wants_commit_batch:
            return None
        delivery = columnar.BatchDelivery(batch, self._batch_send_failed, self.ordered_delivery)
        self.deliveries.append(delivery)
        return delivery

    def _batch_send_failed(self, record: Any, err: Any) -> bool:
        if self._skip_failed_send(record, err):
            return True
        self.delivery_errors.append(err)
        return False

    def _commit_batches(self) -> None:
        """``commit_batch`` for the oldest batches whose records were all acked, in poll
        order (a later batch waits for an earlier one: offset syncs rely on the order)."""
        deliveries, task = self.deliveries, self.task
        assert task is not None
        while deliveries and deliveries[0].complete:
            delivery = deliveries.popleft()
            try:
                task.commit_batch(delivery.batch, delivery.metadata())
            except Exception:
                log.warning("%s: exception thrown while calling task.commit_batch()",
                            self._name(), exc_info=True)  # fmt: skip

    def _track_runs(self, batch: SourceRecordBatch) -> None:
        """A columnar batch: each run's offset is the offset after its last record."""
        for run in batch.runs:
            if run.length and run.source_partition is not None:
                key = partition_key(run.source_partition)
                self.offsets[key] = (run.source_partition, run.source_offset)

    def _track_offsets(self, batch: list[Any]) -> None:
        """Remember, per source partition, the offset of the batch's last record."""
        partitions = list(map(_SOURCE_PARTITION, batch))
        first = partitions[0]
        # Common case: one partition object for the whole batch (list.count compares by
        # identity first, in C).
        if first is not None and partitions.count(first) == len(partitions):
            self.offsets[partition_key(first)] = (first, batch[-1].source_offset)
            return
        last: dict[bytes, tuple[Any, Any]] = {}
        previous: Any = None
        key = b""
        for partition, record in zip(partitions, batch, strict=True):
            if partition is None:
                continue
            if partition is not previous:
                key, previous = partition_key(partition), partition
            last[key] = (partition, record.source_offset)
        self.offsets.update(last)

    def _on_delivery_error(self, err: Any, msg: Any) -> None:
        if err is not None and not self._skip_failed_send(None, err):
            self.delivery_errors.append(err)

    def _skip_failed_send(self, record: Any, err: Any) -> bool:
        """KIP-779: under ``errors.tolerance=all`` a record whose send failed is reported
        (stage KAFKA_PRODUCE) and counted as acked; ``False`` when the task must fail."""
        if not self.errors.tolerate_all:
            return False
        context = ProcessingContext(record)
        self.errors.operator.execute_failed(
            context, Stage.KAFKA_PRODUCE, _EXECUTING_CLASS, KafkaException(err)
        )
        return True

    def _record_callback(self, record: Any) -> Callable[[Any, Any], None]:
        task = self.task
        assert task is not None

        def delivered(err: Any, msg: Any) -> None:
            if err is not None:
                if self._skip_failed_send(record, err):
                    task.commit_record(record, None)
                else:
                    self.delivery_errors.append(err)
                return
            metadata = None
            if msg is not None:
                ts = msg.timestamp()[1]
                metadata = RecordMetadata(msg.topic(), msg.partition(), msg.offset(), ts)
            task.commit_record(record, metadata)

        return delivered

    def _name(self) -> str:
        return f"{self.spec.connector}-{self.spec.task}"


def _wants_commit_batch(task_class: type[SourceTask]) -> bool:
    return task_class.commit_batch is not SourceTask.commit_batch


def _keeps_partition_order(spec: LeaseSpec) -> bool:
    """Whether the producer's delivery reports of a partition come in the order its records
    were sent (one request in flight, or idempotence): :class:`columnar.BatchDelivery` then
    pairs reports with records without a callback object per record."""
    config = clients.producer_config(spec.worker_config, spec.connector_config)
    in_flight = str(config.get("max.in.flight.requests.per.connection", "5")).strip()
    idempotent = str(config.get("enable.idempotence", "false")).strip().lower() == "true"
    return in_flight == "1" or idempotent
