"""Kafka's ``AbstractHerder``: what both herders share.

The herders decide what runs where; the :class:`~sparkcat.runtime.worker.Worker` they share
runs it. :class:`AbstractHerder` holds the shared part: readiness (``GET /health``), the
queries both answer alike, the life of a connector's instance on this worker (through the
``Worker``; a failure becomes the FAILED status with its trace) and task-config generation
(:meth:`AbstractHerder.reconfigure_tasks`; each herder applies the result its own way). The
concerns live in their own modules, each a class on :class:`~.core.HerderCore` (the herder's
records and locks, defined once): :mod:`.listener` (the engine's callbacks), :mod:`.topics`
(KIP-558 topic tracking), :mod:`.offsets` (KIP-875/995), :mod:`.config` (config and plugin
endpoints), plus :mod:`.validation` (plain functions), :mod:`.context` (the contexts handed
to connectors) and :mod:`.state` (the records). The lifecycle itself is each herder's:
:class:`~sparkcat.runtime.standalone.herder.StandaloneHerder` and
:class:`~sparkcat.runtime.distributed.herder.DistributedHerder`.

Every public method is synchronous: it returns a value or raises ``NotFoundError``,
``AlreadyExistsError``, ``BadRequestError`` or ``ConnectError``. One re-entrant lock
serialises them. The herder is also the engine's :class:`EngineListener`; listener callbacks
come from engine threads and take only a small state lock (never the herder lock, which is
held while the herder waits for the engine), so they cannot deadlock with a stop.

The ``Connector`` instance runs here, on the driver: ``initialize`` → ``start`` →
``task_configs(tasks.max)``; pausing calls ``stop()`` (as Kafka does) and resuming ``start()``
again; STOPPED means the instance is stopped and there are no task configs.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Mapping
from typing import Any

from sparkcat.api.connector import Connector
from sparkcat.api.errors import NotFoundError
from sparkcat.runtime.engine_api import Engine
from sparkcat.runtime.herder.config import HerderConfig
from sparkcat.runtime.herder.listener import HerderListener
from sparkcat.runtime.herder.offsets import HerderOffsets
from sparkcat.runtime.herder.state import ManagedConnector, TargetState
from sparkcat.runtime.herder.topics import HerderTopics
from sparkcat.runtime.herder.validation import validate_connector_config
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorStateInfo,
    TaskState,
    WorkerStatus,
)
from sparkcat.runtime.stores.statuses import State, StatusBackingStore
from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger(__name__)


class AbstractHerder(HerderListener, HerderTopics, HerderOffsets, HerderConfig):
    """What both herders share (see the module docstring)."""

    def __init__(
        self,
        worker_config: WorkerConfig,
        engine: Engine,
        offset_store: Any,
        registry: PluginRegistry,
        worker_id: str,
        status_store: StatusBackingStore | None = None,
    ) -> None:
        super().__init__(worker_config, engine, offset_store, registry, worker_id, status_store)
        self._ready = threading.Event()
        self.kafka_cluster_id: str | None = None  # shown by GET /; set by the assembly
        self.commit = "unknown"

    # -- Kafka's Herder interface, as each herder implements it (those used here) -----------
    def connectors(self) -> list[str]:
        raise NotImplementedError

    def connector_info(self, name: str) -> ConnectorInfo:
        raise NotImplementedError

    def connector_status(self, name: str) -> ConnectorStateInfo:
        raise NotImplementedError

    def request_task_reconfiguration(self, name: str) -> None:
        """The connector asked for new task configs (its context's call)."""
        raise NotImplementedError

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

    # -- queries both herders answer alike ------------------------------------------------
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

    # -- the connector instances on this worker (herder lock held) ---------------------------
    def ensure_instance(self, managed: ManagedConnector) -> Connector:
        """The connector's instance, initialised on first use (a PAUSED connector has one)."""
        return self.worker.ensure_connector(
            managed, self.request_task_reconfiguration, self._fail_by_name
        )

    def start_instance(self, managed: ManagedConnector) -> bool:
        """``start(config)`` on the connector instance, with the config's variables
        resolved; FAILED with trace if resolution or ``start`` raises."""
        try:
            self.worker.start_connector(
                managed, self.request_task_reconfiguration, self._fail_by_name
            )
        except Exception as exc:
            self.fail_connector(managed, exc)
            return False
        self.put_connector_status(managed.name, State.RUNNING)
        return True

    def stop_instance(self, managed: ManagedConnector) -> None:
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
        self.put_connector_status(managed.name, State.FAILED, trace)

    # -- task configs ----------------------------------------------------------------------
    def reconfigure_tasks(self, managed: ManagedConnector, force: bool = False) -> None:
        """Ask the running connector for its task configs (Kafka's ``reconfigureConnector``)
        and hand them to :meth:`apply_task_configs`; a connector that raises fails."""
        if managed.target is not TargetState.STARTED or not managed.started:
            return
        if self.task_configs_pending(managed.name):
            return
        try:
            configs = self.worker.connector_task_configs(managed)
        except Exception as exc:
            self.fail_connector(managed, exc)
            return
        self.apply_task_configs(managed, configs, force)

    def task_configs_pending(self, name: str) -> bool:
        """Whether the connector's last task configs are still on their way (then it is not
        asked again yet)."""
        return False

    def apply_task_configs(
        self, managed: ManagedConnector, configs: list[dict[str, str]], force: bool
    ) -> None:
        """Make ``configs`` the connector's task configs (``force``: even when unchanged)."""
        raise NotImplementedError


__all__ = ["AbstractHerder"]
