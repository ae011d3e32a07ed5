"""The exactly-once source lease (KIP-618): Kafka's ``ExactlyOnceWorkerSourceTask``.

Used instead of the plain source lease when the worker has
``exactly.once.source.support=enabled`` (distributed mode). Per lease:

1. a transactional producer with ``transactional.id = <group.id>-<connector>-<task>`` is
   created and ``init_transactions()`` runs: the broker aborts any transaction an older
   instance of this task left open and fences that instance (its next send or commit fails).
   Before that (and once more after it) the lease asks its control channel whether it is
   still wanted: a late lease whose worker is gone or stopped the connector, or a Spark task
   retry of a lease issued for an earlier assignment of the task (answered ``stale``), ends
   there having written nothing, and in the stale case without fencing the current owner;
2. the task polls as in the plain lease (:class:`~sparkcat.runtime.tasks.worker_source_task.
   SourceRun`); records go into the open transaction, and at each boundary the source offsets
   of those records are produced to the connector's offsets topic *in the same transaction*
   (plain records, keyed and partitioned exactly as the offset store writes them), then the
   transaction commits. Boundaries (``transaction.boundary``): ``poll`` — after each
   non-empty batch; ``interval`` — every ``transaction.boundary.interval.ms`` (default: the
   worker's ``offset.flush.interval.ms``); ``connector`` — when the task asks through
   :class:`~sparkcat.api.source.TransactionContext` (a record-level request splits the batch
   after that record). An aborted transaction discards its records; their offsets are still
   committed (in a transaction of their own), so they are not polled again;
3. at the end of the lease the open transaction commits (``poll``/``interval``) or is aborted
   (``connector`` without a pending request, as Kafka's ``shouldCommitFinalTransaction``):
   leases are the tasks' lifetimes here, so a connector-defined transaction cannot span two
   leases. Only offsets of committed transactions go back to the driver
   (:attr:`LeaseResult.source_offsets`): the framework sees offsets only once committed.
   ``commit()``, ``stop()`` and ``stopped()`` follow, ``stopped()`` last (KIP-419).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import traceback
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from sparkcat.api.batch import SourceRecordBatch
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import OffsetStorageReader, SourceTask, TransactionContext
from sparkcat.kafka import clients
from sparkcat.runtime.errors.task import TaskErrorHandling
from sparkcat.runtime.metrics.counters import (
    REPORT_TX_COUNT,
    REPORT_TX_SIZE,
    REPORT_TX_SIZE_MAX,
    REPORT_TX_SIZE_MIN,
)
from sparkcat.runtime.stores.offsets import offset_key_bytes, offset_value_bytes
from sparkcat.runtime.tasks.control import ControlChannel
from sparkcat.runtime.tasks.exactly_once import transactional_id
from sparkcat.runtime.tasks.exactly_once.offsets_topic import (
    offsets_topic,
    partition_count,
    partition_of,
)
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec
from sparkcat.runtime.tasks.task_context import WorkerSourceTaskContext
from sparkcat.runtime.tasks.worker_source_task import SourceRun

__all__ = ["ExactlyOnceSourceRun", "WorkerTransactionContext", "run_exactly_once_lease"]

log = logging.getLogger(__name__)

_TRANSACTION_TIMEOUT_S = 60.0
_CONTROL_ANSWER_TIMEOUT_S = 10.0
_ABORT_TIMEOUT_S = 10.0
_DEFAULT_FLUSH_INTERVAL_MS = 60_000
_PURGED_CODES = frozenset({KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT})
_FENCED_CODES = frozenset(
    {
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    }
)


def run_exactly_once_lease(
    spec: LeaseSpec,
    started: float,
    task_class: type[SourceTask],
    pipeline: Any,
    wants_commit_record: bool,
) -> LeaseResult:
    """Run one transactional lease of ``spec``'s task (see the module docs)."""
    worker = spec.worker_config
    config = clients.producer_config(
        worker, spec.connector_config, clients.producer_client_id(spec.connector, spec.task)
    )
    config.update(
        {
            "transactional.id": transactional_id(worker["group.id"], spec.connector, spec.task),
            "enable.idempotence": "true",
            "acks": "all",
            "max.in.flight.requests.per.connection": "5",
            # librdkafka requires message.timeout.ms <= transaction.timeout.ms.
            "delivery.timeout.ms": str(int(_TRANSACTION_TIMEOUT_S * 1000)),
            "transaction.timeout.ms": str(int(_TRANSACTION_TIMEOUT_S * 1000)),
        }
    )
    if not wants_commit_record:
        config["delivery.report.only.error"] = True  # type: ignore[assignment]
    control = ControlChannel(spec.control)
    try:
        # Asked before the producer exists: a stale lease (a Spark retry of a lease issued
        # for an earlier assignment of this task) must not even call init_transactions(),
        # which would fence the producer of the task's current owner.
        refused = _refusal(control)
        if refused is None:
            producer = Producer(config)
            producer.init_transactions(_TRANSACTION_TIMEOUT_S)
            refused = _refusal(control)  # told to end while older producers were fenced
    finally:
        control.close()
    if refused is not None:
        log.info("%s-%d: lease not wanted (control channel says %s); it ends having written "
                 "nothing", spec.connector, spec.task, refused)  # fmt: skip
        return LeaseResult(connector=spec.connector, task=spec.task, generation=spec.generation,
                           elapsed_ms=int((time.monotonic() - started) * 1000))  # fmt: skip
    topic = offsets_topic(spec.worker_config, spec.connector_config)
    errors = TaskErrorHandling.for_task(
        spec.connector, spec.task, spec.connector_config, worker, sink=False
    )
    run = ExactlyOnceSourceRun(spec, task_class, pipeline, producer, wants_commit_record, errors)
    run.attach(topic, partition_count(spec.worker_config, spec.connector_config, topic))
    return run.execute(started)


def _refusal(channel: ControlChannel) -> str | None:
    """``None`` if the lease may run, else why not: the channel's ``pause``/``stop``/
    ``stale``/``gone``, or ``unanswered``."""
    if not channel.wait_first_answer(_CONTROL_ANSWER_TIMEOUT_S):
        return "unanswered"
    return channel.state() if channel.stop_requested() else None


class WorkerTransactionContext(TransactionContext):
    """Records the task's boundary requests; the lease applies them (record-level wins)."""

    def __init__(self) -> None:
        self.batch_request: str | None = None
        self.record_requests: dict[int, str] = {}  # id(record) -> "commit" | "abort"

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("commit", record)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("abort", record)

    def _request(self, what: str, record: SourceRecord | None) -> None:
        if record is None:
            self.batch_request = what
        else:
            self.record_requests[id(record)] = what


class _TransactionContextOwner(WorkerSourceTaskContext):
    def __init__(
        self, configs: dict[str, str], reader: OffsetStorageReader, tx: TransactionContext | None
    ) -> None:
        super().__init__(configs, reader)
        self._tx = tx

    def transaction_context(self) -> TransactionContext | None:
        return self._tx


class _BoundedTask:
    """What the plain poll loop sees as the task: ``poll()`` first ends the transaction when
    a boundary is due, then hands out records up to the next connector-defined boundary."""

    def __init__(self, task: SourceTask, run: ExactlyOnceSourceRun) -> None:
        self._task = task
        self._run = run

    def poll(self) -> Any:
        run = self._run
        run.end_transaction_if_due()
        batch = run.take_held()
        if batch is None:
            batch = self._task.poll()
            if not batch:
                return batch
        batch = run.split_at_boundary(batch)
        run.ensure_transaction()
        return batch


class ExactlyOnceSourceRun(SourceRun):
    """The state of one transactional lease."""

    def attach(self, offsets_topic: str, partitions: int) -> None:
        worker = self.spec.worker_config
        boundary = str(self.spec.connector_config.get("transaction.boundary", "poll"))
        self.boundary = boundary.strip().lower()
        interval = self.spec.connector_config.get("transaction.boundary.interval.ms")
        if interval is None:
            interval = worker.get("offset.flush.interval.ms") or str(_DEFAULT_FLUSH_INTERVAL_MS)
        self.interval_s = int(interval) / 1000.0
        self.tx = WorkerTransactionContext() if self.boundary == "connector" else None
        self.offsets_topic = offsets_topic
        self.offsets_partitions = partitions
        self.in_transaction = False
        self.transaction_started = 0.0
        self.transaction_records = 0
        self.produced_before = 0
        self.pending: str | None = None  # a boundary reached by a record-level request
        self.held: Any = None
        self.committed: dict[bytes, Any] = {}  # key -> offset, as of the last commit
        self.reported: dict[bytes, tuple[Mapping[str, Any], Mapping[str, Any] | None]] = {}
        self.failure: str | None = None
        self.loop_failed = False
        self.fenced = False
        self.aborted_records = 0
        # transaction-size-* (KIP-618): records of each committed transaction
        self.tx_count = 0
        self.tx_records = 0
        self.tx_min = 0
        self.tx_max = 0

    def execute(self, started: float) -> LeaseResult:
        result = super().execute(started)
        if not result.task_metrics:  # metrics are off
            return result
        metrics = dict(result.task_metrics)
        metrics.update(
            {
                REPORT_TX_COUNT: float(self.tx_count),
                REPORT_TX_SIZE: float(self.tx_records),
                REPORT_TX_SIZE_MIN: float(self.tx_min),
                REPORT_TX_SIZE_MAX: float(self.tx_max),
            }
        )
        return dataclasses.replace(result, task_metrics=metrics)

    # -- hooks of SourceRun ----------------------------------------------------------------
    def _task_context(self, reader: OffsetStorageReader) -> WorkerSourceTaskContext:
        return _TransactionContextOwner(dict(self.spec.task_config), reader, self.tx)

    def _poll_loop(self, task: SourceTask, deadline: float) -> None:
        try:
            super()._poll_loop(_BoundedTask(task, self), deadline)  # type: ignore[arg-type]
        except BaseException as exc:
            self.loop_failed = True  # the open transaction may hold part of a batch: abort it
            self._note_fencing(exc)
            raise

    def _deliver(self) -> tuple[tuple[dict[str, Any], dict[str, Any] | None], ...]:
        """End the lease's last transaction; the offsets committed during the lease."""
        try:
            if self.in_transaction and self.loop_failed:
                self._abort_quietly()
            elif self.in_transaction:
                if self.delivery_errors:
                    raise ConnectError(
                        f"Unrecoverable exception from producer send callback: "
                        f"{self.delivery_errors[0]}"
                    )
                request = self.pending or (self.tx.batch_request if self.tx else None)
                if request is None and self.boundary == "connector":
                    request = "discard"  # Kafka: no final commit for connector boundaries
                self._end_transaction(request or "commit")
        except Exception as exc:
            self.failure = traceback.format_exc()
            self._note_fencing(exc)
            self._abort_quietly()
        return tuple(
            (dict(partition), None if offset is None else dict(offset))
            for partition, offset in self.reported.values()
        )

    def _skip_failed_send(self, record: Any, err: Any) -> bool:
        # An aborted transaction purges its records still queued or in flight: their
        # delivery reports carry these codes and are expected, not failures.
        if isinstance(err, KafkaError) and err.code() in _PURGED_CODES:
            return True
        return super()._skip_failed_send(record, err)

    def _finish(self, trace: str | None) -> str | None:
        return super()._finish(trace if trace is not None else self.failure)

    # -- transactions -----------------------------------------------------------------------
    def ensure_transaction(self) -> None:
        if not self.in_transaction:
            self.producer.begin_transaction()
            self.in_transaction = True
            self.transaction_started = time.monotonic()
            self.produced_before = self.produced

    def end_transaction_if_due(self) -> None:
        if not self.in_transaction:
            return
        if self.delivery_errors:
            return  # the poll loop ends now; _deliver reports the error
        if self.boundary == "poll":
            request: str | None = "commit" if self.produced > self.produced_before else None
        elif self.boundary == "interval":
            due = time.monotonic() - self.transaction_started >= self.interval_s
            request = "commit" if due else None
        else:
            request = self.pending
            if request is None and self.tx is not None:
                request, self.tx.batch_request = self.tx.batch_request, None
        if request is not None:
            self._end_transaction(request)

    def take_held(self) -> Any:
        held, self.held = self.held, None
        return held

    def split_at_boundary(self, batch: Any) -> Any:
        """With connector boundaries, return the records up to the first one the task asked a
        commit or abort after, and hold the rest for the next ``poll()``."""
        tx = self.tx
        if tx is None or not tx.record_requests or isinstance(batch, SourceRecordBatch):
            return batch
        requests = tx.record_requests
        for index, record in enumerate(batch):
            request = requests.pop(id(record), None)
            if request is not None:
                self.pending = request
                rest = batch[index + 1 :]
                self.held = rest or None
                return batch[: index + 1]
        return batch

    def _end_transaction(self, request: str) -> None:
        """``commit``: offsets records, then commit; ``abort``: abort, then commit the aborted
        records' offsets alone; ``discard``: abort and keep the offsets uncommitted."""
        producer = self.producer
        self.pending = None
        records = self.produced - self.produced_before
        if request == "commit":
            self._produce_offsets()
            self._commit(records)
            return
        producer.abort_transaction(_TRANSACTION_TIMEOUT_S)
        self.in_transaction = False
        if request == "discard":
            return
        self.aborted_records += records
        log.info("%s: transaction aborted by the task (%d records discarded)", self._name(),
                 records)  # fmt: skip
        self.ensure_transaction()
        self._produce_offsets()
        self._commit(0, counted=False)  # the aborted transaction's offsets alone

    def _commit(self, records: int, counted: bool = True) -> None:
        self.producer.commit_transaction(_TRANSACTION_TIMEOUT_S)
        self.in_transaction = False
        self.acked += records
        if counted:
            first = self.tx_count == 0
            self.tx_count += 1
            self.tx_records += records
            self.tx_min = records if first else min(self.tx_min, records)
            self.tx_max = max(self.tx_max, records)
        for key, (partition, offset) in self._dirty().items():
            self.committed[key] = offset
            self.reported[key] = (partition, offset)

    def _dirty(self) -> dict[bytes, tuple[Mapping[str, Any], Mapping[str, Any] | None]]:
        committed = self.committed
        return {k: v for k, v in self.offsets.items() if k not in committed or committed[k] != v[1]}

    def _produce_offsets(self) -> None:
        produce = self.producer.produce
        topic, partitions = self.offsets_topic, self.offsets_partitions
        connector = self.spec.connector
        for partition, offset in self._dirty().values():
            key = offset_key_bytes(connector, partition)
            produce(topic, offset_value_bytes(offset), key, partition=partition_of(key, partitions))

    def _note_fencing(self, exc: BaseException) -> None:
        errors = [e for e in self.delivery_errors if isinstance(e, KafkaError)]
        if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
            errors.append(exc.args[0])
        if any(e.fatal() or e.code() in _FENCED_CODES for e in errors):
            self.fenced = True

    def _abort_quietly(self) -> None:
        if not self.in_transaction:
            return
        self.in_transaction = False
        if self.fenced:
            # The fencing instance's init_transactions already aborted our transaction; an
            # abort from a fenced producer would only wait for its time-out.
            log.warning("%s: producer fenced; a newer instance of the task runs elsewhere",
                        self._name())  # fmt: skip
            return
        try:
            self.producer.abort_transaction(_ABORT_TIMEOUT_S)
        except KafkaException as exc:
            if _fenced(exc):
                log.warning("%s: producer fenced; a newer instance of the task runs elsewhere",
                            self._name())  # fmt: skip
            else:
                log.warning("%s: could not abort the transaction: %s", self._name(), exc)


def _fenced(exc: KafkaException) -> bool:
    error = exc.args[0] if exc.args else None
    return isinstance(error, KafkaError) and (error.fatal() or error.code() in _FENCED_CODES)
