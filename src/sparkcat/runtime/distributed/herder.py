"""Kafka's ``DistributedHerder``: one worker of a cluster sharing the config, status and
offset topics, on :class:`~sparkcat.runtime.herder.base.AbstractHerder`.

The cluster's truth is the config store (:mod:`sparkcat.runtime.stores.kafka_configs`); what
this worker runs is its share of the group assignment
(:mod:`sparkcat.runtime.distributed.membership`). One thread, the herder's *tick* thread,
polls the group (rebalance callbacks arrive there) and then brings the worker in line with
the latest config snapshot and assignment (:mod:`.work`): connector instances it owns,
per connector one engine plan holding only its assigned tasks, statuses with the group
generation. Store callbacks only wake that thread.

Public methods stay synchronous. Writes that Kafka reserves for the leader
(create, config PUT/PATCH, delete, stop, restart, offsets PATCH/DELETE, internal task
configs) raise
:class:`NotLeaderError` on a follower; the REST layer (:mod:`.forwarding`) forwards them.
Pause and resume are written by any worker, as in Kafka.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.runtime.distributed import offsets, work
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.config_updates import ConfigUpdateListener
from sparkcat.runtime.distributed.protocol import ExtendedAssignment
from sparkcat.runtime.engine_api import ConnectorPlan, Engine
from sparkcat.runtime.herder.base import AbstractHerder
from sparkcat.runtime.herder.state import Live, ManagedConnector
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    valid_config,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.client import RestClient
from sparkcat.runtime.rest.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorTaskId,
    TaskInfo,
    TaskState,
    WorkerStatus,
)
from sparkcat.runtime.rest.errors import ConnectRestError
from sparkcat.runtime.stores import configs as store_configs
from sparkcat.runtime.stores.configs import ClusterConfigState, ConfigBackingStore, RestartRequest
from sparkcat.runtime.stores.statuses import (
    ConnectorStatus,
    State,
    StatusBackingStore,
    TaskStatus,
)

log = logging.getLogger(__name__)

STALE_CONFIG_MESSAGE = (
    "Cannot complete request momentarily due to stale configuration (typically caused by a "
    "concurrent config change)"
)

REBALANCE_WAIT_S = 30.0  # a write waits this long for a rebalance to end, then answers 409
WORK_CHANGE_QUIET_S = 0.3
WORK_CHANGE_MAX_DELAY_S = 2.0


class NotLeaderError(ConnectRestError):
    """A leader-only request reached a follower (Kafka's ``NotLeaderException``): the REST
    layer forwards it to ``leader_url``."""

    def __init__(self, operation: str, leader_url: str | None) -> None:
        super().__init__(f"Cannot {operation} on a follower; the leader is {leader_url}", 409)
        self.leader_url = leader_url


class NotAssignedError(ConnectRestError):
    """A request for work this worker does not run reached it (Kafka's
    ``NotAssignedException``); ``owner_url`` is the worker that runs it, when known."""

    def __init__(self, message: str, owner_url: str | None) -> None:
        super().__init__(message, 409)
        self.owner_url = owner_url


class DistributedHerder(AbstractHerder):
    """A cluster member: see the module docstring."""

    def __init__(
        self,
        worker_config: DistributedConfig,
        engine: Engine,
        offset_store: Any,
        registry: PluginRegistry,
        worker_id: str,
        config_store: ConfigBackingStore,
        status_store: StatusBackingStore,
        rest_url: str,
    ) -> None:
        super().__init__(worker_config, engine, offset_store, registry, worker_id, status_store)
        self.config = worker_config
        self.configs = config_store
        self.rest_url = rest_url
        self.member: Any = None
        self.snapshot = ClusterConfigState()
        self.assignment: ExtendedAssignment | None = None
        self.group_generation = -1
        self.rebalancing = True
        self.plans: dict[str, ConnectorPlan] = {}
        self.requested_reconfigs: set[str] = set()
        self.restarts: list[RestartRequest] = []
        self.reloads: set[str] = set()  # connectors whose provider values changed (TTL)
        self._known_work: tuple[frozenset[str], frozenset[tuple[str, int]]] | None = None
        self._work_changed_first: float | None = None
        self._work_changed_last = 0.0
        self._rejoin_at: float | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._kinds: dict[str, str] = {}
        self.rest_client = RestClient(worker_config)
        # A follower's task configs travel to the leader off the tick thread
        # (work.commit_task_configs).
        self.forwarder = ThreadPoolExecutor(4, thread_name_prefix="task-configs-to-leader")
        self.forwards: dict[str, Future[None]] = {}

    # -- lifecycle of the worker ------------------------------------------------------------
    def start(self) -> None:
        """Join the group and run the tick thread (the stores are already started)."""
        from sparkcat.runtime.distributed.membership import WorkerGroupMember

        self.configs.set_update_listener(ConfigUpdateListener(self))
        self.snapshot = self.configs.snapshot()
        self.member = WorkerGroupMember(self.config, self.rest_url, self.configs.snapshot, self)
        self.member.start()
        self._thread = threading.Thread(target=self._run, name="herder-tick", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Leave the group after stopping this worker's work (statuses UNASSIGNED)."""
        self._stopping.set()
        if self.member is not None:
            self.member.wakeup()
        if self._thread is not None:
            self._thread.join(timeout=60)
        with self._lock:
            work.release_all(self)
        self.forwarder.shutdown(wait=False, cancel_futures=True)
        if self.member is not None:
            self.member.stop()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.member.poll(0.5)
                if self._stopping.is_set():
                    break
                self.tick()
            except Exception:
                log.exception("Herder tick failed; retrying")
                self._stopping.wait(1.0)

    def tick(self) -> None:
        """One round: leader duties, then bring the local work in line with the config."""
        with self._lock:
            self.snapshot = self.configs.snapshot()
            if self.rebalancing or self.assignment is None:
                return
            if self.is_leader():
                work.leader_duties(self)
            work.reconcile(self)
            work.apply_reloads(self)
            self._rebalance_if_work_changed()
            if self._rejoin_at is not None and time.monotonic() >= self._rejoin_at:
                self._rejoin_at = None
                self.member.request_rejoin()

    def _rebalance_if_work_changed(self) -> None:
        """Connectors or committed tasks appeared or went: the leader must assign anew.

        The rejoin waits until the config topic has been quiet for ``WORK_CHANGE_QUIET_S``
        (at most ``WORK_CHANGE_MAX_DELAY_S`` after the first change), so that a script
        creating hundreds of connectors costs a rebalance per burst, not one per connector:
        a rebalance holds every write for seconds, and Kafka's herder rebalances once per
        tick in which additions arrived."""
        current = _work_of(self.snapshot)
        now = time.monotonic()
        if self._known_work is None:
            self._known_work = current
        elif current != self._known_work:
            self._known_work = current
            self._work_changed_last = now
            if self._work_changed_first is None:
                self._work_changed_first = now
        first = self._work_changed_first
        if first is None:
            return
        if now - self._work_changed_last >= WORK_CHANGE_QUIET_S or (
            now - first >= WORK_CHANGE_MAX_DELAY_S
        ):
            self._work_changed_first = None
            self.member.request_rejoin()

    # -- WorkerRebalanceListener (on the tick thread, inside poll) ------------------------------
    def on_revoked(
        self, leader: str | None, connectors: Collection[str], tasks: Collection[ConnectorTaskId]
    ) -> None:
        self.metrics.rebalance_started()
        with self._lock:
            self.rebalancing = True
            work.revoke(self, set(connectors), {(t.connector, t.task) for t in tasks})

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None:
        self.metrics.rebalance_completed(generation)
        with self._lock:
            if assignment.error != 0:
                log.info("Rebalance failed (config offset mismatch); reading the config topic")
                self.configs.refresh(30.0)
                return
            if self.configs.snapshot().offset < assignment.config_offset:
                try:
                    self.configs.refresh(30.0)
                except Exception:
                    log.warning("Could not read the config topic to offset %d; rejoining",
                                assignment.config_offset)  # fmt: skip
                    self.member.request_rejoin()
                    return
            self.assignment = assignment
            self.group_generation = generation
            self.rebalancing = False
            self.snapshot = self.configs.snapshot()
            self._known_work = _work_of(self.snapshot)
            self._work_changed_first = None
            if self.snapshot.offset > assignment.config_offset:
                # Configs newer than the leader's view: it must assign again, once the
                # burst of writes they belong to is over (see _rebalance_if_work_changed).
                self._work_changed_first = self._work_changed_last = time.monotonic()
            log.info("Joined group generation %d as %s: connectors %s, tasks %s", generation,
                     "leader" if self.is_leader() else "follower", list(assignment.connectors),
                     [str(t) for t in assignment.tasks])  # fmt: skip
            self._claim_config_writes()
            work.reconcile(self)
            if assignment.revoked_connectors or assignment.revoked_tasks:
                self.member.request_rejoin()
            if assignment.delay > 0:
                self._rejoin_at = time.monotonic() + assignment.delay / 1000.0
            self._ready.set()

    def _claim_config_writes(self) -> None:
        """KIP-618: the leader writes the config topic transactionally (``preparing`` and
        ``enabled``), fencing an older leader's writes; followers write plainly."""
        if not self.config.transactional_leader_enabled:
            return
        claim = getattr(self.configs, "claim_write_privileges", None)
        release = getattr(self.configs, "release_write_privileges", None)
        if claim is None or release is None:
            return
        if not self.is_leader():
            release()
            return
        try:
            claim(self.config.transactional_producer_id)
        except Exception:
            log.exception("Could not claim write privileges on the config topic; rejoining")
            self.member.request_rejoin()

    # -- group state ------------------------------------------------------------------------
    def is_leader(self) -> bool:
        return self.member is not None and not self.rebalancing and bool(self.member.is_leader)

    def wait_stable(self, timeout_s: float) -> bool:
        """Wait until no rebalance is under way and the leader is known; ``False`` on time-out."""
        deadline = time.monotonic() + timeout_s
        while not self._stable():
            if time.monotonic() >= deadline or self._stopping.is_set():
                return False
            time.sleep(0.1)
        return True

    def _stable(self) -> bool:
        member = self.member
        if member is None or self.rebalancing or member.rejoin_needed:
            return False
        return member.leader_url is not None

    def leader_url(self) -> str | None:
        return None if self.member is None else self.member.leader_url

    def require_leader(self, operation: str) -> None:
        """Raise unless this worker is the leader (after any rebalance under way ends)."""
        # Kafka's herder holds requests until the rebalance under way completes.
        if self.rebalancing and not self.wait_stable(REBALANCE_WAIT_S):
            raise ConnectRestError(STALE_CONFIG_MESSAGE, 409)
        if not self.is_leader():
            raise NotLeaderError(operation, self.leader_url())

    def health_check(self, timeout_s: float = 10.0) -> WorkerStatus:
        return super().health_check(timeout_s)

    # -- queries: the local view of the config topic ---------------------------------------
    def connectors(self) -> list[str]:
        return self.configs.snapshot().connectors()

    def _snapshot_config(self, name: str) -> tuple[ClusterConfigState, dict[str, str]]:
        snap = self.configs.snapshot()
        config = snap.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return snap, config

    def connector_info(self, name: str) -> ConnectorInfo:
        snap, config = self._snapshot_config(name)
        tasks = [ConnectorTaskId(c, n) for c, n in snap.tasks(name)]
        return ConnectorInfo(name, config, tasks, self.kind_of(name, config))

    def connector_config(self, name: str) -> dict[str, str]:
        return self._snapshot_config(name)[1]

    def task_configs(self, name: str) -> list[TaskInfo]:
        snap, _ = self._snapshot_config(name)
        return [
            TaskInfo(ConnectorTaskId(name, i), c) for i, c in enumerate(snap.all_task_configs(name))
        ]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status.get(name)
        config = self.configs.snapshot().connector_config(name)
        if status is None or config is None:
            raise NotFoundError(f"No status found for connector {name}")
        tasks = [
            TaskState(t.task, t.state.value, t.worker_id, t.trace)
            for t in self.status.get_all(name)
        ]
        connector = ConnectorState(status.state.value, status.worker_id, status.trace)
        return ConnectorStateInfo(name, connector, tasks, self.kind_of(name, config))

    def kind_of(self, name: str, config: Mapping[str, str]) -> Any:
        """``source`` or ``sink`` for a connector that may run on another worker."""
        class_name = config.get("connector.class", "")
        kind = self._kinds.get(class_name)
        if kind is None:
            from sparkcat.runtime.herder.validation import connector_kind

            try:
                kind = connector_kind(self.registry.resolve(class_name, "connector"))
            except ConnectError:
                return "unknown"
            self._kinds[class_name] = kind
        return kind

    # -- writes -----------------------------------------------------------------------------
    def create_connector(
        self,
        name: str,
        config: Mapping[str, str],
        initial_state: str | None = None,
        initial_offsets: Any = None,
    ) -> ConnectorInfo:
        """On the leader: any ``initial_offsets`` (KIP-995) first, then the config."""
        return offsets.create_connector(self, name, config, initial_state, initial_offsets)

    def update_connector_config(
        self, name: str, config: Mapping[str, str]
    ) -> tuple[bool, ConnectorInfo]:
        given = check_connector_name(name, dict(config))
        self.require_leader("update a connector config")
        validation = validate_connector_config(given, self.registry, self.worker_config)
        props = valid_config(validation, given)
        created = not self.configs.contains(name)
        self.configs.put_connector_config(name, props, None)
        snap = self.configs.snapshot()
        tasks = [ConnectorTaskId(c, n) for c, n in snap.tasks(name)]
        return created, ConnectorInfo(name, props, tasks, validation.kind)

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        self.require_leader("patch a connector config")
        _, config = self._snapshot_config(name)
        for key, value in patch.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        return self.update_connector_config(name, config)[1]

    def delete_connector(self, name: str) -> None:
        self.require_leader("delete a connector")
        self._snapshot_config(name)
        self.configs.remove_connector_config(name)
        self.status.remove(name)

    def pause_connector(self, name: str) -> None:
        self._target(name, store_configs.TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._target(name, store_configs.TargetState.STARTED)

    def _target(self, name: str, state: store_configs.TargetState) -> None:
        if not self.configs.contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        self.configs.put_target_state(name, state)

    def stop_connector(self, name: str) -> None:
        """Kafka's order: an empty set of task configs, then the STOPPED target state."""
        self.require_leader("stop a connector")
        if not self.configs.contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        self.configs.put_task_configs(name, [])
        self.configs.put_target_state(name, store_configs.TargetState.STOPPED)

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStateInfo | None:
        """KIP-745 through a ``restart-connector-<c>`` record that every worker acts on."""
        self.require_leader("restart a connector")
        snap = self.configs.snapshot()
        config = snap.connector_config(name)
        if config is None:
            raise NotFoundError(f"Unknown connector: {name}")
        self.configs.put_restart_request(RestartRequest(name, only_failed, include_tasks))
        if not include_tasks and not only_failed:
            return None
        return work.restart_plan(self, name, config, include_tasks, only_failed)

    def add_restart_request(self, request: RestartRequest) -> None:
        """A ``restart-connector-<c>`` record (the config store's reader thread)."""
        with self._state_lock:
            self.restarts.append(request)

    def _reload_connector(self, name: str) -> None:
        """A TTL expired with changed values (a timer thread): the tick thread restarts the
        connector here (:meth:`reload_connector`) once no rebalance is under way."""
        with self._state_lock:
            self.reloads.add(name)
        if self.member is not None:
            self.member.wakeup()

    def reload_connector(self, name: str) -> None:
        """Kafka's ``restartConnector(delayMs, name, callback)``, the reload path: restart the
        connector where it runs, whatever this worker's role, with its tasks running here (so
        they resolve the changed values afresh). An unknown connector raises
        :class:`NotFoundError`; one assigned elsewhere :class:`NotAssignedError` on the
        leader and :class:`NotLeaderError` on a follower, as in Kafka."""
        with self._lock:
            if self.rebalancing:
                raise ConnectRestError(STALE_CONFIG_MESSAGE, 409)
            if not self.configs.snapshot().contains(name):
                raise NotFoundError(f"Unknown connector: {name}")
            assignment = self.assignment
            if assignment is not None and name in assignment.connectors:
                work.restart_here(self, RestartRequest(name, False, True))
                return
            if self.is_leader():
                raise NotAssignedError(
                    "Cannot restart connector since it is not assigned to this member",
                    self.member.owner_url(name),
                )
            raise NotLeaderError("restart a connector", self.leader_url())

    def restart_task(self, name: str, task: int) -> None:
        with self._lock:
            if (name, task) in work.assigned_tasks(self):
                work.restart_local_task(self, name, task)
                return
        self.require_leader("restart a task")
        snap = self.configs.snapshot()
        if not snap.contains(name):
            raise NotFoundError(f"Unknown connector: {name}")
        if (name, task) not in snap.tasks(name):
            raise NotFoundError(f"Unknown task: {name}-{task}")
        owner = self.member.owner_url(ConnectorTaskId(name, task))
        if owner is None:
            raise ConnectRestError(
                "Cannot complete request because of a conflicting operation (e.g. worker "
                "rebalance)",
                409,
            )
        status, answer = self.rest_client.send(
            "POST", f"{owner.rstrip('/')}/connectors/{name}/tasks/{task}/restart", b"", {}
        )
        if status >= 300:
            raise ConnectRestError(answer.decode("utf-8", "replace"), status)

    def runs_task(self, name: str, task: int) -> bool:
        """Whether task ``name``-``task`` is in this worker's plans."""
        with self._lock:
            plan = self.plans.get(name)
            return plan is not None and task in plan.task_ids()

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """``POST /connectors/{c}/tasks`` (signature checked by the REST layer)."""
        self.require_leader("write task configs")
        if not self.configs.contains(name):
            raise NotFoundError(f"Unknown connector: {name}")
        self.configs.put_task_configs(name, configs)

    def fence_zombie_source_tasks(self, name: str) -> None:
        """``PUT /connectors/{c}/fence`` (signature checked by the REST layer): the leader
        fences the previous task generation's producers (KIP-618)."""
        if not self.config.exactly_once_source_enabled:
            raise ConnectRestError(
                "Exactly-once source support is not enabled on this cluster "
                "(exactly.once.source.support is not 'enabled')",
                400,
            )
        self.require_leader("fence zombie source tasks")
        from sparkcat.runtime.distributed.exactly_once import fence_zombies

        fence_zombies(self, name)

    def request_task_reconfiguration(self, name: str) -> None:
        with self._lock:
            self.requested_reconfigs.add(name)
        if self.member is not None:
            self.member.wakeup()

    # -- offsets (KIP-875): the shared operations; the connector as the config topic has it
    def _offsets_subject(self, name: str) -> tuple[str, dict[str, str]]:
        return offsets.offsets_subject(self, name)

    def _stopped(self, name: str) -> ManagedConnector:
        return offsets.stopped_connector(self, name)

    # -- hooks of AbstractHerder --------------------------------------------------------------
    def task_configs_pending(self, name: str) -> bool:
        """The leader has not answered the task configs last sent to it yet."""
        pending = self.forwards.get(name)
        return pending is not None and not pending.done()

    def apply_task_configs(
        self, managed: ManagedConnector, configs: list[dict[str, str]], force: bool
    ) -> None:
        work.commit_task_configs(self, managed, configs, force)

    def put_connector_status(self, name: str, state: State, trace: str | None = None) -> None:
        generation = max(self.group_generation, 0)
        self.status.put(ConnectorStatus(name, state, self.worker_id, generation, trace))

    def _live_task(self, connector: str, task: int) -> Live | None:
        live = super()._live_task(connector, task)
        plan = self.plans.get(connector)
        if live is None or plan is None or task not in plan.task_ids():
            return None
        return live

    def take_restarts(self) -> list[RestartRequest]:
        """The restart requests read from the config topic since the last call."""
        with self._state_lock:
            requests, self.restarts = self.restarts, []
        return requests

    def take_reloads(self) -> set[str]:
        """The connectors whose provider values changed (TTL) since the last call."""
        with self._state_lock:
            names, self.reloads = self.reloads, set()
        return names

    def task_statuses(self, name: str, tasks: Sequence[int], state: State) -> None:
        generation = max(self.group_generation, 0)
        for task in tasks:
            self.status.put_task(TaskStatus(name, task, state, self.worker_id, generation))


def _work_of(snap: ClusterConfigState) -> tuple[frozenset[str], frozenset[tuple[str, int]]]:
    """The connectors and committed tasks the leader has to assign."""
    connectors = snap.connectors()
    return frozenset(connectors), frozenset(t for c in connectors for t in snap.tasks(c))


__all__ = ["STALE_CONFIG_MESSAGE", "DistributedHerder", "NotAssignedError", "NotLeaderError"]
