"""Restarts (KIP-745): ``POST /connectors/{name}/restart`` and ``.../tasks/{task}/restart``.

A request restarts the connector instance iff ``not only_failed or state == FAILED`` and a
task iff ``include_tasks and (not only_failed or task state == FAILED)``. With both flags
false it is the legacy restart (connector instance only, answered 204 with no body);
otherwise the answer is the *plan*: the current status with ``RESTARTING`` for every instance
being restarted. Restarted instances show RESTARTING until they report RUNNING or FAILED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.runtime.rest.entities import ConnectorState, ConnectorStateInfo, TaskState
from sparkcat.runtime.stores.statuses import ConnectorStatus, State, TaskStatus

if TYPE_CHECKING:
    import threading

    from sparkcat.runtime.herder.state import ManagedConnector
    from sparkcat.runtime.stores.statuses import StatusBackingStore
    from sparkcat.runtime.worker import Worker

_RESTARTING = State.RESTARTING.value


class HerderRestartMixin:
    """Restart operations of :class:`~sparkcat.runtime.herder.base.AbstractHerder`."""

    # Provided by AbstractHerder.
    _lock: threading.RLock
    _state_lock: threading.Lock
    _connectors: dict[str, ManagedConnector]
    _dead_queries: set[str]
    status: StatusBackingStore
    worker: Worker
    worker_id: str

    if TYPE_CHECKING:

        def _stop_instance(self, managed: ManagedConnector) -> None: ...
        def _start_instance(self, managed: ManagedConnector) -> bool: ...
        def _put_connector(self, name: str, state: State, trace: str | None = None) -> None: ...
        def reconfigure_tasks(self, managed: ManagedConnector, force: bool = False) -> None: ...

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStateInfo | None:
        """Restart per KIP-745; ``None`` for the legacy form (both flags false)."""
        from sparkcat.runtime.herder.state import TargetState

        with self._lock:
            if not include_tasks and not only_failed:
                managed = self._connectors.get(name)
                if managed is None:
                    raise NotFoundError(f"Connector {name} not found")
                self._restart_instance(managed)
                return None
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Unknown connector: {name}")
            status = self.status.get(name)
            if status is None:
                raise NotFoundError(f"Status for connector {name} not found")
            restart_connector = not only_failed or status.state is State.FAILED
            tasks = self.status.get_all(name)
            restart_tasks = [
                t.task for t in tasks
                if include_tasks and (not only_failed or t.state is State.FAILED)
            ]  # fmt: skip
            plan = ConnectorStateInfo(
                name,
                ConnectorState(
                    _RESTARTING if restart_connector else status.state.value,
                    status.worker_id,
                    None if restart_connector else status.trace,
                ),
                [
                    TaskState(t.task, _RESTARTING, t.worker_id)
                    if t.task in restart_tasks
                    else TaskState(t.task, t.state.value, t.worker_id, t.trace)
                    for t in tasks
                ],
                managed.kind,
            )
            if restart_connector:
                self.status.put(ConnectorStatus(name, State.RESTARTING, self.worker_id))
            for task in restart_tasks:
                self.status.put_task(
                    TaskStatus(name, task, State.RESTARTING, self.worker_id, managed.generation)
                )
            generation = managed.generation
            if restart_connector:
                self._restart_instance(managed)
            if (
                restart_tasks
                and managed.generation == generation
                and managed.target is TargetState.STARTED
            ):
                self._restart_tasks(managed, restart_tasks)
            return plan

    def restart_task(self, name: str, task: int) -> None:
        """Run one task again with its current config (POST .../tasks/{task}/restart)."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Connector {name} not found")
            if not 0 <= task < len(managed.task_configs):
                raise NotFoundError(f"Task {name}-{task} not found")
            self._restart_tasks(managed, [task])

    def _restart_tasks(self, managed: ManagedConnector, tasks: list[int]) -> None:
        """Restart ``tasks`` of one connector; an engine that restarts several at once gets
        them in one call (one lease boundary for all, not one per task)."""
        try:
            self.worker.restart_tasks(managed.name, tasks)
        except Exception as exc:
            failed = ", ".join(f"{managed.name}-{t}" for t in tasks)
            raise ConnectError(f"Failed to start task: {failed}") from exc
        from sparkcat.runtime.herder.state import TargetState

        state = State.RUNNING if managed.target is TargetState.STARTED else State.PAUSED
        for task in tasks:
            self.status.put_task(
                TaskStatus(managed.name, task, state, self.worker_id, managed.generation)
            )

    def _restart_instance(self, managed: ManagedConnector) -> None:
        """Stop and start the connector instance; in the STARTED state regenerate its tasks
        (a new plan is pushed if they changed or the engine lost the connector's query)."""
        from sparkcat.runtime.herder.state import TargetState

        self._stop_instance(managed)
        if managed.target is TargetState.STOPPED:
            self._put_connector(managed.name, State.STOPPED)
            return
        if managed.target is TargetState.PAUSED:
            self._put_connector(managed.name, State.PAUSED)
            return
        if self._start_instance(managed):
            with self._state_lock:
                dead = managed.name in self._dead_queries
                self._dead_queries.discard(managed.name)
            self.reconfigure_tasks(managed, force=dead or not managed.planned)


__all__ = ["HerderRestartMixin"]
