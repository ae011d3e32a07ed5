"""The worker's metrics: lease reports added up per task, with Kafka's windowed rates.

:class:`ConnectMetrics` is owned by the herder. Engine callbacks feed it (one lease report per
task per lease, task state changes, error totals); :meth:`ConnectMetrics.collect` turns
it, together with a view of the connectors' current statuses, into :class:`Metric` values of
Kafka Connect's groups (:mod:`.names`). Rates, averages and maxima are windowed as Kafka's
(``metrics.sample.window.ms`` x ``metrics.num.samples``, :mod:`.stats`); totals count since the
worker started. One lock guards it all; every call is a handful of dictionary operations.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sparkcat.runtime.errors.metrics import merge_metrics
from sparkcat.runtime.metrics import counters as c
from sparkcat.runtime.metrics.names import (
    CONNECTOR_GROUP,
    ERROR_GROUP,
    REBALANCE_GROUP,
    SINK_GROUP,
    SOURCE_GROUP,
    TASK_GROUP,
    WORKER_GROUP,
)
from sparkcat.runtime.metrics.stats import MetricConfig, StateTime, Windowed

__all__ = ["ConnectMetrics", "ConnectorView", "Metric"]

Tags = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Metric:
    """One value of group ``group``; ``tags`` are Kafka's (``connector``, ``task``).
    ``status`` metrics carry their (string) value in ``text`` and 1.0 in ``value``."""

    group: str
    name: str
    value: float
    tags: Tags = ()
    text: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectorView:
    """What the herder knows of one connector when metrics are collected."""

    name: str
    kind: str
    connector_class: str
    state: str
    tasks: Mapping[int, str] = field(default_factory=dict)  # task id -> state


class _TaskSensors:
    """The windowed and total values of one task."""

    def __init__(self, config: MetricConfig) -> None:
        self.sink: bool | None = None
        self.records_in = Windowed(config)
        self.records_out = Windowed(config)
        self.batches = Windowed(config)
        self.calls = Windowed(config)
        self.commit_time = Windowed(config)
        self.commits = Windowed(config)
        self.skips = Windowed(config)
        self.lag = Windowed(config)
        self.transactions = Windowed(config)
        self.transactional = False  # an exactly-once source task: transaction-size-* exist
        self.in_total = 0.0
        self.out_total = 0.0
        self.commit_total = 0.0
        self.skip_total = 0.0
        self.partitions = 0.0
        self.last_lag = math.nan
        self.errors: dict[str, float] = {}
        self.state = StateTime(config, "unassigned")

    def add(self, report: Mapping[str, float]) -> None:
        self.sink = bool(report.get(c.REPORT_KIND, 0.0))
        records_in, records_out = report.get(c.REPORT_IN, 0.0), report.get(c.REPORT_OUT, 0.0)
        self.in_total += records_in
        self.out_total += records_out
        self.records_in.record(records_in)
        self.records_out.record(records_out)
        batches = int(report.get(c.REPORT_BATCHES, 0))
        if batches:
            self.batches.record(records_in, batches, report.get(c.REPORT_BATCH_MAX, 0.0))
        calls = int(report.get(c.REPORT_CALLS, 0))
        if calls:
            self.calls.record(
                report.get(c.REPORT_CALL_S, 0.0) * 1000, calls,
                report.get(c.REPORT_CALL_MAX_S, 0.0) * 1000,
            )  # fmt: skip
        if c.REPORT_PARTITIONS in report:
            self.partitions = report[c.REPORT_PARTITIONS]
        if c.REPORT_LAG_MAX in report:
            lag_max = report[c.REPORT_LAG_MAX]
            self.lag.record(lag_max, 1, lag_max)
            self.last_lag = report.get(c.REPORT_LAG, lag_max)
        self._add_commit(report)
        if c.REPORT_TX_COUNT in report:
            self.transactional = True
            count = int(report[c.REPORT_TX_COUNT])
            if count:
                self.transactions.record(
                    report.get(c.REPORT_TX_SIZE, 0.0), count,
                    report.get(c.REPORT_TX_SIZE_MAX), report.get(c.REPORT_TX_SIZE_MIN),
                )  # fmt: skip

    def _add_commit(self, report: Mapping[str, float]) -> None:
        if report.get(c.REPORT_COMMIT, 0.0):
            self.commits.record(1.0)
            self.commit_total += 1
            if c.REPORT_COMMIT_S in report:
                ms = report[c.REPORT_COMMIT_S] * 1000
                self.commit_time.record(ms, 1, ms)
        elif self.sink:
            self.skips.record(1.0)
            self.skip_total += 1


class ConnectMetrics:
    """Kafka Connect's metrics of this worker (see the module docs)."""

    def __init__(self, config: MetricConfig | None = None) -> None:
        self.config = config or MetricConfig()
        self._lock = threading.Lock()
        self._tasks: dict[tuple[str, int], _TaskSensors] = {}
        self._startups = {"connector": [0, 0], "task": [0, 0]}  # [successes, failures]
        self._abandoned = 0  # task instances killed for not stopping in time
        self._rebalance: _Rebalance | None = None

    @classmethod
    def from_worker_config(cls, config: Any) -> ConnectMetrics:
        window, samples = config.get("metrics.sample.window.ms"), config.get("metrics.num.samples")
        window = 30_000 if window is None else int(str(window))
        samples = 2 if samples is None else int(str(samples))
        return cls(MetricConfig(window_ms=window, samples=samples))

    def _task(self, connector: str, task: int) -> _TaskSensors:
        sensors = self._tasks.get((connector, task))
        if sensors is None:
            sensors = self._tasks[(connector, task)] = _TaskSensors(self.config)
        return sensors

    # -- recording (engine and herder threads) ---------------------------------------------
    def record_lease(self, connector: str, task: int, report: Mapping[str, float]) -> None:
        """Add one lease's report (:mod:`.counters`) to the task's values."""
        with self._lock:
            self._task(connector, task).add(report)

    def record_errors(self, connector: str, task: int, delta: Mapping[str, float]) -> None:
        """Add one lease's task-error-metrics (:mod:`sparkcat.runtime.errors.metrics`)."""
        with self._lock:
            sensors = self._task(connector, task)
            sensors.errors = merge_metrics(sensors.errors, delta)

    def task_state(self, connector: str, task: int, state: str) -> None:
        """The task is now in ``state`` (a Connect state name, any case)."""
        with self._lock:
            self._task(connector, task).state.change(state.lower())

    def tasks_started(self, connector: str, tasks: Iterable[int], ok: bool = True) -> None:
        """The worker started the tasks (handed them to the engine), or failed to: one
        task-startup success (or failure) each, as Kafka counts in ``Worker.startTask``.

        Counted at the start, not at the first lease's result: a lease may run for as long as
        the task has nothing to do, and a started task is a started task meanwhile."""
        with self._lock:
            self._startups["task"][0 if ok else 1] += len(list(tasks))

    def tasks_abandoned(self, count: int) -> None:
        """``count`` task instances did not stop within the graceful timeout and were killed."""
        with self._lock:
            self._abandoned += count

    def connector_started(self, ok: bool) -> None:
        with self._lock:
            self._startups["connector"][0 if ok else 1] += 1

    def remove_connector(self, connector: str) -> None:
        with self._lock:
            for key in [k for k in self._tasks if k[0] == connector]:
                del self._tasks[key]

    def remove_tasks(self, connector: str, keep_below: int) -> None:
        with self._lock:
            for key in [k for k in self._tasks if k[0] == connector and k[1] >= keep_below]:
                del self._tasks[key]

    def rebalance_started(self) -> None:
        with self._lock:
            self._rebalance = self._rebalance or _Rebalance(self.config)
            self._rebalance.start()

    def rebalance_completed(self, epoch: int) -> None:
        with self._lock:
            self._rebalance = self._rebalance or _Rebalance(self.config)
            self._rebalance.complete(epoch)

    # -- reading ---------------------------------------------------------------------------
    def current_lag(self, connector: str) -> float | None:
        """The connector's consumer lag (records) at the end of each task's last lease;
        ``None`` when unknown (a source connector, or no lease reported it yet)."""
        with self._lock:
            lags = [s.last_lag for (c, _), s in self._tasks.items() if c == connector]
        known = [lag for lag in lags if not math.isnan(lag)]
        return sum(known) if known else None

    def collect(self, connectors: Iterable[ConnectorView]) -> list[Metric]:
        """Every metric of every group, for ``connectors`` (the herder's current view)."""
        views = list(connectors)
        with self._lock:
            out = self._worker(views)
            if self._rebalance is not None:
                out += self._rebalance.metrics()
            for view in views:
                out += self._connector(view)
        return out

    def _worker(self, views: list[ConnectorView]) -> list[Metric]:
        out = [
            Metric(WORKER_GROUP, "connector-count", float(len(views))),
            Metric(WORKER_GROUP, "task-count", float(sum(len(v.tasks) for v in views))),
            Metric(WORKER_GROUP, "task-abandoned-total", float(self._abandoned)),
        ]
        for kind, (ok, failed) in self._startups.items():
            attempts = ok + failed
            out += [
                Metric(WORKER_GROUP, f"{kind}-startup-attempts-total", float(attempts)),
                Metric(WORKER_GROUP, f"{kind}-startup-success-total", float(ok)),
                Metric(WORKER_GROUP, f"{kind}-startup-failure-total", float(failed)),
                Metric(WORKER_GROUP, f"{kind}-startup-success-percentage",
                       ok / attempts if attempts else 0.0),
                Metric(WORKER_GROUP, f"{kind}-startup-failure-percentage",
                       failed / attempts if attempts else 0.0),
            ]  # fmt: skip
        for view in views:
            tags: Tags = (("connector", view.name),)
            states = [s.lower() for s in view.tasks.values()]
            out.append(Metric(WORKER_GROUP, "connector-total-task-count", len(states), tags))
            for state in ("running", "paused", "failed", "unassigned", "destroyed",
                          "restarting"):  # fmt: skip
                count = float(states.count(state))
                out.append(Metric(WORKER_GROUP, f"connector-{state}-task-count", count, tags))
        return out

    def _connector(self, view: ConnectorView) -> list[Metric]:
        tags: Tags = (("connector", view.name),)
        out = [
            Metric(CONNECTOR_GROUP, "status", 1.0, tags, view.state.lower()),
            Metric(CONNECTOR_GROUP, "connector-class", 1.0, tags, view.connector_class),
            Metric(CONNECTOR_GROUP, "connector-type", 1.0, tags, view.kind),
        ]
        for task, state in sorted(view.tasks.items()):
            sensors = self._task(view.name, task)
            sensors.state.change(state.lower())
            out += _task_metrics(view, task, sensors, state.lower())
        return out


def _task_metrics(view: ConnectorView, task: int, s: _TaskSensors, state: str) -> list[Metric]:
    tags: Tags = (("connector", view.name), ("task", str(task)))
    commit_avg, commit_max = s.commit_time.avg(), s.commit_time.max()
    attempts = s.commit_total
    values: list[tuple[str, str, float]] = [
        (TASK_GROUP, "running-ratio", s.state.ratio("running")),
        (TASK_GROUP, "pause-ratio", s.state.ratio("paused")),
        (TASK_GROUP, "batch-size-avg", s.batches.avg()),
        (TASK_GROUP, "batch-size-max", s.batches.max()),
        (TASK_GROUP, "offset-commit-avg-time-ms", commit_avg),
        (TASK_GROUP, "offset-commit-max-time-ms", commit_max),
        (TASK_GROUP, "offset-commit-success-percentage", 1.0 if attempts else 0.0),
        (TASK_GROUP, "offset-commit-failure-percentage", 0.0),
    ]
    if view.kind == "sink":
        values += [
            (SINK_GROUP, "sink-record-read-rate", s.records_in.rate()),
            (SINK_GROUP, "sink-record-read-total", s.in_total),
            (SINK_GROUP, "sink-record-send-rate", s.records_out.rate()),
            (SINK_GROUP, "sink-record-send-total", s.out_total),
            (SINK_GROUP, "put-batch-avg-time-ms", s.calls.avg()),
            (SINK_GROUP, "put-batch-max-time-ms", s.calls.max()),
            (SINK_GROUP, "partition-count", s.partitions),
            (SINK_GROUP, "offset-commit-completion-rate", s.commits.rate()),
            (SINK_GROUP, "offset-commit-completion-total", s.commit_total),
            (SINK_GROUP, "offset-commit-skip-rate", s.skips.rate()),
            (SINK_GROUP, "offset-commit-skip-total", s.skip_total),
            (SINK_GROUP, "offset-commit-seq-no", s.commit_total),
            (SINK_GROUP, "sink-record-lag-max", s.lag.max()),
        ]
    else:
        values += [
            (SOURCE_GROUP, "source-record-poll-rate", s.records_in.rate()),
            (SOURCE_GROUP, "source-record-poll-total", s.in_total),
            (SOURCE_GROUP, "source-record-write-rate", s.records_out.rate()),
            (SOURCE_GROUP, "source-record-write-total", s.out_total),
            (SOURCE_GROUP, "poll-batch-avg-time-ms", s.calls.avg()),
            (SOURCE_GROUP, "poll-batch-max-time-ms", s.calls.max()),
            (SOURCE_GROUP, "source-record-active-count", 0.0),  # leases end fully acked
        ]
        if s.transactional:
            values += [
                (SOURCE_GROUP, "transaction-size-min", s.transactions.min()),
                (SOURCE_GROUP, "transaction-size-max", s.transactions.max()),
                (SOURCE_GROUP, "transaction-size-avg", s.transactions.avg()),
            ]
    errors = merge_metrics(s.errors, {})
    values += [(ERROR_GROUP, name, value) for name, value in errors.items()]
    out = [Metric(TASK_GROUP, "status", 1.0, tags, state)]
    out += [Metric(group, name, float(value), tags) for group, name, value in values]
    return out


class _Rebalance:
    """connect-worker-rebalance-metrics (distributed workers only)."""

    def __init__(self, config: MetricConfig) -> None:
        self.clock = config.clock
        self.times = Windowed(config)
        self.started: float | None = None
        self.completed = 0
        self.epoch = -1
        self.last: float | None = None

    def start(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def complete(self, epoch: int) -> None:
        now = self.clock()
        if self.started is not None:
            ms = (now - self.started) * 1000
            self.times.record(ms, 1, ms)
        self.started = None
        self.completed += 1
        self.epoch = epoch
        self.last = now

    def metrics(self) -> list[Metric]:
        now = self.clock()
        since = (now - self.last) * 1000 if self.last is not None else math.nan
        return [
            Metric(REBALANCE_GROUP, "completed-rebalances-total", float(self.completed)),
            Metric(REBALANCE_GROUP, "epoch", float(self.epoch)),
            Metric(REBALANCE_GROUP, "rebalancing", 1.0 if self.started is not None else 0.0),
            Metric(REBALANCE_GROUP, "rebalance-avg-time-ms", self.times.avg()),
            Metric(REBALANCE_GROUP, "rebalance-max-time-ms", self.times.max()),
            Metric(REBALANCE_GROUP, "time-since-last-rebalance-ms", since),
        ]
