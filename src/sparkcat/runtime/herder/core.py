"""The state every concern of a herder works on, defined once.

:class:`HerderCore` is the base of the concern classes (:mod:`.listener`, :mod:`.topics`,
:mod:`.offsets`, :mod:`.config`) and so of
:class:`~sparkcat.runtime.herder.base.AbstractHerder`: they inherit these members instead of
declaring their host's. Its public methods are the narrow interface through which the
distributed herder's work module (:mod:`sparkcat.runtime.distributed.work`) changes the
herder's records; they expect the herder lock held (the caller's: a tick of the herder).

Two locks: the re-entrant herder lock serialises the herder's public methods (and is held
while the herder waits for the engine); the small state lock guards what engine callbacks
read and write from engine threads (:attr:`HerderCore.live`, record counts, task metrics),
so a callback never waits for a stop in progress.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from sparkcat.runtime.engine_api import Engine
from sparkcat.runtime.herder.state import Live, ManagedConnector
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.entities import ConfigInfos, ConnectorInfo
from sparkcat.runtime.stores.statuses import (
    ConnectorStatus,
    State,
    StatusBackingStore,
    StatusStore,
    TaskStatus,
)
from sparkcat.runtime.worker import Worker
from sparkcat.runtime.worker_config import WorkerConfig


class HerderCore:
    """A herder's records of connectors and the parts it works with."""

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
        self.metrics = self.worker.metrics
        self._lock = threading.RLock()
        self._connectors: dict[str, ManagedConnector] = {}
        self._state_lock = threading.Lock()
        self._live: dict[str, Live] = {}
        self._records: dict[str, int] = {}
        self._task_metrics: dict[str, dict[int, dict[str, float]]] = {}  # task-error-metrics
        self._dead_queries: set[str] = set()  # connectors whose query the engine lost

    # -- the records of connectors whose instance runs here (herder lock held) ---------------
    def managed(self, name: str) -> ManagedConnector | None:
        return self._connectors.get(name)

    def managed_connectors(self) -> Mapping[str, ManagedConnector]:
        """A snapshot of the records, by name."""
        return dict(self._connectors)

    def add_managed(self, managed: ManagedConnector) -> None:
        self._connectors[managed.name] = managed

    def remove_managed(self, name: str) -> ManagedConnector | None:
        return self._connectors.pop(name, None)

    # -- what engine callbacks see (any thread) -------------------------------------------------
    def set_live(self, name: str, live: Live) -> None:
        with self._state_lock:
            self._live[name] = live

    def forget_live(self, name: str) -> None:
        """Engine callbacks about ``name`` are ignored from now on."""
        with self._state_lock:
            self._live.pop(name, None)

    # -- statuses -------------------------------------------------------------------------------
    def put_connector_status(self, name: str, state: State, trace: str | None = None) -> None:
        """This worker's status record of connector ``name`` (generation 0: standalone)."""
        self.status.put(ConnectorStatus(name, state, self.worker_id, 0, trace))

    def has_task_status(self, connector: str, task: int, state: State) -> bool:
        """Whether the task's latest status is ``state``, written by this worker."""
        current: TaskStatus | None = self.status.get_task(connector, task)
        return (
            current is not None and current.state is state and current.worker_id == self.worker_id
        )

    # -- hooks the herders implement --------------------------------------------------------------
    def update_connector_config(
        self, name: str, config: Mapping[str, str]
    ) -> tuple[bool, ConnectorInfo]:
        raise NotImplementedError

    def validate_config(self, config: Mapping[str, str | None]) -> ConfigInfos:
        raise NotImplementedError

    def _reload_connector(self, name: str) -> None:
        """``config.action.reload=restart``: a provider's values of ``name`` changed after
        their TTL (called from a timer thread)."""
        raise NotImplementedError


__all__ = ["HerderCore"]
