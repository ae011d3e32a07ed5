"""One connector's data plane in the worker's main process: its lease rounds and commits.

Life of a lease round: the connector issues one lease per runnable task to the worker's task
hosts (:mod:`sparkcat.engine.task_hosts`), Spark tasks that run many connectors' leases at
once; each result comes back as soon as its lease ends and is committed at once (source
offsets to the offset store, sink offsets to group ``connect-<name>``) and reported (statuses,
metrics, topics). When every lease of the round has reported, the next round is issued. A
round is only issued from a result or from :meth:`ConnectorQuery.tick`, never while one is in
flight, so a connector never has two leases of the same task running at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.sink_positions import SinkPositions
from sparkcat.engine.task_hosts import TaskHosts
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.metrics.counters import REPORT_COMMIT, REPORT_COMMIT_S
from sparkcat.runtime.stores import connector_offsets
from sparkcat.runtime.stores.offsets import OffsetStore
from sparkcat.runtime.tasks import exactly_once
from sparkcat.runtime.tasks.exactly_once.offsets_writer import after_transaction, settle_committed
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec
from sparkcat.runtime.tasks.task_context import partition_key
from sparkcat.runtime.worker_config import MAX_BATCH_RECORDS_DEFAULT

log = logging.getLogger(__name__)

# A task whose lease was lost (its host died) this many times in a row is FAILED.
LOST_LEASES = 3

RUNNING = "running"
PAUSED = "paused"
STOPPING = "stopping"


@dataclass(frozen=True, slots=True)
class LeaseBounds:
    """How long and how large one lease may get (see :func:`lease_bounds`)."""

    max_ms: int
    idle_max_ms: int
    max_records: int


def _setting(
    key: str, connector: Mapping[str, str], worker: Mapping[str, str], default: int
) -> int:
    raw = connector.get(key) or worker.get(key)
    return int(raw) if raw else default


def lease_bounds(connector: Mapping[str, str], worker: Mapping[str, str]) -> LeaseBounds:
    """Lease bounds from the connector config, else the worker config, else defaults.

    A lease with data lasts up to ``max.batch.ms`` (5 s: the fixed cost of a lease, a task
    start and stop and a commit, is then small) or ``max.batch.records``. An idle lease doubles in
    length up to ``offset.flush.interval.ms`` (at most 60 s), so idle connectors cost little
    CPU; once a record arrives, such a lease ends ``max.batch.ms`` after it
    (``LeaseSpec.data_max_ms``): its commit, and the flush of a sink that buffers until
    ``flush`` (FileStreamSink does), then wait no longer than in a busy connector. Leases
    stretch only while every task of the round is idle (a round lasts as long as its
    longest lease).
    """
    max_ms = _setting("max.batch.ms", connector, worker, 5000)
    flush_ms = _setting("offset.flush.interval.ms", connector, worker, 60000)
    return LeaseBounds(
        max_ms=max_ms,
        idle_max_ms=max(max_ms, min(flush_ms, 60000)),
        max_records=_setting("max.batch.records", connector, worker, MAX_BATCH_RECORDS_DEFAULT),
    )


def batch_max_ms(bounds: LeaseBounds, idle_streaks: list[int]) -> int:
    """The ``max_ms`` of every lease of one round, given each task's count of idle leases in
    a row: doubled per idle lease, up to ``idle_max_ms``, only while *every* task is idle. A
    round ends when its last lease does, so one finished task must not pace the busy ones at
    ``offset.flush.interval.ms`` per round (as a task that failed over next to a finished one
    would be)."""
    idle = min(idle_streaks, default=0)
    return min(bounds.max_ms << min(idle, 8), bounds.idle_max_ms)


class ConnectorQuery:
    """The data plane of one connector: its lease rounds and its offset commits."""

    def __init__(
        self,
        hosts: TaskHosts,
        plan: ConnectorPlan,
        listener: EngineListener,
        worker_config: Mapping[str, str],
        offset_store: OffsetStore,
        control: ControlServer,
    ) -> None:
        self.name = plan.name
        self.kind = plan.kind
        self._hosts = hosts
        self._listener = listener
        self._worker = {k: v for k, v in worker_config.items() if not k.startswith("spark.")}
        self._worker_offsets = offset_store
        self._offsets = offset_store  # the connector's own store once started (KIP-618)
        self._exactly_once = plan.kind == "source" and exactly_once.enabled(worker_config)
        self._control = control
        self._channel = control.open_channel("run")
        # Leases carry the address of the channel's current issue: a lease of an earlier one
        # (a Spark retry of a lease issued before this worker's tasks changed) is told
        # "stale" and ends without writing (see sparkcat.runtime.tasks.control).
        self._lease_address = control.new_issue(self._channel)
        self._lock = threading.Condition()
        self._plan = plan
        self._bounds = lease_bounds(plan.connector_config, worker_config)
        self._state = PAUSED if plan.paused else RUNNING
        self._failed: set[int] = set()
        self._idle_streak: dict[int, int] = {}
        self._lost_streak: dict[int, int] = {}
        self._issued = 0
        self._round: dict[str, int] = {}  # lease id -> task, of the round in flight
        # Exactly-once: the offsets this query's leases committed, by partition key. Leases
        # start from these, not from the store's view: its read_committed reader can lag
        # behind them and, catching up, go through older values of the same keys.
        self._committed: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._issued_at = 0.0
        self._next_tick = 0.0
        self._sink = (
            SinkPositions(plan.name, plan.connector_config, self._worker)
            if plan.kind == "sink"
            else None
        )
        self._closing = threading.Event()
        # No lease before start() has read the offsets (and opened the connector's own
        # offsets topic): the ticker sees this connector as soon as it is registered.
        self._started = False
        self.failure: str | None = None  # never set: a lost lease fails its task, not this

    # -- lifecycle (herder side) ---------------------------------------------------------

    def start(self) -> None:
        """Read the offsets to the end and issue the first round (on the engine's starter
        thread; a connector stopped before it ran is left alone)."""
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
            self._started = True
            self._issue_locked()
        if self._state == PAUSED:
            self._report_paused()

    def wait_started(self, timeout_s: float) -> None:
        """Nothing to wait for: leases run on the worker's task hosts."""
        return None

    def replace_plan(self, plan: ConnectorPlan, timeout_s: float) -> None:
        """New task configs: end the in-flight round (abandoned if it does not end within
        ``timeout_s``), then run the new generation."""
        self._end_in_flight(timeout_s)
        with self._lock:
            self._plan = plan
            self._bounds = lease_bounds(plan.connector_config, self._worker)
            self._failed.clear()
            self._idle_streak.clear()
            self._lost_streak.clear()
            self._state = PAUSED if plan.paused else RUNNING
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
            self._state = PAUSED
        self._control.set_state(self._channel, "pause")
        self._report_paused()

    def resume(self, timeout_s: float = 0.0) -> None:
        """Run again. A lease told to pause that is still in flight is stuck (a pause ends a
        healthy one within a second): it gets ``timeout_s`` more, then is abandoned, so a
        task that hung while paused does not hold its connector back after the resume."""
        with self._lock:
            in_flight = bool(self._round)
        if in_flight and timeout_s > 0:
            self._end_in_flight(timeout_s)
        self._control.set_state(self._channel, "run")
        with self._lock:
            self._state = RUNNING
            if not self._round:
                self._issue_locked()
        for task in self._runnable():
            self._listener.on_task_running(self.name, task)

    def restart_tasks(self, tasks: list[int], timeout_s: float) -> None:
        """Run ``tasks`` again: running instances' lease ends first (abandoned if it does not
        end within ``timeout_s``, as Kafka abandons a task that does not stop in time)."""
        with self._lock:
            state = self._state
            running = bool(set(tasks) & set(self._round.values()))
        if running:
            self._end_in_flight(timeout_s)
            with self._lock:
                self._lease_address = self._control.new_issue(self._channel)
            self._control.set_state(self._channel, "run" if state == RUNNING else "pause")
        with self._lock:
            self._state = state
            for task in tasks:
                self._failed.discard(task)
                self._idle_streak.pop(task, None)
                self._lost_streak.pop(task, None)
            if not self._round:
                self._issue_locked()

    def stop(self, timeout_s: float) -> None:
        """Graceful stop: the in-flight leases end early and commit; a lease still running
        after ``timeout_s`` is abandoned (its result is discarded if it ever comes)."""
        self._closing.set()
        self._quiesce("stop", timeout_s, final=True)
        with self._lock:
            stuck = self._take_stuck_locked()
        if stuck:
            self._report_abandoned(sorted(set(stuck.values())), timeout_s)
            self._hosts.forget(list(stuck))
        self._control.close_channel(self._channel)
        self._close_own_offsets()
        if self._sink is not None:
            self._sink.close()

    def tick(self) -> None:
        """Called every TICK_S by the engine: about once a second (more often while a sink
        waits for its topic to appear), issue a round if one is due and none is in flight."""
        with self._lock:
            if self._round or self._closing.is_set():
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
            self._state = STOPPING if final else PAUSED
        self._control.set_state(self._channel, word)
        deadline = time.monotonic() + timeout_s
        with self._lock:
            for lease_id in self._hosts.withdraw(list(self._round)):
                del self._round[lease_id]
            while self._round:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(min(remaining, 0.5))

    def _take_stuck_locked(self) -> dict[str, int]:
        """The leases still in flight after they were told to end; the round is dropped."""
        stuck, self._round = self._round, {}
        self._lock.notify_all()
        return stuck

    def _end_in_flight(self, timeout_s: float) -> None:
        """Tell the in-flight leases to end; those that have not within ``timeout_s`` (a task
        stuck in ``poll()``/``put()``) are abandoned: their results are discarded if they
        ever come, and a new issue of the control channel tells them they are stale. Under
        exactly-once the next lease's ``init_transactions()`` fences whatever an abandoned
        one left open, so nothing it produces later commits."""
        self._quiesce("stop", timeout_s)
        with self._lock:
            stuck = self._take_stuck_locked()
            if stuck:
                self._lease_address = self._control.new_issue(self._channel)
        if stuck:
            self._report_abandoned(sorted(set(stuck.values())), timeout_s)
            self._hosts.forget(list(stuck))

    def _report_abandoned(self, tasks: list[int], timeout_s: float) -> None:
        log.warning(
            "Tasks %s of %s did not stop within %.1f s (task.shutdown.graceful.timeout.ms): "
            "abandoned (their threads are left to end on their own, their results discarded)",
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
        self._committed.clear()
        read = getattr(self._offsets, "read_to_end", None)
        if read is None:
            return
        try:
            read(30.0)
        except Exception as exc:
            log.warning("Could not read the offsets of %s to the end: %s", self.name, exc)
        if self._exactly_once:
            try:
                corrected = settle_committed(self._offsets, self._worker, self.name)
            except Exception as exc:  # a broker that resolves transactions needs none of it
                log.warning("Could not check the offsets of %s for uncommitted transactions: "
                            "%s", self.name, exc)  # fmt: skip
            else:
                if corrected:
                    log.info(
                        "%s: %d source offset(s) were read from transactions that did not "
                        "commit or not read yet; their latest committed values are used",
                        self.name, corrected,
                    )  # fmt: skip

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
            known: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] = {
                partition_key(p): (p, o) for p, o in self._offsets.get_all(self.name)
            }
            known.update(self._committed)
            source_offsets = tuple((p, o) for p, o in known.values() if o is not None)
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
        """Issue a round (one lease per runnable task) if the connector runs and none is in
        flight."""
        if self._round or self._state != RUNNING or self._closing.is_set() or not self._started:
            return
        specs = self._specs_locked()
        if not specs:
            return
        self._issued += 1
        self._issued_at = time.monotonic()
        for spec in specs:
            lease_id = self._hosts.submit(spec, self._on_result)
            self._round[lease_id] = spec.task

    def _report_paused(self) -> None:
        for task in self._plan.task_ids():
            if task not in self._failed:
                self._listener.on_task_paused(self.name, task)

    def _on_result(self, lease_id: str, result: LeaseResult | None) -> None:
        """One lease's result (``None``: its host was lost), on the task hosts' thread pool."""
        events: list[tuple[Any, ...]] = []
        with self._lock:
            task = self._round.pop(lease_id, None)
            if task is None:
                return  # abandoned meanwhile: its result is discarded
            if result is None:
                self._lost_locked(task, events)
            else:
                if log.isEnabledFor(logging.DEBUG):
                    log.debug(
                        "%s lease %d task %s: polled %s, records %s, lease %s ms of %.0f ms "
                        "issued-to-result",
                        self.name, self._issued, task, result.polled, result.records,
                        result.elapsed_ms, (time.monotonic() - self._issued_at) * 1000,
                    )  # fmt: skip
                self._apply_result(result, events)
            if not self._round:
                self._issue_locked()
                self._lock.notify_all()
        # The listener (the herder) takes its own lock and calls into this object while holding
        # it: call it only after ours is released.
        for callback, *args in events:
            callback(*args)

    def _lost_locked(self, task: int, events: list[tuple[Any, ...]]) -> None:
        lost = self._lost_streak.get(task, 0) + 1
        self._lost_streak[task] = lost
        if lost < LOST_LEASES:
            return  # issued again with the next round, from the committed offsets
        self._failed.add(task)
        trace = (
            f"org.apache.kafka.connect.errors.ConnectException: the lease of task {task} was "
            f"lost {lost} times in a row: the Spark task hosting it died or stopped answering "
            "(see the worker log and the Spark UI)"
        )
        events.append((self._listener.on_task_failed, self.name, task, trace))

    def _apply_result(self, result: LeaseResult, events: list[tuple[Any, ...]]) -> None:
        task = result.task
        if result.generation != self._plan.generation:
            return  # a lease of task configs that were replaced meanwhile: nothing to commit
        self._lost_streak.pop(task, None)
        commit_started = time.perf_counter()
        if self._plan.kind == "source":
            if result.source_offsets:
                self._commit_source_offsets(list(result.source_offsets))
            topics = list(result.topics)
        else:
            if self._sink is not None:
                self._sink.commit(list(result.sink_offsets))
            topics = sorted({t for t, _, _ in result.sink_offsets})
        commit_s = time.perf_counter() - commit_started
        on_lease_metrics = getattr(self._listener, "on_lease_metrics", None)
        if on_lease_metrics is not None and result.task_metrics:
            report = dict(result.task_metrics)
            if report.get(REPORT_COMMIT):
                report[REPORT_COMMIT_S] = commit_s
            events.append((on_lease_metrics, self.name, task, report))
        on_topics = getattr(self._listener, "on_topics", None)
        if topics and on_topics is not None:
            events.append((on_topics, self.name, task, topics))
        self._idle_streak[task] = 0 if result.polled else self._idle_streak.get(task, 0) + 1
        if result.records:
            events.append((self._listener.on_records, self.name, task, int(result.records)))
        on_task_metrics = getattr(self._listener, "on_task_metrics", None)
        if on_task_metrics is not None and result.error_metrics:
            events.append((on_task_metrics, self.name, task, dict(result.error_metrics)))
        if result.trace:
            self._failed.add(task)
            events.append((self._listener.on_task_failed, self.name, task, result.trace))
        elif self._state == RUNNING:
            events.append((self._listener.on_task_running, self.name, task))

    def _commit_source_offsets(self, pairs: list[tuple[Any, Any]]) -> None:
        if self._exactly_once:
            # The lease committed these in its own transactions (KIP-618): a write from here
            # would put them in the primary topic a second time, outside any transaction.
            after_transaction(self._offsets, self.name, pairs)
            self._committed.update((partition_key(p), (dict(p), o)) for p, o in pairs)
            return
        self._offsets.put_batch(self.name, pairs)
        self._offsets.flush()
