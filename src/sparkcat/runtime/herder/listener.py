"""The herder as the engine's :class:`~sparkcat.runtime.engine_api.EngineListener`.

Callbacks come from engine threads. They take only the herder's small state lock (never the
herder lock, which is held while the herder waits for the engine), read a snapshot of each
connector's target state and task count, and write statuses and record counts. Events for
tasks that no longer exist, or that contradict the target state (a RUNNING report for a
paused connector), are ignored.
"""

from __future__ import annotations

import logging

from sparkcat.api.errors import NotFoundError
from sparkcat.runtime.errors.metrics import merge_metrics
from sparkcat.runtime.herder.core import HerderCore
from sparkcat.runtime.herder.state import Live, TargetState
from sparkcat.runtime.metrics.registry import ConnectorView
from sparkcat.runtime.stores.statuses import State, TaskStatus

log = logging.getLogger(__name__)


class HerderListener(HerderCore):
    """EngineListener callbacks of :class:`~sparkcat.runtime.herder.base.AbstractHerder`."""

    def _live_task(self, connector: str, task: int) -> Live | None:
        with self._state_lock:
            live = self._live.get(connector)
        return live if live is not None and 0 <= task < live.tasks else None

    def on_task_running(self, connector: str, task: int) -> None:
        live = self._live_task(connector, task)
        if live is not None and live.target is TargetState.STARTED:
            # Called after every lease: a status record only when the state changes, as
            # Kafka writes them (a task that stays through a rebalance keeps its generation).
            if not self.has_task_status(connector, task, State.RUNNING):
                self.status.put_task(
                    TaskStatus(connector, task, State.RUNNING, self.worker_id, live.generation)
                )
            self.metrics.task_state(connector, task, "running")

    def on_task_paused(self, connector: str, task: int) -> None:
        live = self._live_task(connector, task)
        if live is not None and live.target is TargetState.PAUSED:
            self.status.put_task(
                TaskStatus(connector, task, State.PAUSED, self.worker_id, live.generation)
            )
            self.metrics.task_state(connector, task, "paused")

    def on_task_failed(self, connector: str, task: int, trace: str) -> None:
        live = self._live_task(connector, task)
        if live is not None:
            log.error("Task %s-%d failed:\n%s", connector, task, trace)
            self.status.put_task(
                TaskStatus(connector, task, State.FAILED, self.worker_id, live.generation, trace)
            )
            self.metrics.task_state(connector, task, "failed")

    def on_connector_failed(self, connector: str, trace: str) -> None:
        with self._state_lock:
            live = self._live.get(connector)
        if live is None or live.target is TargetState.STOPPED:
            return
        with self._state_lock:
            self._dead_queries.add(connector)
        for task in range(live.tasks):
            self.on_task_failed(connector, task, trace)

    def on_records(self, connector: str, task: int, count: int) -> None:
        with self._state_lock:
            if connector in self._live:
                self._records[connector] = self._records.get(connector, 0) + count

    def on_task_metrics(self, connector: str, task: int, metrics: dict[str, float]) -> None:
        """Add one lease's task-error-metrics to the task's totals; logged when they change."""
        with self._state_lock:
            if connector not in self._live:
                return
            tasks = self._task_metrics.setdefault(connector, {})
            total = merge_metrics(tasks.get(task, {}), metrics)
            changed = total != tasks.get(task)
            tasks[task] = total
        self.metrics.record_errors(connector, task, metrics)
        if changed:
            shown = ", ".join(f"{k}={v:g}" for k, v in total.items())
            log.info("Task %s-%d task-error-metrics: %s", connector, task, shown)

    def on_tasks_abandoned(self, connector: str, tasks: list[int]) -> None:
        """Task instances abandoned for not stopping in time: counted on the worker."""
        self.metrics.tasks_abandoned(len(tasks))

    def on_lease_metrics(self, connector: str, task: int, report: dict[str, float]) -> None:
        """One lease's task-metric counters: added to Kafka Connect's metrics of the task."""
        if self._live_task(connector, task) is not None:
            self.metrics.record_lease(connector, task, report)

    def metric_views(self) -> list[ConnectorView]:
        """The connectors as the metrics see them: kind, class, statuses of their tasks."""
        views = []
        for name in sorted(self.status.connectors()):
            status = self.status.get(name)
            # A plain read, without the herder lock (held while the herder waits for the
            # engine): a scrape must not wait for a connector to stop.
            managed = self._connectors.get(name)
            if status is None or managed is None:
                continue
            tasks = {
                t.task: t.state.value
                for t in self.status.get_all(name)
                if t.worker_id == self.worker_id
            }
            if status.worker_id != self.worker_id and not tasks:
                continue  # runs on other workers (distributed mode)
            cls = managed.config.get("connector.class", "")
            views.append(ConnectorView(name, managed.kind, cls, status.state.value, tasks))
        return views

    def task_metrics(self, connector: str, task: int) -> dict[str, float]:
        """The task's task-error-metrics since this worker started (all zero when it had no
        errors); ``NotFoundError`` for an unknown connector or task."""
        with self._state_lock:
            live = self._live.get(connector)
            if live is None or not 0 <= task < live.tasks:
                raise NotFoundError(f"Task {connector}-{task} not found")
            return merge_metrics(self._task_metrics.get(connector, {}).get(task, {}), {})


__all__ = ["HerderListener"]
