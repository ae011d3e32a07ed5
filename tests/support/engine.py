""":class:`~sparkcat.runtime.engine_api.Engine` doubles for control-plane tests, and the
listener a test hands the real engine.

- :class:`NullEngine` does nothing: the herder decides, nothing runs.
- :class:`PlanRecordingEngine` keeps the plans the herder hands it and runs nothing, so a test
  plays the engine's part by calling the listener (the herder) as the Spark engine does after
  a lease.
- :class:`RecordingListener` is the herder's side as the engine sees it: what the engine
  reported, for a test to wait on and check.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.errors.metrics import merge_metrics


class NullEngine:
    """The Engine protocol, doing nothing."""

    def start_connector(self, plan: Any, listener: Any) -> None: ...
    def pause_connector(self, name: str) -> None: ...
    def resume_connector(self, name: str) -> None: ...
    def restart_task(self, name: str, task: int) -> None: ...
    def stop_connector(self, name: str) -> None: ...
    def close(self) -> None: ...


@dataclass
class PlanRecordingEngine:
    """The plans currently handed to the engine, by connector name."""

    plans: dict[str, ConnectorPlan] = field(default_factory=dict)
    stopped: list[str] = field(default_factory=list)
    restarts: list[tuple[str, int]] = field(default_factory=list)

    def start_connector(self, plan: ConnectorPlan, listener: EngineListener) -> None:
        self.plans[plan.name] = plan

    def pause_connector(self, name: str) -> None:
        pass

    def resume_connector(self, name: str) -> None:
        pass

    def restart_task(self, name: str, task: int) -> None:
        self.restarts.append((name, task))

    def stop_connector(self, name: str) -> None:
        self.plans.pop(name, None)
        self.stopped.append(name)

    def close(self) -> None:
        self.plans.clear()


class RecordingListener:
    """The engine's view of the herder: task states and traces, copied-record counts and the
    error-handling metrics of each connector (summed over its tasks' leases)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.states: dict[tuple[str, int], str] = {}
        self.traces: dict[tuple[str, int], str] = {}
        self.records: dict[str, int] = {}
        self.connector_failures: dict[str, str] = {}
        self.metrics: dict[str, dict[str, float]] = {}

    def on_task_running(self, connector: str, task: int) -> None:
        with self.lock:
            self.states[(connector, task)] = "RUNNING"

    def on_task_paused(self, connector: str, task: int) -> None:
        with self.lock:
            self.states[(connector, task)] = "PAUSED"

    def on_task_failed(self, connector: str, task: int, trace: str) -> None:
        with self.lock:
            self.states[(connector, task)] = "FAILED"
            self.traces[(connector, task)] = trace

    def on_connector_failed(self, connector: str, trace: str) -> None:
        with self.lock:
            self.connector_failures[connector] = trace

    def on_records(self, connector: str, task: int, count: int) -> None:
        with self.lock:
            self.records[connector] = self.records.get(connector, 0) + count

    def on_task_metrics(self, connector: str, task: int, metrics: dict[str, float]) -> None:
        with self.lock:
            self.metrics[connector] = merge_metrics(self.metrics.get(connector, {}), metrics)
