"""Kafka's ``StandaloneHerder``: one worker process runs every connector and all its tasks.

Configs and statuses live in memory (statuses in the status store given, MirrorMaker's in a
topic), source offsets in the worker's offset store. This module owns the lifecycle
(create/update/delete, pause/resume/stop, task generation), the queries answered from the
herder's own records and the restarts (KIP-745): a request restarts the connector instance
iff ``not only_failed or state == FAILED`` and a task iff ``include_tasks and (not
only_failed or task state == FAILED)``; with both flags false it is the legacy restart
(connector instance only, answered 204 with no body), otherwise the answer is the *plan*:
the current status with ``RESTARTING`` for every instance being restarted, until each
reports RUNNING or FAILED.

Task statuses are set to RUNNING (PAUSED) when a plan is handed to the engine through the
:class:`~sparkcat.runtime.worker.Worker`; the engine then reports each lease's outcome
(RUNNING, or FAILED with the task's trace).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.herder.base import AbstractHerder
from sparkcat.runtime.herder.state import Live, ManagedConnector, TargetState, parse_initial_state
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    valid_config,
    validate_connector_config,
)
from sparkcat.runtime.rest.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorTaskId,
    TaskInfo,
    TaskState,
)
from sparkcat.runtime.stores.statuses import ConnectorStatus, State, TaskStatus

log = logging.getLogger(__name__)

_RESTARTING = State.RESTARTING.value


class StandaloneHerder(AbstractHerder):
    """Runs every connector in this worker process (see the module docstring)."""

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
                self.stop_instance(old)
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
            self.stop_instance(managed)
            self._set_live(managed)
            self.put_connector_status(name, State.PAUSED)
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
            if not self.start_instance(managed):
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
            self.stop_instance(managed)
            if managed.planned:
                self.worker.stop_tasks(name)
                managed.planned = False
            managed.task_configs = []
            self._set_live(managed)
            self.status.remove_tasks(name)
            self.put_connector_status(name, State.STOPPED)

    def request_task_reconfiguration(self, name: str) -> None:
        """Regenerate the connector's task configs; a change is pushed to the engine as a
        new plan with the next generation."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                log.error("Task that requested reconfiguration does not exist: %s", name)
                return
            self.reconfigure_tasks(managed)

    # -- restarts (KIP-745) ------------------------------------------------------------------
    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStateInfo | None:
        """Restart per KIP-745; ``None`` for the legacy form (both flags false)."""
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
        state = State.RUNNING if managed.target is TargetState.STARTED else State.PAUSED
        for task in tasks:
            self.status.put_task(
                TaskStatus(managed.name, task, state, self.worker_id, managed.generation)
            )

    def _restart_instance(self, managed: ManagedConnector) -> None:
        """Stop and start the connector instance; in the STARTED state regenerate its tasks
        (a new plan is pushed if they changed or the engine lost the connector's query)."""
        self.stop_instance(managed)
        if managed.target is TargetState.STOPPED:
            self.put_connector_status(managed.name, State.STOPPED)
            return
        if managed.target is TargetState.PAUSED:
            self.put_connector_status(managed.name, State.PAUSED)
            return
        if self.start_instance(managed):
            with self._state_lock:
                dead = managed.name in self._dead_queries
                self._dead_queries.discard(managed.name)
            self.reconfigure_tasks(managed, force=dead or not managed.planned)

    def _reload_connector(self, name: str) -> None:
        """``config.action.reload=restart``: a provider's values changed after their TTL."""
        try:
            self.restart_connector(name, include_tasks=True)
        except NotFoundError:
            self.worker.config_transformer.cancel(name)
        except ConnectError as exc:  # e.g. a distributed follower: the leader restarts
            log.warning("Could not restart connector %s after its config changed: %s", name, exc)

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
            self.put_connector_status(managed.name, State.STOPPED)
            return
        if managed.target is TargetState.PAUSED:
            # Kafka initialises a connector created PAUSED but neither starts it nor its tasks.
            self.ensure_instance(managed)
            self.put_connector_status(managed.name, State.PAUSED)
            return
        if self.start_instance(managed):
            self.reconfigure_tasks(managed, force=True)

    def apply_task_configs(
        self, managed: ManagedConnector, configs: list[dict[str, str]], force: bool
    ) -> None:
        """New task configs (or a changed connector config, or ``force``) become a plan with
        the next generation."""
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
        self.set_live(
            managed.name,
            Live(managed.target, len(managed.task_configs), max(managed.generation, 0)),
        )

    def _set_tasks(self, managed: ManagedConnector, state: State) -> None:
        generation = max(managed.generation, 0)
        for task in range(len(managed.task_configs)):
            self.status.put_task(TaskStatus(managed.name, task, state, self.worker_id, generation))
            self.metrics.task_state(managed.name, task, state.value)


__all__ = ["StandaloneHerder"]
