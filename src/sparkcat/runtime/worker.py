"""Kafka's ``Worker``: the one place that starts and stops this process's connectors and tasks.

Both herders decide *what* runs here (the standalone herder: everything; the distributed
herder: its share of the group's assignment) and ask the :class:`Worker` to do it:

- **Connectors** (Kafka's ``Worker.startConnector`` / ``WorkerConnector``): the ``Connector``
  instance of a :class:`~sparkcat.runtime.herder.state.ManagedConnector` runs here, on the
  driver. :meth:`Worker.start_connector` creates it once (``initialize`` with a connector
  context that reads the worker's offsets), resolves the config's ``${provider:path:key}``
  variables and calls ``start``; :meth:`Worker.stop_connector` calls ``stop``;
  :meth:`Worker.connector_task_configs` asks it for task configs
  (Kafka's ``Worker.connectorTaskConfigs``, with ``tasks.max.enforce``).
- **Tasks** (Kafka's ``Worker.startTask`` / ``stopAndAwaitTask``): a
  :class:`~sparkcat.runtime.engine_api.ConnectorPlan` handed to the engine runs them. The
  engine builds each task's converters, transformation chain and error handling from the
  plan's connector config over the worker config, and commits their offsets (source offsets
  to :attr:`Worker.offset_store`, sink offsets to the connector's consumer group) -- on
  Spark's executors, which is why they are not built here.
- **Metrics** (Kafka's ``ConnectMetrics`` / ``WorkerMetricsGroup``): every start of a
  connector or task is counted in :attr:`Worker.metrics`.

Statuses are the herders' business (they know the group generation); the worker only reports
success or failure by returning or raising. Nothing here imports pyspark: the engine is
reached through :mod:`sparkcat.runtime.engine_api`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sparkcat.api.connector import Connector
from sparkcat.api.errors import ConnectError
from sparkcat.runtime.config_provider import WorkerConfigTransformer, reverse_transform
from sparkcat.runtime.connector_config import TOPICS_CONFIG, TOPICS_REGEX_CONFIG
from sparkcat.runtime.engine_api import ConnectorPlan, Engine, EngineListener
from sparkcat.runtime.herder.context import make_context
from sparkcat.runtime.herder.state import ManagedConnector
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.metrics.registry import ConnectMetrics
from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger(__name__)


class Worker:
    """This process's connectors and tasks on ``engine`` (see the module docstring).

    ``on_config_reload(name)`` is called, from a timer thread, when a config provider's
    values of connector ``name`` expired with changed values (``config.action.reload``):
    the herder restarts the connector where it runs. Methods are called with the herder's
    lock held; they are not thread-safe on their own.
    """

    def __init__(
        self,
        worker_config: WorkerConfig,
        engine: Engine,
        offset_store: Any,
        registry: PluginRegistry,
        on_config_reload: Callable[[str], None],
    ) -> None:
        self.config = worker_config
        self.engine = engine
        self.offset_store = offset_store
        self.registry = registry
        self.metrics = ConnectMetrics.from_worker_config(worker_config)
        # Connector configs stay unresolved (``${provider:path:key}``) in every store, plan
        # and answer; they are resolved only for Connector.start (and on executors for
        # tasks). A TTL expiry with changed values restarts the connector and its tasks.
        self.config_transformer = WorkerConfigTransformer(
            {k: str(v) for k, v in worker_config.originals().items() if v is not None},
            on_config_reload,
        )

    # -- connectors (WorkerConnector) --------------------------------------------------------
    def ensure_connector(
        self,
        managed: ManagedConnector,
        request_reconfiguration: Callable[[str], None],
        fail: Callable[[str, BaseException], None],
    ) -> Connector:
        """The connector's instance, created and ``initialize``d on first use with a context
        whose callbacks are ``request_reconfiguration(name)`` and ``fail(name, exc)``."""
        if managed.instance is None:
            instance = managed.cls()
            managed.context = make_context(managed, request_reconfiguration, fail,
                                           self.offset_store)  # fmt: skip
            instance.initialize(managed.context)
            managed.instance = instance
        return managed.instance

    def start_connector(
        self,
        managed: ManagedConnector,
        request_reconfiguration: Callable[[str], None],
        fail: Callable[[str, BaseException], None],
    ) -> None:
        """``start(config)`` on the connector's instance with its variables resolved;
        raises what resolution or ``start`` raised (counted as a failed start)."""
        try:
            instance = self.ensure_connector(managed, request_reconfiguration, fail)
            instance.start(self.config_transformer.transform(managed.name, managed.config))
        except Exception:
            self.metrics.connector_started(False)
            raise
        self.metrics.connector_started(True)
        managed.started = True

    def stop_connector(self, managed: ManagedConnector) -> None:
        """``stop()`` on a started instance (what it raises is logged, not raised)."""
        if managed.instance is not None and managed.started:
            managed.started = False
            try:
                managed.instance.stop()
            except Exception:
                log.exception("Connector %s raised from stop()", managed.name)

    def shut_down_connector(self, managed: ManagedConnector) -> None:
        """The connector leaves this worker: its context refuses further calls, its instance
        stops and no config-provider reload is scheduled for it here."""
        if managed.context is not None:
            managed.context.close()
        self.stop_connector(managed)
        self.config_transformer.cancel(managed.name)

    def connector_task_configs(self, managed: ManagedConnector) -> list[dict[str, str]]:
        """``task_configs(tasks.max)`` of the started instance, each with ``task.class`` (and
        a sink's topics) added and the config's variables put back; ``ConnectError`` when it
        returns more than ``tasks.max`` with ``tasks.max.enforce`` on."""
        assert managed.instance is not None
        instance = managed.instance
        max_tasks = int(managed.config.get("tasks.max", "1").strip())
        raw = instance.task_configs(max_tasks)
        enforce = managed.config.get("tasks.max.enforce", "true").strip().lower() != "false"
        if enforce and len(raw) > max_tasks:
            raise ConnectError(
                f"The connector {managed.name} has generated {len(raw)} tasks, which is greater "
                f"than {max_tasks}, the maximum number of tasks it is configured to create. This "
                "behaviour should be considered a bug and is disallowed. If necessary, it can be "
                "permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; "
                "however, this option will be removed in a future release of Kafka Connect."
            )
        task_class = self.registry.class_name(instance.task_class())
        configs = []
        for task_config in raw:
            full = {str(k): str(v) for k, v in task_config.items()}
            full["task.class"] = task_class
            if managed.kind == "sink":
                for key in (TOPICS_CONFIG, TOPICS_REGEX_CONFIG):
                    if key in managed.config:
                        full[key] = managed.config[key]
            configs.append(full)
        # The connector saw resolved values: put the variables back before storing.
        return reverse_transform(managed.config, configs)

    # -- tasks (WorkerTask, on the engine) ----------------------------------------------------
    def start_tasks(
        self, plan: ConnectorPlan, listener: EngineListener, started: Sequence[int] | None = None
    ) -> None:
        """Run ``plan``'s tasks (replacing the connector's running plan, if any); the engine
        reports their progress to ``listener``. ``started``: the tasks this counts as started
        (default: all of the plan's). Raises what the engine raised."""
        counted = list(plan.task_ids() if started is None else started)
        try:
            self.engine.start_connector(plan, listener)
        except Exception:
            self.metrics.tasks_started(plan.name, counted, ok=False)
            raise
        self.metrics.tasks_started(plan.name, counted)

    def stop_tasks(self, name: str) -> None:
        """Stop connector ``name``'s tasks gracefully (in-flight work commits first)."""
        self.engine.stop_connector(name)

    def stop_tasks_of(self, names: Sequence[str]) -> None:
        """Stop several connectors' tasks concurrently: each gets the graceful timeout, and
        all share the same window (Kafka's ``stopAndAwaitTasks``)."""
        if len(names) <= 1:
            for name in names:
                self.stop_tasks(name)
            return
        with ThreadPoolExecutor(min(len(names), 256), thread_name_prefix="stop-tasks") as pool:
            list(pool.map(self.stop_tasks, names))

    def pause_tasks(self, name: str) -> None:
        self.engine.pause_connector(name)

    def resume_tasks(self, name: str) -> None:
        self.engine.resume_connector(name)

    def restart_tasks(self, name: str, tasks: Sequence[int]) -> None:
        """Run ``tasks`` of connector ``name`` again; an engine that restarts several at once
        gets them in one call (one lease boundary for all, not one per task)."""
        tasks = list(tasks)
        many = getattr(self.engine, "restart_tasks", None)
        try:
            if many is not None:
                many(name, tasks)
            else:
                for task in tasks:
                    self.engine.restart_task(name, task)
        except Exception:
            self.metrics.tasks_started(name, tasks, ok=False)
            raise
        self.metrics.tasks_started(name, tasks)

    def stop(self) -> None:
        """Stop every connector's tasks gracefully and release the engine."""
        self.engine.close()


__all__ = ["Worker"]
