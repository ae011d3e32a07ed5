"""The sink lease: records of assigned partitions go to one ``SinkTask`` instance.

Kafka's ``WorkerSinkTask`` for one lease: the consumer is ``assign()``\\ ed (never
subscribed: no group rebalance) at the lease's start offsets; the task is created,
``initialize``\\ d, ``start``\\ ed and ``open``\\ ed on the partitions; each consumed batch is
converted (key, value, headers), transformed and ``put``; at the end ``pre_commit`` (by
default ``flush``) says which offsets (last delivered + 1) the driver commits to group
``connect-<name>``; then ``close`` and ``stop``.

The lease ends at ``max_ms``, after ``max_records`` consumed records, when the control channel
says stop, or when the task calls ``context.request_commit()``. When caught up it waits for
data until the deadline, calling ``put([])`` about every 100 ms as Kafka does after an empty
poll.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Sequence
from typing import Any

from confluent_kafka import OFFSET_BEGINNING
from confluent_kafka import TopicPartition as KafkaTopicPartition

from sparkcat.api.errors import RetriableError
from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import SinkTask
from sparkcat.kafka import clients
from sparkcat.runtime.errors.record_paths import BatchFailedError
from sparkcat.runtime.errors.task import TaskErrorHandling
from sparkcat.runtime.metrics import counters as metric_names
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.lease import (
    ControlWatch,
    LeaseResult,
    LeaseSpec,
    load_task_class,
    resolver_for,
)
from sparkcat.runtime.tasks.pipeline import Pipeline, gc_paused, pipeline_for
from sparkcat.runtime.tasks.task_context import WorkerSinkTaskContext

__all__ = ["run_sink_lease"]

log = logging.getLogger(__name__)

_BATCH = 10_000
_WAIT_S = 0.1

Position = tuple[str, int]


def run_sink_lease(spec: LeaseSpec) -> LeaseResult:
    """Run ``spec``'s sink task for one lease (see the module docs). Task failures are
    returned as :attr:`LeaseResult.trace`; framework failures before the task exists raise."""
    started = time.monotonic()
    resolve = resolver_for(spec.worker_config)
    task_class: type[SinkTask] = load_task_class(spec.task_config["task.class"], SinkTask, resolve)
    pipeline = pipeline_for(
        spec.connector, spec.generation, spec.connector_config, spec.worker_config, resolve
    )
    config = clients.consumer_config(
        spec.worker_config,
        spec.connector_config,
        clients.consumer_client_id(spec.connector, spec.task),
        clients.consumer_group_id(spec.connector),
    )
    errors = TaskErrorHandling.for_task(
        spec.connector, spec.task, spec.connector_config, spec.worker_config, sink=True
    )
    cached = client_cache.checkout_consumer(spec.connector, spec.task, config)
    run = _SinkRun(spec, task_class, pipeline, cached, errors)
    try:
        result = run.execute(started)
    except BaseException:
        cached.consumer.close()
        raise
    if run.clean:
        client_cache.checkin_consumer(spec.connector, spec.task, config, cached)
    else:
        cached.consumer.close()
    return result


class _SinkRun:
    """The state of one sink lease."""

    def __init__(
        self,
        spec: LeaseSpec,
        task_class: type[SinkTask],
        pipeline: Pipeline,
        cached: client_cache.CachedConsumer,
        errors: TaskErrorHandling,
    ) -> None:
        self.spec = spec
        self.errors = errors
        self.errant = errors.errant_reporter(pipeline)
        self.task_class = task_class
        self.pipeline = pipeline
        self.cached = cached
        self.consumer = cached.consumer
        self.partitions = [TopicPartition(t, p) for t, p, _ in spec.assignment]
        # Next offset per partition: start offsets, then advanced by each successful put.
        self.start: dict[Position, int | None] = {(t, p): o for t, p, o in spec.assignment}
        self.current: dict[Position, int] = {
            (t, p): o for t, p, o in spec.assignment if o is not None
        }
        self.context = WorkerSinkTaskContext(dict(spec.task_config), self.partitions, self.errant)
        self.task: SinkTask | None = None
        self.opened = False
        self.consumed = 0
        self.put_records = 0
        self.clean = False  # consumer position == self.current at the end
        self.counters = metric_names.new_counters()  # task metrics: updated once per batch

    def execute(self, started: float) -> LeaseResult:
        trace: str | None = None
        offsets: tuple[tuple[str, int, int], ...] = ()
        try:
            self._assign()
            task = self.task_class()
            self.task = task
            task.initialize(self.context)
            task.start(dict(self.spec.task_config))
            task.open(list(self.partitions))
            self.opened = True
            self._apply_requests()
            with gc_paused():
                clean = self._consume_loop(started + self.spec.max_ms / 1000.0)
            self.errors.await_reports()
            offsets = self._pre_commit(task)
            self.clean = clean
        except Exception:
            trace = traceback.format_exc()
            offsets = self._commit_after_failure()
        finally:
            trace = self._finish(trace)
            self.errors.close()
        self.cached.positions = self._end_positions() if self.clean else {}
        return LeaseResult(
            connector=self.spec.connector,
            task=self.spec.task,
            generation=self.spec.generation,
            records=self.put_records,
            polled=self.consumed,
            sink_offsets=offsets,
            trace=trace,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            error_metrics=self.errors.snapshot(),
            task_metrics=self.counters.report(
                True,
                self.consumed,
                self.put_records,
                time.monotonic() - started,
                self._lag_report(offsets),
            ),
        )

    def _lag_report(self, offsets: tuple[tuple[str, int, int], ...]) -> dict[str, float]:
        """Partition count, consumer lag (from the high watermarks the consumer's fetches
        cached: no broker round trip) and whether offsets are left to commit."""
        report = {
            metric_names.REPORT_PARTITIONS: float(len(self.partitions)),
            metric_names.REPORT_COMMIT: 1.0 if offsets else 0.0,
        }
        lags = []
        for (topic, partition), start in self.start.items():
            position = self.current.get((topic, partition), start)
            try:
                _, high = self.consumer.get_watermark_offsets(
                    KafkaTopicPartition(topic, partition), cached=True
                )
            except Exception:  # no fetch yet for the partition: its lag is unknown
                continue
            if position is not None and high is not None and high >= 0:
                lags.append(max(0, high - position))
        if lags:
            report[metric_names.REPORT_LAG_MAX] = float(max(lags))
            report[metric_names.REPORT_LAG] = float(sum(lags))
        return report

    def _commit_after_failure(self) -> tuple[tuple[str, int, int], ...]:
        """After the task failed: the offsets of what was put before (Kafka commits them
        when it closes the failed task's partitions), once their error reports are durable."""
        if self.task is None or not self.opened:
            return ()
        try:
            self.errors.await_reports()
            return self._pre_commit(self.task)
        except Exception:
            log.warning("%s: no offsets committed after the failure", self._name(), exc_info=True)
            return ()

    # ------------------------------------------------------------------- consumer state
    def _end_positions(self) -> dict[Position, int | None]:
        return {tp: self.current.get(tp, start) for tp, start in self.start.items()}

    def _assign(self) -> None:
        """Assign the lease's partitions, unless the cached consumer already sits exactly at
        the start offsets (then its prefetched records are still good)."""
        if self.cached.positions and self.cached.positions == self.start:
            return
        self._reassign({})

    def _reassign(self, overrides: dict[Position, int]) -> None:
        assignment = []
        for tp, start in self.start.items():
            offset = overrides.get(tp, self.current.get(tp, start))
            assignment.append(
                KafkaTopicPartition(tp[0], tp[1], OFFSET_BEGINNING if offset is None else offset)
            )
        self.consumer.assign(assignment)
        self.cached.positions = {}
        paused = self.context.paused
        if paused:
            self.consumer.pause([KafkaTopicPartition(t, p) for t, p in paused])

    def _apply_requests(self) -> None:
        """Apply what the task asked for through its context since the last call."""
        context = self.context
        if context.pending_offsets:
            rewinds = {(tp[0], tp[1]): off for tp, off in context.pending_offsets.items()}
            context.pending_offsets.clear()
            self.current.update(rewinds)
            self._reassign(rewinds)
            context.pause_changed = False
        if context.pause_changed:
            context.pause_changed = False
            paused = context.paused
            running = [tp for tp in self.partitions if tp not in paused]
            if paused:
                self.consumer.pause([KafkaTopicPartition(t, p) for t, p in paused])
            if running:
                self.consumer.resume([KafkaTopicPartition(t, p) for t, p in running])

    # ------------------------------------------------------------------------ the loop
    def _consume_loop(self, deadline: float) -> bool:
        """Consume and put until the lease ends; ``True`` if the consumer's position is
        ``self.current`` at the end (every consumed batch was put)."""
        task = self.task
        assert task is not None
        consume = self.consumer.consume
        to_records = self.pipeline.to_sink_records
        operator = self.errors.operator
        errant = self.errant
        context = self.context
        control = ControlWatch(self.spec.control)
        max_records = self.spec.max_records
        monotonic = time.monotonic
        data_s = self.spec.data_max_ms / 1000.0
        counters = self.counters
        assigned = {(t, p) for t, p, _ in self.spec.assignment}
        single = next(iter(assigned)) if len(assigned) == 1 else None
        while True:
            now = monotonic()
            remaining = max_records - self.consumed
            if (
                now >= deadline
                or remaining <= 0
                or context.commit_requested
                or control.stop_requested(now)
            ):
                return True
            messages = consume(min(_BATCH, remaining), min(_WAIT_S, deadline - now))
            batch_offsets: dict[Position, int] = {}
            if data_s and messages and not self.consumed:
                deadline = min(deadline, now + data_s)
            self.consumed += len(messages)
            if messages:
                counters.batch(len(messages))
            if errant is not None:
                errant.set_batch(messages)
            try:
                records = to_records(messages, batch_offsets, operator, single) if messages else []
            except BatchFailedError as failed:
                # Put what came before the failing record, so its offsets can be committed.
                if self._put(task, failed.records, deadline):
                    self.current.update(batch_offsets)
                    self.put_records += len(failed.records)
                raise
            if not self._put(task, records, deadline):
                return False
            if errant is not None:
                errant.maybe_throw_async_error()
            self.current.update(batch_offsets)
            self.put_records += len(records)
            if context.pending_offsets or context.pause_changed:
                self._apply_requests()

    def _put(self, task: SinkTask, records: Sequence[SinkRecord], deadline: float) -> bool:
        """``put`` with redelivery after ``RetriableError``; ``False`` if the lease ended
        before the batch was accepted (its offsets are then not committed).

        The wait before redelivery is ``context.timeout(ms)`` when the task set one, else the
        backoff of ``RetryWithToleranceOperator`` (300 ms, 600 ms, 1.2 s, ... then random
        below ``errors.retry.delay.max.ms``); redelivery goes on until the lease ends.
        """
        attempt = 0
        counters = self.counters
        while True:
            try:
                started = counters.clock()
                task.put(records)
                if records:
                    counters.call(started)
                return True
            except RetriableError as exc:
                attempt += 1
                timeout_ms = self.context.timeout_ms
                wait = (
                    timeout_ms / 1000.0
                    if timeout_ms > 0
                    else self.errors.operator.backoff_ms(attempt) / 1000.0
                )
                log.info("%s: put failed, retrying in %.3fs: %s", self._name(), wait, exc)
                left = deadline - time.monotonic()
                if left <= wait:
                    return False
                time.sleep(wait)

    def _pre_commit(self, task: SinkTask) -> tuple[tuple[str, int, int], ...]:
        """The offsets ``pre_commit`` approves, limited (as in Kafka) to assigned partitions
        and to no more than what was consumed."""
        current = {TopicPartition(t, p): off for (t, p), off in self.current.items()}
        if not current:
            return ()
        approved = task.pre_commit(current)
        result = []
        for tp, offset in (approved or {}).items():
            key = (tp[0], tp[1])
            consumed = self.current.get(key)
            if consumed is None or offset > consumed:
                log.warning(
                    "%s: ignoring offset %s for %s from pre_commit: ahead of the consumed "
                    "position or for an unassigned partition",
                    self._name(),
                    offset,
                    TopicPartition(*key),
                )
                continue
            result.append((key[0], key[1], int(offset)))
        return tuple(sorted(result))

    def _finish(self, trace: str | None) -> str | None:
        """``close`` (if opened) and ``stop``; the first failure becomes the trace."""
        task = self.task
        if task is None:
            return trace
        steps: list[tuple[str, Any]] = [("stop", task.stop)]
        if self.opened:
            steps.insert(0, ("close", lambda: task.close(list(self.partitions))))
        for name, step in steps:
            try:
                step()
            except Exception:
                if trace is None:
                    trace = traceback.format_exc()
                else:
                    log.warning("%s: %s failed", self._name(), name, exc_info=True)
        if self.context.paused:
            self.clean = False  # a new task must start with every partition running
        return trace

    def _name(self) -> str:
        return f"{self.spec.connector}-{self.spec.task}"
