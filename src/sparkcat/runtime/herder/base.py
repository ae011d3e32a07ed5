"""Kafka's ``AbstractHerder``: the connector lifecycle both herders share.

This module owns lifecycle (create/update/delete, pause/resume/stop, task generation,
queries); the concern modules never import it back: :mod:`.validation` (the config
validation pipeline, plain functions), :mod:`.restart` (KIP-745), :mod:`.listener` (the
engine's callbacks), :mod:`.offsets` (KIP-875/995 and the connector contexts, which get two
callbacks rather than the herder), :mod:`.config` (config/plugin endpoints), :mod:`.topics`
(KIP-558 topic tracking in the status store), :mod:`.state`
(the records they all share). :class:`~sparkcat.runtime.standalone.herder.StandaloneHerder`
and the distributed herder build on it.

Every public method is synchronous: it returns a value or raises ``NotFoundError``,
``AlreadyExistsError``, ``BadRequestError`` or ``ConnectError``. One re-entrant lock
serialises them. The herder is also the engine's :class:`EngineListener`; listener callbacks
come from engine threads and take only a small state lock (never the herder lock, which is
held while the herder waits for the engine), so they cannot deadlock with a stop.

The ``Connector`` instance runs here, on the driver: ``initialize`` → ``start`` →
``task_configs(tasks.max)``; pausing calls ``stop()`` (as Kafka does) and resuming ``start()``
again; STOPPED means the instance is stopped and there are no task configs. Task statuses are
set to RUNNING (PAUSED) when a plan is handed to the engine; the engine then reports each
lease's outcome (RUNNING, or FAILED with the task's trace).
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sparkcat.api.connector import Connector
from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.runtime.engine_api import ConnectorPlan, Engine
from sparkcat.runtime.herder.config import HerderConfigMixin
from sparkcat.runtime.herder.listener import HerderListenerMixin
from sparkcat.runtime.herder.offsets import HerderOffsetsMixin
from sparkcat.runtime.herder.restart import HerderRestartMixin
from sparkcat.runtime.herder.state import Live, ManagedConnector, TargetState, parse_initial_state
from sparkcat.runtime.herder.topics import HerderTopicsMixin
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    valid_config,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorTaskId,
    TaskInfo,
    TaskState,
    WorkerStatus,
)
from sparkcat.runtime.stores.statuses import (
    ConnectorStatus,
    State,
    StatusBackingStore,
    StatusStore,
    TaskStatus,
)
from sparkcat.runtime.worker import Worker
from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger(__name__)


class AbstractHerder(
    HerderListenerMixin,
    HerderRestartMixin,
    HerderOffsetsMixin,
    HerderConfigMixin,
    HerderTopicsMixin,
):
    """Runs connectors on this worker; the data plane is ``engine``."""

    def __init__(
        self,
        worker_config: WorkerConfig,
        engine: Engine,
        offset_store: Any,
        registry: PluginRegistry,
        worker_id: str,
        status_store: StatusBackingStore | None = None,
    ) -> None:
        self.worker_config = worker_config
        self.worker = Worker(worker_config, engine, offset_store, registry, self._reload_connector)
        self.offset_store = offset_store
        self.registry = registry
        self.worker_id = worker_id
        self.status: StatusBackingStore = status_store or StatusStore()
        self._lock = threading.RLock()
        self._connectors: dict[str, ManagedConnector] = {}
        self._state_lock = threading.Lock()
        self._live: dict[str, Live] = {}
        self._records: dict[str, int] = {}
        self._task_metrics: dict[str, dict[int, dict[str, float]]] = {}  # task-error-metrics
        self._dead_queries: set[str] = set()  # connectors whose query the engine lost
        self.metrics = self.worker.metrics
        self._ready = threading.Event()
        self.kafka_cluster_id: str | None = None  # shown by GET /; set by the CLI
        self.commit = "unknown"

    # -- readiness (GET /health) -------------------------------------------------------------
    def mark_ready(self) -> None:
        """Start-up is over (the command-line connectors were created)."""
        self._ready.set()

    def is_ready(self) -> bool:
        return self._ready.is_set()

    def health_check(self, timeout_s: float = 10.0) -> WorkerStatus:
        """503 while starting; 500 if the herder stays busy for ``timeout_s``; else 200."""
        if not self._ready.is_set():
            return WorkerStatus("starting", "Worker is still starting up.", 503)
        if not self._lock.acquire(timeout=timeout_s):
            return WorkerStatus("unhealthy", "Worker was unable to handle this request and may "
                                "be unable to handle other requests.", 500)  # fmt: skip
        self._lock.release()
        message = "Worker has completed startup and is ready to handle requests."
        return WorkerStatus("healthy", message, 200)

    # -- queries ----------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._connectors)

    def connector_info(self, name: str) -> ConnectorInfo:
        with self._lock:
            return self._info(self._get(name))

    def connector_config(self, name: str) -> dict[str, str]:
        with self._lock:
            return dict(self._get(name).config)

    def task_configs(self, name: str) -> list[TaskInfo]:
        with self._lock:
            managed = self._get(name)
            return [
                TaskInfo(ConnectorTaskId(name, i), dict(c))
                for i, c in enumerate(managed.task_configs)
            ]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status.get(name)
        if status is None:
            raise NotFoundError(f"No status found for connector {name}")
        with self._lock:
            managed = self._connectors.get(name)
        kind = managed.kind if managed is not None else "unknown"
        tasks = [
            TaskState(t.task, t.state.value, t.worker_id, t.trace)
            for t in self.status.get_all(name)
        ]
        connector = ConnectorState(status.state.value, status.worker_id, status.trace)
        return ConnectorStateInfo(name, connector, tasks, kind)

    def task_status(self, name: str, task: int) -> TaskState:
        status = self.status.get_task(name, task)
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return TaskState(status.task, status.state.value, status.worker_id, status.trace)

    def expanded_connectors(self, expand: list[str]) -> dict[str, dict[str, Any]]:
        """``GET /connectors?expand=status&expand=info``: name → requested expansions; a
        connector without a status is left out when ``status`` is asked for."""
        result: dict[str, dict[str, Any]] = {}
        for name in self.connectors():
            entry: dict[str, Any] = {}
            try:
                if "status" in expand:
                    entry["status"] = self.connector_status(name).to_json()
                if "info" in expand:
                    entry["info"] = self.connector_info(name).to_json()
            except NotFoundError:
                continue
            result[name] = entry
        return result

    def records_copied(self) -> dict[str, int]:
        """Records copied per connector since this worker started (for progress output)."""
        with self._state_lock:
            return dict(self._records)

    def validate_config(self, config: Mapping[str, str | None]) -> ConfigInfos:
        """The validation result of a connector config (``.../config/validate``)."""
        return validate_connector_config(config, self.registry, self.worker_config).infos

    # -- lifecycle --------------------------------------------------------------------------
    def create_connector(
        self,
        name: str,
        config: Mapping[str, str],
        initial_state: str | None = None,
        initial_offsets: Any = None,
    ) -> ConnectorInfo:
        """Validate, store and start a new connector (POST /connectors)."""
        name = name.strip()
        given = check_connector_name(name, dict(config))
        target = parse_initial_state(initial_state)
        with self._lock:
            validation = validate_connector_config(given, self.registry, self.worker_config)
            props = valid_config(validation, given)
            if name in self._connectors:
                raise AlreadyExistsError(f"Connector {name} already exists")
            status = None  # KIP-995: steps 2-4 here, step 5 (the config) below
            if initial_offsets is not None:
                status = self.write_initial_offsets(name, validation, props, initial_offsets)
            managed = ManagedConnector(name, props, validation.kind, validation.connector_class,
                                       target)  # fmt: skip
            with self.initial_offsets_cleanup(name, validation.kind, props, status):
                self._connectors[name] = managed
                self._start(managed)
            return replace(self._info(managed), offsets_status=status)

    def update_connector_config(
        self, name: str, config: Mapping[str, str]
    ) -> tuple[bool, ConnectorInfo]:
        """Create or replace a connector's config (PUT .../config); ``(created, info)``."""
        given = check_connector_name(name, dict(config))
        with self._lock:
            validation = validate_connector_config(given, self.registry, self.worker_config)
            props = valid_config(validation, given)
            old = self._connectors.get(name)
            target = TargetState.STARTED if old is None else old.target
            if old is not None:
                self._stop_instance(old)
                if old.context is not None:
                    old.context.close()
            managed = ManagedConnector(name, props, validation.kind, validation.connector_class,
                                       target)  # fmt: skip
            if old is not None:
                managed.generation, managed.planned = old.generation, old.planned
                managed.task_configs = old.task_configs
            self._connectors[name] = managed
            self._start(managed)
            return old is None, self._info(managed)

    def delete_connector(self, name: str) -> None:
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Connector {name} not found")
            self.worker.shut_down_connector(managed)
            if managed.planned:
                self.worker.stop_tasks(name)
            del self._connectors[name]
            with self._state_lock:
                self._live.pop(name, None)
                self._records.pop(name, None)
                self._task_metrics.pop(name, None)
            self.reset_deleted_connector_topics(name)
            self.metrics.remove_connector(name)
            self.status.remove(name)

    def pause_connector(self, name: str) -> None:
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Unknown connector {name}")
            if managed.target is TargetState.PAUSED:
                return
            managed.target = TargetState.PAUSED
            self._stop_instance(managed)
            self._set_live(managed)
            self._put_connector(name, State.PAUSED)
            if managed.planned:
                self.worker.pause_tasks(name)
                self._set_tasks(managed, State.PAUSED)

    def resume_connector(self, name: str) -> None:
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Unknown connector {name}")
            if managed.target is TargetState.STARTED:
                return
            was_paused_plan = managed.target is TargetState.PAUSED and managed.planned
            managed.target = TargetState.STARTED
            self._set_live(managed)
            if not self._start_instance(managed):
                return
            generation = managed.generation
            self.reconfigure_tasks(managed, force=not was_paused_plan)
            if was_paused_plan and managed.generation == generation:
                self.worker.resume_tasks(name)
                self._set_tasks(managed, State.RUNNING)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                # Kafka's standalone herder fails here with an IllegalArgumentException (500).
                raise ConnectError(f"No connector `{name}` configured")
            managed.target = TargetState.STOPPED
            self._stop_instance(managed)
            if managed.planned:
                self.worker.stop_tasks(name)
                managed.planned = False
            managed.task_configs = []
            self._set_live(managed)
            self.status.remove_tasks(name)
            self._put_connector(name, State.STOPPED)

    def request_task_reconfiguration(self, name: str) -> None:
        """Regenerate the connector's task configs; a change is pushed to the engine as a
        new plan with the next generation."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                log.error("Task that requested reconfiguration does not exist: %s", name)
                return
            self.reconfigure_tasks(managed)

    # -- internals (herder lock held) -------------------------------------------------------
    def _get(self, name: str) -> ManagedConnector:
        managed = self._connectors.get(name)
        if managed is None:
            raise NotFoundError(f"Connector {name} not found")
        return managed

    def _info(self, managed: ManagedConnector) -> ConnectorInfo:
        tasks = [ConnectorTaskId(managed.name, i) for i in range(len(managed.task_configs))]
        return ConnectorInfo(managed.name, dict(managed.config), tasks, managed.kind)

    def _start(self, managed: ManagedConnector) -> None:
        """Bring a new connector record to its target state."""
        self._set_live(managed)
        if managed.target is TargetState.STOPPED:
            managed.task_configs = []
            self.status.remove_tasks(managed.name)
            self._put_connector(managed.name, State.STOPPED)
            return
        if managed.target is TargetState.PAUSED:
            # Kafka initialises a connector created PAUSED but neither starts it nor its tasks.
            self._ensure_instance(managed)
            self._put_connector(managed.name, State.PAUSED)
            return
        if self._start_instance(managed):
            self.reconfigure_tasks(managed, force=True)

    def _ensure_instance(self, managed: ManagedConnector) -> Connector:
        return self.worker.ensure_connector(
            managed, self.request_task_reconfiguration, self._fail_by_name
        )

    def _reload_connector(self, name: str) -> None:
        """``config.action.reload=restart``: a provider's values changed after their TTL."""
        try:
            self.restart_connector(name, include_tasks=True)
        except NotFoundError:
            self.worker.config_transformer.cancel(name)
        except ConnectError as exc:  # e.g. a distributed follower: the leader restarts
            log.warning("Could not restart connector %s after its config changed: %s", name, exc)

    def _start_instance(self, managed: ManagedConnector) -> bool:
        """``start(config)`` on the connector instance, with the config's variables
        resolved; FAILED with trace if resolution or ``start`` raises."""
        try:
            self.worker.start_connector(
                managed, self.request_task_reconfiguration, self._fail_by_name
            )
        except Exception as exc:
            self.fail_connector(managed, exc)
            return False
        self._put_connector(managed.name, State.RUNNING)
        return True

    def _stop_instance(self, managed: ManagedConnector) -> None:
        self.worker.stop_connector(managed)

    def _fail_by_name(self, name: str, exc: BaseException) -> None:
        """``ConnectorContext.raise_error``: the connector fails, if it still exists."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is not None:
                self.fail_connector(managed, exc)

    def fail_connector(self, managed: ManagedConnector, exc: BaseException) -> None:
        trace = "".join(traceback.format_exception(exc))
        log.error("Connector %s failed: %s", managed.name, exc)
        self._put_connector(managed.name, State.FAILED, trace)

    def reconfigure_tasks(self, managed: ManagedConnector, force: bool = False) -> None:
        """Ask the running connector for task configs; push a plan if they changed."""
        if managed.target is not TargetState.STARTED or not managed.started:
            return
        try:
            configs = self.worker.connector_task_configs(managed)
        except Exception as exc:
            self.fail_connector(managed, exc)
            return
        unchanged = configs == managed.task_configs and managed.config == managed.applied_config
        if unchanged and managed.planned and not force:
            return
        managed.task_configs = configs
        managed.generation += 1
        managed.applied_config = dict(managed.config)
        self.push_plan(managed)

    def push_plan(self, managed: ManagedConnector) -> None:
        """Hand the connector's current task configs to the engine (or stop its query when
        there are none)."""
        paused = managed.target is TargetState.PAUSED
        self._set_live(managed)
        self.status.remove_tasks(managed.name, keep_below=len(managed.task_configs))
        self.metrics.remove_tasks(managed.name, keep_below=len(managed.task_configs))
        if not managed.task_configs:
            if managed.planned:
                self.worker.stop_tasks(managed.name)
                managed.planned = False
            return
        plan = ConnectorPlan(
            managed.name, managed.kind, dict(managed.config),
            [dict(c) for c in managed.task_configs], max(managed.generation, 0), paused,
        )  # fmt: skip
        self._set_tasks(managed, State.PAUSED if paused else State.RUNNING)
        try:
            self.worker.start_tasks(plan, self)
        except Exception as exc:
            self.fail_connector(managed, exc)
            return
        managed.planned = True

    def _set_live(self, managed: ManagedConnector) -> None:
        live = Live(managed.target, len(managed.task_configs), max(managed.generation, 0))
        with self._state_lock:
            self._live[managed.name] = live

    def _put_connector(self, name: str, state: State, trace: str | None = None) -> None:
        self.status.put(ConnectorStatus(name, state, self.worker_id, 0, trace))

    def _set_tasks(self, managed: ManagedConnector, state: State) -> None:
        generation = max(managed.generation, 0)
        for task in range(len(managed.task_configs)):
            self.status.put_task(TaskStatus(managed.name, task, state, self.worker_id, generation))
            self.metrics.task_state(managed.name, task, state.value)


__all__ = ["AbstractHerder"]
