"""The seam between the control plane (herder) and the data plane (:mod:`sparkcat.engine`).

The herder decides *what* runs (connectors, their task configs, target states); an
:class:`Engine` runs it. The shipped engine is Spark (``sparkcat.engine.SparkEngine``); tests
of the control plane may use a double that implements the same protocol. Nothing here
imports pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

ConnectorKind = Literal["source", "sink"]


@dataclass(frozen=True, slots=True)
class ConnectorPlan:
    """Everything the engine needs to run one connector's tasks.

    ``connector_config`` is the connector's config after config-provider substitution: the
    engine reads converters, ``transforms``/``predicates``, ``errors.*``, client overrides and
    topic settings from it. ``task_configs`` are what ``Connector.task_configs(max_tasks)``
    returned (each with ``task.class`` added), index = task id. ``generation`` grows with
    every new set of task configs, so a restarted plan is told apart from the old one.
    ``tasks`` limits the plan to these task ids (distributed mode: the tasks assigned to this
    worker; the others run elsewhere); ``None`` runs them all.
    """

    name: str
    kind: ConnectorKind
    connector_config: dict[str, str]
    task_configs: list[dict[str, str]]
    generation: int = 0
    paused: bool = False
    tasks: tuple[int, ...] | None = None

    def task_ids(self) -> list[int]:
        """The ids of the tasks this plan runs here."""
        if self.tasks is None:
            return list(range(len(self.task_configs)))
        return [t for t in self.tasks if 0 <= t < len(self.task_configs)]


class EngineListener(Protocol):
    """Called by the engine, from its own threads, as tasks change state. Must be thread-safe."""

    def on_task_running(self, connector: str, task: int) -> None: ...

    def on_task_paused(self, connector: str, task: int) -> None: ...

    def on_task_failed(self, connector: str, task: int, trace: str) -> None: ...

    def on_connector_failed(self, connector: str, trace: str) -> None:
        """The connector's whole data plane failed (e.g. its streaming query died)."""
        ...

    def on_records(self, connector: str, task: int, count: int) -> None:
        """``count`` records were copied by the task (acked by Kafka / accepted by the sink)."""
        ...

    def on_task_metrics(self, connector: str, task: int, metrics: dict[str, float]) -> None:
        """One lease's task-error-metrics (only sent when non-empty; counters to add up,
        ``last-error-timestamp`` the latest). Optional: engines call it only if present."""
        ...

    def on_lease_metrics(self, connector: str, task: int, report: dict[str, float]) -> None:
        """One lease's task-metric counters (:mod:`sparkcat.runtime.metrics.counters`), with
        the driver's offset-commit time added. Optional: engines call it only if present."""
        ...

    def on_topics(self, connector: str, task: int, topics: list[str]) -> None:
        """The task produced to / consumed from ``topics`` in a lease (topic tracking,
        KIP-558). Optional: engines call it only if present."""
        ...

    def on_tasks_abandoned(self, connector: str, tasks: list[int]) -> None:
        """The lease of ``tasks`` did not end within ``task.shutdown.graceful.timeout.ms`` of
        being told to (a task stuck in ``poll()``/``put()``) and was abandoned: killed, its
        results discarded. Optional: engines call it only if present."""
        ...


class Engine(Protocol):
    """Runs connectors' tasks. Methods are called from the herder; they return promptly
    except :meth:`stop_connector` and :meth:`close`, which wait for in-flight work."""

    def start_connector(self, plan: ConnectorPlan, listener: EngineListener) -> None:
        """Start (or, for a name already running, replace) the tasks of ``plan``."""
        ...

    def pause_connector(self, name: str) -> None:
        """Stop issuing work for ``name`` after the in-flight lease; its tasks become PAUSED."""
        ...

    def resume_connector(self, name: str) -> None: ...

    def restart_task(self, name: str, task: int) -> None:
        """Run task ``task`` again (e.g. after it FAILED) with its current config; a running
        instance ends first, abandoned if it does not within the graceful timeout."""
        ...

    def stop_connector(self, name: str) -> None:
        """Gracefully stop: the in-flight lease finishes, its offsets are committed, every
        task instance gets ``stop()`` then ``stopped()``, then the query is stopped."""
        ...

    def close(self) -> None:
        """Stop every connector gracefully and release the engine's resources."""
        ...


@dataclass(slots=True)
class TaskCounters:
    """Per-task counts the engine reports (for progress output and metrics)."""

    records: int = 0
    batches: int = 0
    errors: list[str] = field(default_factory=list)
