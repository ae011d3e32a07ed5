"""One connector's streaming query, steered by the worker's main process.

Life of a lease: the main process writes lease ``n`` into the connector's plan file; Spark's
reader sees it in ``latestOffset`` and plans one partition per runnable task; executors run
the leases; ``foreachBatch`` (this module, in the main process) collects one result row per
task, commits their offsets, reports statuses, and issues lease ``n + 1``. A new lease is only
issued from ``foreachBatch`` or :meth:`ConnectorQuery.tick`, never while one is in flight, so a
connector never has two leases of the same task running at once.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from sparkcat.engine import plan as plan_files
from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.datasource import FORMAT
from sparkcat.engine.session import POOL
from sparkcat.engine.sink_positions import SinkPositions
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.metrics.counters import REPORT_COMMIT, REPORT_COMMIT_S
from sparkcat.runtime.stores import connector_offsets
from sparkcat.runtime.stores.offsets import OffsetStore
from sparkcat.runtime.tasks import exactly_once
from sparkcat.runtime.tasks.exactly_once.offsets_writer import after_transaction
from sparkcat.runtime.tasks.lease import LeaseSpec
from sparkcat.runtime.worker_config import MAX_BATCH_RECORDS_DEFAULT

log = logging.getLogger(__name__)

# How often a query that died is started again before its connector's tasks are FAILED.
QUERY_RESTARTS = 3


@dataclass(frozen=True, slots=True)
class LeaseBounds:
    """How long and how large one lease may get (see :func:`lease_bounds`)."""

    max_ms: int
    idle_max_ms: int
    max_records: int
    trigger_ms: int


def _setting(
    key: str, connector: Mapping[str, str], worker: Mapping[str, str], default: int
) -> int:
    raw = connector.get(key) or worker.get(key)
    return int(raw) if raw else default


def lease_bounds(connector: Mapping[str, str], worker: Mapping[str, str]) -> LeaseBounds:
    """Lease bounds from the connector config, else the worker config, else defaults.

    A lease with data lasts up to ``max.batch.ms`` (5 s: the ~0.3 CPU-s fixed cost of a
    micro-batch is then a few percent) or ``max.batch.records``. An idle lease doubles in
    length up to ``offset.flush.interval.ms`` (at most 60 s), so idle connectors cost little
    CPU; once a record arrives, such a lease ends ``max.batch.ms`` after it
    (``LeaseSpec.data_max_ms``): its commit, and the flush of a sink that buffers until
    ``flush`` (FileStreamSink does), then wait no longer than in a busy connector. Leases
    stretch only while every task of the micro-batch is idle (a batch lasts as long as its
    longest lease).
    """
    max_ms = _setting("max.batch.ms", connector, worker, 5000)
    flush_ms = _setting("offset.flush.interval.ms", connector, worker, 60000)
    return LeaseBounds(
        max_ms=max_ms,
        idle_max_ms=max(max_ms, min(flush_ms, 60000)),
        max_records=_setting("max.batch.records", connector, worker, MAX_BATCH_RECORDS_DEFAULT),
        trigger_ms=_setting("sparkcat.trigger.interval.ms", connector, worker, 1000),
    )


def batch_max_ms(bounds: LeaseBounds, idle_streaks: list[int]) -> int:
    """The ``max_ms`` of every lease of one micro-batch, given each task's count of idle
    leases in a row: doubled per idle lease, up to ``idle_max_ms``, only while *every* task
    is idle. A micro-batch ends when its last lease does, so one finished task must not pace
    the busy ones at ``offset.flush.interval.ms`` per batch (as a task that failed over next
    to a finished one would be)."""
    idle = min(idle_streaks, default=0)
    return min(bounds.max_ms << min(idle, 8), bounds.idle_max_ms)


class ConnectorQuery:
    """The data plane of one connector: its plan file, its query, and its offset commits."""

    def __init__(
        self,
        session: SparkSession,
        plan: ConnectorPlan,
        listener: EngineListener,
        worker_config: Mapping[str, str],
        offset_store: OffsetStore,
        state_dir: Path,
        control: ControlServer,
    ) -> None:
        self.name = plan.name
        self.kind = plan.kind
        self._session = session
        self._listener = listener
        self._worker = {k: v for k, v in worker_config.items() if not k.startswith("spark.")}
        self._worker_offsets = offset_store
        self._offsets = offset_store  # the connector's own store once started (KIP-618)
        self._exactly_once = plan.kind == "source" and exactly_once.enabled(worker_config)
        self._plan_path = plan_files.plan_path(state_dir, plan.name)
        self._control = control
        self._channel = control.open_channel("run")
        # Leases carry the address of the channel's current issue: a lease of an earlier one
        # (a Spark retry of a lease issued before this worker's tasks changed) is told
        # "stale" and ends without writing (see sparkcat.runtime.tasks.control).
        self._lease_address = control.new_issue(self._channel)
        self._lock = threading.Condition()
        self._plan = plan
        self._bounds = lease_bounds(plan.connector_config, worker_config)
        self._state = plan_files.PAUSED if plan.paused else plan_files.RUNNING
        self._failed: set[int] = set()
        self._idle_streak: dict[int, int] = {}
        self._issued = 0
        self._completed = 0
        self._in_flight = False
        self._in_flight_tasks: list[int] = []
        self._issued_at = 0.0
        self._next_tick = 0.0
        self._sink = (
            SinkPositions(plan.name, plan.connector_config, self._worker)
            if plan.kind == "sink"
            else None
        )
        self._query: StreamingQuery | None = None
        self._checkpoint = tempfile.mkdtemp(prefix="sparkcat-ckpt-")
        self._closing = threading.Event()
        self._restarts = 0  # query restarts since the last completed batch
        self.failure: str | None = None

    # -- lifecycle (herder side) ---------------------------------------------------------

    def start(self) -> None:
        """Issue the first lease and start the query (slow: Spark starts Python processes).

        Called on the engine's starter thread; a connector stopped before it ran is left
        alone."""
        if self.kind == "source":
            self._offsets = connector_offsets.for_connector(
                self._worker_offsets, self._worker, self._plan.connector_config
            )
            self._read_offsets_to_end()
        with self._lock:
            if self._closing.is_set():
                self._close_own_offsets()
                return
            self._control.set_state(self._channel, "run")
            self._issue_locked()
        if not self._launch():
            return
        threading.Thread(target=self._watch, name=f"watch-{self.name}", daemon=True).start()
        if self._state == plan_files.PAUSED:
            self._report_paused()

    def _launch(self) -> bool:
        """Start a streaming query for this connector; ``False`` (and no query left running)
        if the connector is being stopped meanwhile."""
        self._session.sparkContext.setLocalProperty("spark.scheduler.pool", POOL)
        query = (
            self._session.readStream.format(FORMAT)
            .option("plan", str(self._plan_path))
            .load()
            .writeStream.queryName(f"sparkcat-{self.name}")
            .foreachBatch(self._on_batch)
            .trigger(processingTime=f"{self._bounds.trigger_ms} milliseconds")
            .option("checkpointLocation", self._checkpoint)
            .start()
        )
        with self._lock:  # stop() reads _query under this lock once _closing is set
            if not self._closing.is_set():
                self._query = query
                return True
        query.stop()
        return False

    def wait_started(self, timeout_s: float) -> None:
        """Wait until the query's source is up (its driver-side Python runner connected).

        Spark gives a starting Python process 10 s to connect back, so the engine starts
        queries one after another: several Python runners starting at once on a busy
        machine miss that deadline and the query dies before its first batch.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self._closing.is_set():
            query = self._query
            if query is None or not query.isActive:
                return
            if query.status.get("message") != "Initializing sources":
                return
            time.sleep(0.05)

    def replace_plan(self, plan: ConnectorPlan, timeout_s: float) -> None:
        """New task configs: end the in-flight lease (abandoned if it does not end within
        ``timeout_s``), then run the new generation."""
        self._end_in_flight(timeout_s)
        with self._lock:
            self._plan = plan
            self._bounds = lease_bounds(plan.connector_config, self._worker)
            self._failed.clear()
            self._idle_streak.clear()
            self._state = plan_files.PAUSED if plan.paused else plan_files.RUNNING
            self._lease_address = self._control.new_issue(self._channel)
        if self.kind == "source":
            self._read_offsets_to_end()  # tasks that moved here resume where they ended
        self._control.set_state(self._channel, "run")
        with self._lock:
            self._issue_locked()
        if plan.paused:
            self._report_paused()

    def pause(self) -> None:
        with self._lock:
            self._state = plan_files.PAUSED
            self._write_plan_locked()
        self._control.set_state(self._channel, "pause")
        self._report_paused()

    def resume(self, timeout_s: float = 0.0) -> None:
        """Run again. A lease told to pause that is still in flight is stuck (a pause ends a
        healthy one within a second): it gets ``timeout_s`` more, then is abandoned, so a
        task that hung while paused does not hold its connector back after the resume."""
        with self._lock:
            in_flight = self._in_flight
        if in_flight and timeout_s > 0:
            self._end_in_flight(timeout_s)
        self._control.set_state(self._channel, "run")
        with self._lock:
            self._state = plan_files.RUNNING
            self._issue_locked()
        for task in self._runnable():
            self._listener.on_task_running(self.name, task)

    def restart_tasks(self, tasks: list[int], timeout_s: float) -> None:
        """Run ``tasks`` again: running instances' lease ends first (abandoned if it does not
        end within ``timeout_s``, as Kafka abandons a task that does not stop in time)."""
        with self._lock:
            state = self._state
            running = self._in_flight and bool(set(tasks) & set(self._in_flight_tasks))
        if running:
            self._end_in_flight(timeout_s)
            with self._lock:
                self._lease_address = self._control.new_issue(self._channel)
            word = "run" if state == plan_files.RUNNING else "pause"
            self._control.set_state(self._channel, word)
        with self._lock:
            self._state = state
            for task in tasks:
                self._failed.discard(task)
                self._idle_streak.pop(task, None)
            self._issue_locked()

    def stop(self, timeout_s: float) -> None:
        """Graceful stop: the in-flight lease ends early and commits, then the query stops."""
        self._closing.set()
        self._quiesce("stop", timeout_s, final=True)
        with self._lock:  # not while _watch restarts it: see _restart_query
            query = self._query
            stuck = self._stuck_locked()
        if stuck:  # query.stop() kills its Spark tasks: the lease is abandoned
            self._report_abandoned(stuck, timeout_s)
        if query is not None:
            try:
                query.stop()
            except Exception:  # stopping a failed query may raise its error again
                log.debug("Stopping the query of %s raised", self.name, exc_info=True)
        self._control.close_channel(self._channel)
        self._close_own_offsets()
        if self._sink is not None:
            self._sink.close()
        shutil.rmtree(self._checkpoint, ignore_errors=True)

    def tick(self) -> None:
        """Called every TICK_S by the engine: about once a second (more often while a sink
        waits for its topic to appear), issue a lease if one is due and none is in flight."""
        with self._lock:
            if self._in_flight:
                return
            now = time.monotonic()
            if now < self._next_tick:
                return
            sink = self._sink
            waiting = sink is not None and sink.empty  # a sink whose topic does not exist yet
            self._next_tick = now + (sink.refresh_interval(now) if sink and waiting else 1.0)
            self._issue_locked()

    # -- internals -----------------------------------------------------------------------

    def _quiesce(self, word: str, timeout_s: float, final: bool = False) -> None:
        with self._lock:
            self._state = plan_files.STOPPING if final else plan_files.PAUSED
            self._write_plan_locked()
        self._control.set_state(self._channel, word)
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._in_flight and self.failure is None and self._query_active():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(min(remaining, 0.5))

    def _stuck_locked(self) -> list[int]:
        """The tasks of a lease still in flight after it was told to end (none if none)."""
        if self._in_flight and self.failure is None and self._query_active():
            return list(self._in_flight_tasks)
        return []

    def _end_in_flight(self, timeout_s: float) -> None:
        """Tell the in-flight lease to end; if it has not within ``timeout_s`` (a task stuck in
        ``poll()``/``put()``), abandon it: stop the query, which kills its Spark tasks, so its
        results are never committed, and start a fresh one. Under exactly-once the next
        lease's ``init_transactions()`` fences whatever the killed one left open."""
        self._quiesce("stop", timeout_s)
        with self._lock:
            stuck = self._stuck_locked()
            query = self._query
            if not stuck or query is None:
                return
            self._query = None  # its watcher then leaves it alone (see _watch)
        self._report_abandoned(stuck, timeout_s)
        try:
            query.stop()
        except Exception:  # a stopped query may raise the error its killed tasks left
            log.debug("Stopping the query of %s raised", self.name, exc_info=True)
        with self._lock:
            self._in_flight = False
            self._lock.notify_all()
            shutil.rmtree(self._checkpoint, ignore_errors=True)
            # A fresh checkpoint: the old one may hold the abandoned batch, planned but not
            # committed, which a query resuming from it would run again.
            self._checkpoint = tempfile.mkdtemp(prefix="sparkcat-ckpt-")
        if self._launch():
            threading.Thread(target=self._watch, name=f"watch-{self.name}", daemon=True).start()

    def _report_abandoned(self, tasks: list[int], timeout_s: float) -> None:
        log.warning(
            "Tasks %s of %s did not stop within %.1f s (task.shutdown.graceful.timeout.ms): "
            "abandoned (their Spark tasks are killed, their results discarded)",
            tasks, self.name, timeout_s,
        )  # fmt: skip
        on_abandoned = getattr(self._listener, "on_tasks_abandoned", None)
        if on_abandoned is not None:
            on_abandoned(self.name, tasks)

    def _close_own_offsets(self) -> None:
        """Close the connector's own offsets store (the worker's is shared)."""
        own, self._offsets = self._offsets, self._worker_offsets
        if own is not self._worker_offsets:
            own.close()

    def _read_offsets_to_end(self) -> None:
        """Read what other workers committed (a task that moved here, or whose previous
        instance died, must start from its last committed offsets, not a lagging view)."""
        read = getattr(self._offsets, "read_to_end", None)
        if read is None:
            return
        try:
            read(30.0)
        except Exception as exc:
            log.warning("Could not read the offsets of %s to the end: %s", self.name, exc)

    def _query_active(self) -> bool:
        return self._query is not None and self._query.isActive

    def _runnable(self) -> list[int]:
        return [t for t in self._plan.task_ids() if t not in self._failed]

    def _specs_locked(self) -> list[LeaseSpec]:
        tasks = self._runnable()
        if self._sink is not None:
            self._sink.refresh()
            per_task = self._sink.assignment(len(self._plan.task_configs))
            tasks = [t for t in tasks if per_task[t]]
        source_offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()
        if self._plan.kind == "source":
            source_offsets = tuple(
                (p, o) for p, o in self._offsets.get_all(self.name) if o is not None
            )
        max_ms = batch_max_ms(self._bounds, [self._idle_streak.get(task, 0) for task in tasks])
        specs = []
        for task in tasks:
            specs.append(
                LeaseSpec(
                    connector=self.name,
                    task=task,
                    generation=self._plan.generation,
                    kind=self._plan.kind,
                    task_config=dict(self._plan.task_configs[task]),
                    connector_config=dict(self._plan.connector_config),
                    worker_config=dict(self._worker),
                    max_ms=max_ms,
                    max_records=self._bounds.max_records,
                    control=self._lease_address,
                    source_offsets=source_offsets,
                    assignment=tuple(per_task[task]) if self._sink is not None else (),
                    data_max_ms=self._bounds.max_ms if max_ms > self._bounds.max_ms else 0,
                )
            )
        return specs

    def _issue_locked(self) -> None:
        """Write lease n+1 if the connector runs and has runnable tasks, else refresh state."""
        specs = self._specs_locked() if self._state == plan_files.RUNNING else []
        if specs:
            self._issued += 1
            self._in_flight = True
            self._in_flight_tasks = [spec.task for spec in specs]
            self._issued_at = time.monotonic()
        plan_files.write_plan(self._plan_path, self._issued, self._state, specs)

    def _write_plan_locked(self) -> None:
        plan_files.write_plan(self._plan_path, self._issued, self._state, [])

    def _report_paused(self) -> None:
        for task in self._plan.task_ids():
            if task not in self._failed:
                self._listener.on_task_paused(self.name, task)

    def _on_batch(self, batch: DataFrame, batch_id: int) -> None:
        rows = batch.collect()
        if log.isEnabledFor(logging.DEBUG):
            round_trip_ms = (time.monotonic() - self._issued_at) * 1000
            for row in rows:
                log.debug(
                    "%s lease %d task %s: polled %s, records %s, lease %s ms of %.0f ms "
                    "issued-to-result",
                    self.name, self._issued, row.task, row.polled, row.records,
                    row.elapsed_ms, round_trip_ms,
                )  # fmt: skip
        events: list[tuple[Any, ...]] = []
        try:
            with self._lock:
                for row in rows:
                    self._apply_result(row, events)
        finally:
            with self._lock:
                self._restarts = 0
                self._completed = self._issued
                self._in_flight = False
                if self._state == plan_files.RUNNING:
                    self._issue_locked()
                self._lock.notify_all()
        # The listener (the herder) takes its own lock and calls into this object while holding
        # it: call it only after ours is released.
        for callback, *args in events:
            callback(*args)

    def _apply_result(self, row: Any, events: list[tuple[Any, ...]]) -> None:
        task = int(row.task)
        if int(row.generation) != self._plan.generation:
            return  # a lease of task configs that were replaced meanwhile: nothing to commit
        commit_started = time.perf_counter()
        if self._plan.kind == "source":
            offsets = orjson.loads(row.source_offsets)
            if offsets:
                self._commit_source_offsets([(p, o) for p, o in offsets])
            topics = orjson.loads(row.topics)
        else:
            sink_offsets = [(t, int(p), int(o)) for t, p, o in orjson.loads(row.sink_offsets)]
            if self._sink is not None:
                self._sink.commit(sink_offsets)
            topics = sorted({t for t, _, _ in sink_offsets})
        commit_s = time.perf_counter() - commit_started
        on_lease_metrics = getattr(self._listener, "on_lease_metrics", None)
        task_metrics = getattr(row, "task_metrics", None)
        if on_lease_metrics is not None and task_metrics and task_metrics != "{}":
            report = orjson.loads(task_metrics)
            if report.get(REPORT_COMMIT):
                report[REPORT_COMMIT_S] = commit_s
            events.append((on_lease_metrics, self.name, task, report))
        on_topics = getattr(self._listener, "on_topics", None)
        if topics and on_topics is not None:
            events.append((on_topics, self.name, task, topics))
        self._idle_streak[task] = 0 if row.polled else self._idle_streak.get(task, 0) + 1
        if row.records:
            events.append((self._listener.on_records, self.name, task, int(row.records)))
        on_task_metrics = getattr(self._listener, "on_task_metrics", None)
        if on_task_metrics is not None and row.error_metrics and row.error_metrics != "{}":
            events.append((on_task_metrics, self.name, task, orjson.loads(row.error_metrics)))
        if row.trace:
            self._failed.add(task)
            events.append((self._listener.on_task_failed, self.name, task, row.trace))
        elif self._state == plan_files.RUNNING:
            events.append((self._listener.on_task_running, self.name, task))

    def _commit_source_offsets(self, pairs: list[tuple[Any, Any]]) -> None:
        if self._exactly_once:
            # The lease committed these in its own transactions (KIP-618): a write from here
            # would put them in the primary topic a second time, outside any transaction.
            after_transaction(self._offsets, self.name, pairs)
            return
        self._offsets.put_batch(self.name, pairs)
        self._offsets.flush()

    def _watch(self) -> None:
        """Restart a query that died, up to QUERY_RESTARTS times without a batch completing
        in between; then report it (an executor-side error outside a task, a crashed JVM)."""
        while True:
            query = self._query
            if query is None:
                return
            try:
                query.awaitTermination()
                return
            except Exception as exc:  # any termination error is the connector's trace
                if query is not self._query:
                    return  # abandoned and replaced (see _end_in_flight): not a failure
                error = str(exc)
            if not self._restart_query(error):
                break
        with self._lock:
            self.failure = error
            self._in_flight = False
            self._lock.notify_all()
        log.error("The query of connector %s failed: %s", self.name, error)
        self._listener.on_connector_failed(self.name, error)

    def _restart_query(self, error: str) -> bool:
        """Start the query again after a pause; ``False`` if it should stay dead.

        Safe because offsets are the truth: the new query re-runs the lease in flight (if
        any) from the offsets it was issued with. Transient failures are what this is for,
        typically a Python process that did not connect back in time on a busy machine.
        """
        with self._lock:
            if self._closing.is_set() or self._restarts >= QUERY_RESTARTS:
                return False
            self._restarts += 1
            attempt = self._restarts
        log.warning(
            "The query of connector %s failed; restarting it (%d of %d): %s",
            self.name,
            attempt,
            QUERY_RESTARTS,
            error.splitlines()[0] if error else "",
        )
        if self._closing.wait(min(2.0 ** (attempt - 1), 10.0)):
            return False
        with self._lock:
            shutil.rmtree(self._checkpoint, ignore_errors=True)
            self._checkpoint = tempfile.mkdtemp(prefix="sparkcat-ckpt-")
        return self._launch()
