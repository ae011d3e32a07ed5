"""What a distributed worker runs: its share of the assignment, kept in line with the config.

Plain functions over a :class:`~sparkcat.runtime.distributed.herder.DistributedHerder`,
called on its tick thread with the herder lock held. They use the herder's public members
only: its records of connectors and what engine callbacks see through
:class:`~sparkcat.runtime.herder.core.HerderCore`'s interface, connector instances through
``start_instance``/``stop_instance``/``reconfigure_tasks``, tasks through its
:class:`~sparkcat.runtime.worker.Worker`.

- :func:`reconcile` — connector instances this worker owns follow the config snapshot and
  target state (the owner generates task configs and has the leader write them); per
  connector, one engine plan runs exactly the tasks assigned here. A plan is replaced in
  place (the engine ends the in-flight lease, which commits, then runs the new set), so
  tasks that stay keep their query.
- :func:`revoke` — what the leader took away stops now, its statuses become UNASSIGNED.
- :func:`leader_duties` — the session key (written when missing, rotated per
  ``inter.worker.key.ttl.ms``).
- :func:`commit_task_configs` — the owner's task configs written by the leader.
- restarts (KIP-745) from ``restart-connector-<c>`` records, and config-provider reloads
  (:func:`apply_reloads`): the worker running a connector restarts it when a TTL expired
  with changed values, whatever its role.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

import orjson

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.runtime.distributed import exactly_once
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.herder.state import Live, ManagedConnector, TargetState
from sparkcat.runtime.herder.validation import connector_kind
from sparkcat.runtime.rest.entities import ConnectorState, ConnectorStateInfo, TaskState
from sparkcat.runtime.stores.configs import ClusterConfigState, RestartRequest
from sparkcat.runtime.stores.configs import SessionKey as StoredSessionKey
from sparkcat.runtime.stores.statuses import ConnectorStatus, State, TaskStatus

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder

log = logging.getLogger(__name__)

FORWARD_RETRY_BACKOFF_S = 1.0


def assigned_tasks(herder: DistributedHerder) -> set[tuple[str, int]]:
    assignment = herder.assignment
    if assignment is None:
        return set()
    return {(t.connector, t.task) for t in assignment.tasks}


def _target(snap: ClusterConfigState, name: str) -> TargetState:
    state = snap.target_state(name)
    return TargetState.STARTED if state is None else TargetState(state.value)


# -- reconcile ----------------------------------------------------------------------------
def reconcile(herder: DistributedHerder) -> None:
    """Bring connector instances and task plans in line with snapshot and assignment."""
    snap = herder.snapshot
    assignment = herder.assignment
    if assignment is None:
        return
    mine = set(assignment.connectors)
    for name in list(herder.managed_connectors()):
        if name not in mine or not snap.contains(name):
            _drop_connector(herder, name, deleted=not snap.contains(name))
    for name in sorted(mine):
        if _rebalance_waits(herder):
            return
        if snap.contains(name):
            _sync_connector(herder, snap, name)
    _apply_restarts(herder, snap)
    tasks: dict[str, list[int]] = {}
    for connector, task in assigned_tasks(herder):
        tasks.setdefault(connector, []).append(task)
    for name in sorted(set(herder.plans) | set(tasks)):
        if _rebalance_waits(herder):
            return
        _sync_tasks(herder, snap, name, sorted(tasks.get(name, [])))
    _reassert_statuses(herder)


def _rebalance_waits(herder: DistributedHerder) -> bool:
    """A rebalance has begun: leave the rest of the reconciliation to the tick after it.

    Starting hundreds of connectors takes the tick thread seconds, and it is the thread that
    rejoins the group; a member that rejoins late misses the round (the embedded broker closes
    it after half a session timeout, Kafka's after ``rebalance.timeout.ms``), falls out of the
    group and loses its work, and every miss costs the whole group another round. Stopping
    work (revocations, deletions) is never deferred."""
    member = herder.member
    return member is not None and bool(member.rejoin_needed)


def _unassigned_by_another(
    herder: DistributedHerder, status: ConnectorStatus | TaskStatus | None
) -> bool:
    return (
        status is not None
        and status.state is State.UNASSIGNED
        and status.worker_id != herder.worker_id
    )


_HELD = {TargetState.PAUSED: State.PAUSED, TargetState.STOPPED: State.STOPPED}


def _reassert_statuses(herder: DistributedHerder) -> None:
    """Work this worker still holds, whose last status is another worker's UNASSIGNED, is
    reported again: a worker that lost work late (its revocation report written after the
    new owner's record, with a newer generation, e.g. when two members held a connector
    for one generation during a burst of rebalances) must not leave it UNASSIGNED for good.
    Paused and stopped connectors too: their record is written once, on the transition."""
    for name, managed in herder.managed_connectors().items():
        if not _unassigned_by_another(herder, herder.status.get(name)):
            continue
        if managed.target is TargetState.STARTED:
            if managed.started:  # a FAILED one keeps the record of its failure
                herder.put_connector_status(name, State.RUNNING)
        else:
            herder.put_connector_status(name, _HELD[managed.target])
    for name, plan in herder.plans.items():
        stale = [t for t in plan.task_ids()
                 if _unassigned_by_another(herder, herder.status.get_task(name, t))]  # fmt: skip
        if stale:
            herder.task_statuses(name, stale, State.PAUSED if plan.paused else State.RUNNING)


def _drop_connector(herder: DistributedHerder, name: str, deleted: bool) -> None:
    managed = herder.remove_managed(name)
    if managed is None:
        return
    herder.worker.shut_down_connector(managed)  # a reload is for the worker that runs it
    if deleted:
        herder.status.remove(name)
        if name not in herder.plans:  # else once its tasks here stopped (_sync_tasks)
            herder.reset_deleted_connector_topics(name)
    else:
        generation = max(herder.group_generation, 0)
        herder.status.put_safe(ConnectorStatus(name, State.UNASSIGNED, herder.worker_id,
                                               generation))  # fmt: skip


def _sync_connector(herder: DistributedHerder, snap: ClusterConfigState, name: str) -> None:
    config = snap.connector_config(name) or {}
    target = _target(snap, name)
    managed = herder.managed(name)
    fresh = managed is None or managed.config != config
    if managed is not None and fresh:
        _drop_connector(herder, name, deleted=False)
    if fresh:
        cls = herder.registry.resolve(config.get("connector.class", ""), "connector")
        managed = ManagedConnector(name, config, connector_kind(cls), cls, TargetState.STOPPED)
        managed.task_configs = snap.all_task_configs(name)
        herder.add_managed(managed)
    assert managed is not None
    if fresh or managed.target is not target:
        _apply_target(herder, managed, target, snap)
    elif name in herder.requested_reconfigs and target is TargetState.STARTED:
        herder.requested_reconfigs.discard(name)
        herder.reconfigure_tasks(managed)
    elif target is TargetState.STARTED and managed.started and managed.applied_config is None:
        herder.reconfigure_tasks(managed)  # the last attempt to write them failed


def _apply_target(
    herder: DistributedHerder, managed: ManagedConnector, target: TargetState,
    snap: ClusterConfigState,
) -> None:  # fmt: skip
    managed.target = target
    if target is TargetState.STARTED:
        if not managed.started and herder.start_instance(managed):
            herder.reconfigure_tasks(managed)
    elif target is TargetState.PAUSED:
        herder.stop_instance(managed)
        herder.ensure_instance(managed)
        herder.put_connector_status(managed.name, State.PAUSED)
    else:
        herder.stop_instance(managed)
        herder.put_connector_status(managed.name, State.STOPPED)
        herder.status.remove_tasks(managed.name)


def commit_task_configs(
    herder: DistributedHerder, managed: ManagedConnector, configs: list[dict[str, str]],
    force: bool,
) -> None:  # fmt: skip
    """The owner's part of task generation, once the connector gave ``configs``
    (:meth:`~sparkcat.runtime.herder.base.AbstractHerder.reconfigure_tasks`): if they differ
    from the committed ones, have the leader write them (Kafka's ``reconfigureConnector``)."""
    managed.applied_config = None
    committed = herder.snapshot.all_task_configs(managed.name)
    if force or configs != committed or managed.name in herder.snapshot.inconsistent_connectors:
        if not herder.is_leader():
            # Off the tick thread, as Kafka forwards them: the leader may hold the request
            # through a rebalance, and this thread must rejoin meanwhile. A later tick sees
            # them committed (or sends them again).
            herder.forwards[managed.name] = herder.forwarder.submit(
                _forward_task_configs, herder, managed.name, configs
            )
            return
        try:
            herder.configs.put_task_configs(managed.name, configs)
        except Exception as exc:
            log.warning("Could not write the task configs of %s (retrying): %s", managed.name,
                        exc)  # fmt: skip
            return
    managed.task_configs = configs
    managed.applied_config = dict(managed.config)


def _forward_task_configs(
    herder: DistributedHerder, name: str, configs: list[dict[str, str]]
) -> None:
    try:
        write_task_configs(herder, name, configs)
    except Exception as exc:
        log.warning("Could not send the task configs of %s to the leader (retrying): %s", name,
                    exc)  # fmt: skip
        time.sleep(FORWARD_RETRY_BACKOFF_S)
    if herder.member is not None:
        herder.member.wakeup()


def write_task_configs(herder: DistributedHerder, name: str, configs: list[dict[str, str]]) -> None:
    """The leader writes them; a follower sends them to the leader's internal endpoint."""
    if herder.is_leader():
        herder.configs.put_task_configs(name, configs)
        return
    leader = herder.leader_url()
    if leader is None:
        raise ConnectionError("no known leader")
    from sparkcat.runtime.distributed.signing import sign

    body = orjson.dumps(configs)
    headers = {"Content-Type": "application/json"}
    key = herder.snapshot.session_key
    if key is not None:
        algorithm = herder.config.get_string("inter.worker.signature.algorithm")
        headers.update(sign(key.key, body, algorithm))
    # The leader holds a write while it rebalances (up to 30 s), then answers.
    url = f"{leader.rstrip('/')}/connectors/{name}/tasks?forward=true"
    status, text = herder.rest_client.send("POST", url, body, headers, timeout_s=60.0)
    if status >= 300:
        raise ConnectionError(f"leader answered {status}: {text.decode('utf-8', 'replace')}")


def _sync_tasks(
    herder: DistributedHerder, snap: ClusterConfigState, name: str, tasks: list[int]
) -> None:
    configs = snap.all_task_configs(name)
    config = snap.connector_config(name)
    target = _target(snap, name)
    tasks = [t for t in tasks if t < len(configs)]
    if config is None or not tasks or target is TargetState.STOPPED:
        if herder.plans.pop(name, None) is not None:
            herder.worker.stop_tasks(name)
        herder.forget_live(name)
        if config is None:
            herder.reset_deleted_connector_topics(name)
        return
    plan = ConnectorPlan(
        name, herder.kind_of(name, config), dict(config), configs,
        snap.task_config_generation(name) or 0, target is TargetState.PAUSED, tuple(tasks),
    )  # fmt: skip
    if herder.plans.get(name) == plan:
        return
    if not exactly_once.ready_to_start(herder, name, plan.kind):
        # KIP-618: the new generation waits until the old one is fenced (next tick); the
        # old one's tasks stop now rather than be failed by the fencing.
        if herder.plans.pop(name, None) is not None:
            herder.worker.stop_tasks(name)
        return
    previous = herder.plans.get(name)
    state = State.PAUSED if plan.paused else State.RUNNING
    herder.set_live(name, Live(target, len(configs), max(herder.group_generation, 0)))
    herder.status.remove_tasks(name, keep_below=len(configs))
    herder.task_statuses(
        name, [t for t in tasks if _report_needed(herder, previous, plan, t, state)], state
    )
    try:
        herder.worker.start_tasks(plan, herder, _started_tasks(previous, plan))
    except Exception as exc:
        log.exception("Could not start the tasks of %s", name)
        for task in tasks:
            herder.on_task_failed(name, task, f"Could not start the task: {exc}")
        return
    herder.plans[name] = plan


def _started_tasks(previous: ConnectorPlan | None, plan: ConnectorPlan) -> list[int]:
    """The tasks ``plan`` starts on this worker (Kafka's task-startup metrics count each
    ``Worker.startTask``): those new here, or all of them when the plan's configs changed."""
    if previous is None or dataclasses.replace(previous, tasks=None) != dataclasses.replace(
        plan, tasks=None
    ):
        return list(plan.task_ids())
    return [t for t in plan.task_ids() if t not in previous.task_ids()]


def _report_needed(
    herder: DistributedHerder,
    previous: ConnectorPlan | None,
    plan: ConnectorPlan,
    task: int,
    state: State,
) -> bool:
    """Whether ``task`` of a new plan gets a status record. A task that stays while another
    task of its connector comes or goes keeps its record and generation, as in Kafka,
    unless its record says something else (e.g. FAILED, which the new plan runs again)."""
    if previous is None or task not in previous.task_ids():
        return True
    if dataclasses.replace(previous, tasks=None) != dataclasses.replace(plan, tasks=None):
        return True
    return not herder.has_task_status(plan.name, task, state)


# -- revocation and shutdown ----------------------------------------------------------------
def revoke(herder: DistributedHerder, connectors: set[str], tasks: set[tuple[str, int]]) -> None:
    """Stop what the leader revoked now: connector instances, and the revoked tasks' leases
    (they end early and commit); the rest of each plan keeps running."""
    generation = max(herder.group_generation, 0)
    for name in connectors:
        if herder.managed(name) is not None:
            _drop_connector(herder, name, deleted=False)
    by_connector: dict[str, set[int]] = {}
    for connector, task in tasks:
        by_connector.setdefault(connector, set()).add(task)
    stopping: list[str] = []
    for name, gone in list(by_connector.items()):
        plan = herder.plans.get(name)
        if plan is None:
            del by_connector[name]
            continue
        keep = tuple(t for t in plan.task_ids() if t not in gone)
        if keep:
            plan = ConnectorPlan(plan.name, plan.kind, plan.connector_config, plan.task_configs,
                                 plan.generation, plan.paused, keep)  # fmt: skip
            herder.worker.start_tasks(plan, herder, started=[])
            herder.plans[name] = plan
        else:
            stopping.append(name)
            del herder.plans[name]
    # All at once, as Kafka's stopAndAwaitTasks: a worker shutting down with hundreds of
    # tasks waits task.shutdown.graceful.timeout.ms once, not once per connector.
    herder.worker.stop_tasks_of(stopping)
    for name, gone in by_connector.items():
        for task in sorted(gone):
            herder.status.put_task_safe(
                TaskStatus(name, task, State.UNASSIGNED, herder.worker_id, generation)
            )
    # A connector deleted during the rebalance: its topics go now that its work here stopped.
    latest = herder.configs.snapshot()
    for name in (connectors | set(by_connector)) - set(herder.plans):
        if not latest.contains(name):
            herder.forget_live(name)
            herder.reset_deleted_connector_topics(name)


def release_all(herder: DistributedHerder) -> None:
    """Worker shutdown: everything stops, statuses UNASSIGNED (Kafka's ``onShutdown``)."""
    revoke(
        herder,
        set(herder.managed_connectors()),
        {(name, t) for name, plan in herder.plans.items() for t in plan.task_ids()},
    )


# -- leader duties -----------------------------------------------------------------------------
def leader_duties(herder: DistributedHerder) -> None:
    """Write the session key when there is none or it expired (``inter.worker.key.ttl.ms``)."""
    if herder.config.get_string("connect.protocol") != "sessioned":
        return
    now_ms = int(time.time() * 1000)
    ttl_ms = herder.config.get_int("inter.worker.key.ttl.ms")
    key = herder.snapshot.session_key
    if key is not None and key.creation_timestamp + ttl_ms > now_ms:
        return
    from sparkcat.runtime.distributed.signing import SessionKey

    algorithm = herder.config.get_string("inter.worker.key.generation.algorithm")
    size = herder.config.get("inter.worker.key.size")
    fresh = SessionKey.generate(algorithm, None if size is None else int(size), now_ms)
    herder.configs.put_session_key(StoredSessionKey(fresh.key, fresh.algorithm, now_ms))
    log.info("Wrote a new session key (%s)", algorithm)


# -- restarts (KIP-745) ---------------------------------------------------------------------
def restart_plan(
    herder: DistributedHerder, name: str, config: dict[str, str], include_tasks: bool,
    only_failed: bool,
) -> ConnectorStateInfo:  # fmt: skip
    """The 202 body: what the restart record will restart, shown as RESTARTING."""
    status = herder.status.get(name)
    state = status.state if status is not None else State.UNASSIGNED
    worker = status.worker_id if status is not None else ""
    restart_connector = not only_failed or state is State.FAILED
    connector = ConnectorState(
        State.RESTARTING.value if restart_connector else state.value, worker,
        None if restart_connector or status is None else status.trace,
    )  # fmt: skip
    tasks = []
    for task in herder.status.get_all(name):
        restart = include_tasks and (not only_failed or task.state is State.FAILED)
        shown = State.RESTARTING.value if restart else task.state.value
        tasks.append(TaskState(task.task, shown, task.worker_id, None if restart else task.trace))
    return ConnectorStateInfo(name, connector, tasks, herder.kind_of(name, config))


def _apply_restarts(herder: DistributedHerder, snap: ClusterConfigState) -> None:
    for request in herder.take_restarts():
        if snap.contains(request.connector):
            restart_here(herder, request)


def apply_reloads(herder: DistributedHerder) -> None:
    """Config-provider reloads (TTL expiry with changed values) queued since the last tick."""
    for name in sorted(herder.take_reloads()):
        try:
            herder.reload_connector(name)
        except NotFoundError:
            herder.worker.config_transformer.cancel(name)
        except ConnectError as exc:
            log.warning("Could not restart connector %s after its config changed: %s", name, exc)


def restart_here(herder: DistributedHerder, request: RestartRequest) -> None:
    """Act on a restart request for what runs on this worker: the connector instance if it is
    assigned here, and (``include_tasks``) the tasks of its plan here."""
    name = request.connector
    status = herder.status.get(name)
    managed = herder.managed(name)
    failed = status is not None and status.state is State.FAILED
    if managed is not None and (not request.only_failed or failed):
        herder.stop_instance(managed)
        herder.put_connector_status(name, State.RESTARTING)
        if managed.target is TargetState.STARTED and herder.start_instance(managed):
            herder.reconfigure_tasks(managed)
    if not request.include_tasks:
        return
    plan = herder.plans.get(name)
    for task in [] if plan is None else plan.task_ids():
        task_status = herder.status.get_task(name, task)
        if request.only_failed and (task_status is None or task_status.state is not State.FAILED):
            continue
        restart_local_task(herder, name, task)


def restart_local_task(herder: DistributedHerder, name: str, task: int) -> None:
    generation = max(herder.group_generation, 0)
    herder.status.put_task(TaskStatus(name, task, State.RESTARTING, herder.worker_id, generation))
    herder.worker.restart_tasks(name, [task])
    herder.status.put_task(TaskStatus(name, task, State.RUNNING, herder.worker_id, generation))
