"""The worker's membership of the Connect group: Kafka's ``WorkerCoordinator`` and
``WorkerGroupMember``, on kafka-python's ``BaseCoordinator``.

librdkafka cannot join a group whose protocol type is not ``consumer``; kafka-python's
``kafka.coordinator.base.BaseCoordinator`` implements the generic group protocol (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup) and is made to be subclassed. kafka-python is used for
this alone; every data and store read/write stays on confluent-kafka.

The group has protocol type ``connect``; members offer Kafka's protocols (``sessioned``,
``compatible``, ``default``, per ``connect.protocol``) with Kafka's metadata (see
:mod:`~sparkcat.runtime.distributed.protocol`); the broker picks the protocol and the leader;
the leader runs the assignor (:mod:`~sparkcat.runtime.distributed.assignor`).

Public API (the herder's side)::

    member = WorkerGroupMember(config, rest_url, config_snapshot, listener)
    member.start()                # connect to the cluster (raises KafkaError if unreachable)
    while running:
        member.poll(timeout_s)    # join/rejoin when needed, deliver callbacks
    member.stop()                 # leave the group, close the connections

- ``config``: a :class:`~sparkcat.runtime.distributed.config.DistributedConfig` (``group.id``,
  ``bootstrap.servers``, ``session.timeout.ms``, ``heartbeat.interval.ms``,
  ``rebalance.timeout.ms``, ``scheduled.rebalance.max.delay.ms``, ``connect.protocol``,
  ``client.id``, ``request.timeout.ms``, ``retry.backoff.ms``), and the worker's
  ``security.protocol``/``sasl.*``/``ssl.*`` (:mod:`.security`: ``start()`` raises
  :class:`~sparkcat.api.errors.ConfigError` naming the key kafka-python cannot serve).
- ``rest_url``: this worker's advertised REST url (``DistributedConfig.advertised_url``).
- ``config_snapshot()``: the herder's hook returning a
  :class:`~sparkcat.runtime.distributed.assignor.ConfigSnapshot` of what it has read from
  the config topic (the config store's ``snapshot`` fits: ``offset`` is Kafka's config
  offset; ``connectors()`` and ``tasks(connector)`` are what the leader assigns).
  Called when joining (its offset goes into the metadata) and, on the leader, again if a
  member reported a newer offset. It is called on kafka-python's IO thread: make it cheap
  and thread-safe.
- ``listener``: a :class:`WorkerRebalanceListener`. Its callbacks run on the thread that
  calls :meth:`~WorkerGroupMember.poll`, inside ``poll``, never concurrently:

  - ``on_revoked(leader, connectors, tasks)`` — stop these now (before the new assignment is
    used). Incremental protocols: only what the leader revoked; eager: everything, before
    each rejoin; also everything when the coordinator is unreachable for
    ``heartbeat.interval.ms`` (Kafka's behaviour, so no work runs outside the group).
  - ``on_assigned(assignment, generation)`` — the complete assignment after the rebalance
    (:class:`~sparkcat.runtime.distributed.protocol.ExtendedAssignment`; for incremental
    protocols the previous assignment minus revocations plus the new work, as Kafka's
    ``WorkerCoordinator`` merges it). If ``assignment.failed`` (CONFIG_MISMATCH) the herder
    reads the config topic to at least ``assignment.config_offset`` and the member rejoins
    by itself on the next ``poll``. As Kafka's ``DistributedHerder`` does, the herder calls
    :meth:`~WorkerGroupMember.request_rejoin`: after starting its work when the assignment
    revoked anything (``revoked_connectors``/``revoked_tasks``: the revoked work is handed
    out in a follow-up rebalance); after ``assignment.delay`` ms when that is > 0 (a
    scheduled rebalance); and instead of starting work when its config offset differs
    from ``assignment.config_offset`` (after catching up).

- ``poll(timeout_s)`` joins when needed (blocking up to ``timeout_s``; the broker holds a
  JoinGroup open until every member rejoined), delivers callbacks, then waits for the rest
  of ``timeout_s``; it returns early after delivering callbacks, on :meth:`wakeup`, and when
  the group needs a rejoin. Heartbeats run on kafka-python's IO thread, but ``poll`` must
  still be called at least every ``rebalance.timeout.ms`` or the member leaves the group.
- Read-only, from any thread: ``member_id``, ``generation_id``, ``leader_id``,
  ``leader_url``, ``is_leader``, ``protocol_version``, ``assignment``,
  ``owner_url(connector | ConnectorTaskId)`` (leader only, else ``None``).
- ``request_rejoin()`` and ``wakeup()`` from any thread; ``stop()`` once, from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Callable, Collection
from typing import Any, Protocol

from sparkcat.runtime.distributed.assignor import (
    ClusterConfigSnapshot,
    ConfigSnapshot,
    EagerAssignor,
    GroupAssignment,
    IncrementalCooperativeAssignor,
    LeaderState,
)
from sparkcat.runtime.distributed.config import (
    HEARTBEAT_INTERVAL_MS_CONFIG,
    REBALANCE_TIMEOUT_MS_CONFIG,
    SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG,
    SESSION_TIMEOUT_MS_CONFIG,
    DistributedConfig,
)
from sparkcat.runtime.distributed.protocol import (
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_assignment,
    deserialize_metadata,
    metadata_request,
)
from sparkcat.runtime.distributed.security import kafka_python_security
from sparkcat.runtime.rest.entities import ConnectorTaskId

with warnings.catch_warnings():
    # kafka-python 3.0 loads its protocol schemas with importlib.resources.read_text, which
    # Python 3.11 deprecates; harmless, but the test suite turns warnings into errors.
    warnings.filterwarnings("ignore", "(read|open)_text is deprecated", DeprecationWarning)
    from kafka.coordinator.base import BaseCoordinator
    from kafka.net.compat import KafkaNetClient
    from kafka.structs import MemberState

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "connect"


class WorkerRebalanceListener(Protocol):
    """The herder's side of a rebalance (Kafka's ``WorkerRebalanceListener``)."""

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None: ...

    def on_revoked(
        self, leader: str | None, connectors: Collection[str], tasks: Collection[ConnectorTaskId]
    ) -> None: ...


class WorkerCoordinator(BaseCoordinator):  # type: ignore[misc]
    """The ``connect`` group protocol on kafka-python. Internal to :class:`WorkerGroupMember`:
    its hooks run on kafka-python's IO thread and only record what happened; the member
    turns that into listener callbacks on the polling thread."""

    def __init__(
        self,
        client: KafkaNetClient,
        rest_url: str,
        config_snapshot: Callable[[], ConfigSnapshot],
        compatibility: ConnectProtocolCompatibility,
        max_delay_ms: int,
        on_change: Callable[[], None],
        **configs: Any,
    ) -> None:
        super().__init__(client, **configs)
        self.rest_url = rest_url
        self._config_snapshot_hook = config_snapshot
        self.compatibility = compatibility
        self.current_protocol = compatibility
        self._incremental = IncrementalCooperativeAssignor(max_delay_ms)
        self._eager = EagerAssignor()
        self._on_change = on_change
        self._state_lock = threading.Lock()
        self.config_snapshot: ConfigSnapshot = ClusterConfigSnapshot(-1, {})
        self.assignment_snapshot: ExtendedAssignment | None = None
        self.leader_state: LeaderState | None = None
        self.last_completed_generation = -1
        self.rejoin_requested = False
        self.generation_lost = False
        # (revoked, merged assignment, generation) results awaiting delivery by poll().
        self.pending: list[tuple[ExtendedAssignment, ExtendedAssignment, int]] = []

    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def group_protocols(self) -> list[tuple[str, bytes]]:
        self.config_snapshot = self._config_snapshot_hook()
        state = ExtendedWorkerState(
            self.rest_url, self.config_snapshot.offset, self.assignment_snapshot
        )
        return metadata_request(state, self.compatibility)

    def _perform_assignment(
        self, leader_id: str, protocol: str, members: list[Any]
    ) -> dict[str, bytes]:
        states = {m.member_id: deserialize_metadata(bytes(m.metadata)) for m in members}
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        assignor = self._eager if mode is ConnectProtocolCompatibility.EAGER else self._incremental
        result: GroupAssignment = assignor.perform_assignment(
            leader_id,
            protocol,
            states,
            self.config_snapshot,
            self._config_snapshot_hook,
            self.last_completed_generation,
            self._generation.generation_id,
        )
        self.config_snapshot = result.snapshot
        self.leader_state = result.leader_state
        log.info("Leader %s assigned (protocol %s): %s", leader_id, protocol, result.assignments)
        return result.serialize()

    async def _on_join_prepare_async(
        self, generation: int, member_id: str, timeout_ms: int | None = None
    ) -> None:
        self.leader_state = None

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, assignment_bytes: bytes
    ) -> None:
        assignment = deserialize_assignment(bytes(assignment_bytes))
        if assignment is None:
            raise ValueError("The leader sent an empty assignment")
        self.current_protocol = ConnectProtocolCompatibility.from_protocol(protocol)
        merged = assignment
        if self.current_protocol is not ConnectProtocolCompatibility.EAGER:
            previous = self.assignment_snapshot
            if previous is not None:
                # Incremental: the leader sent only the changes; keep what was not revoked.
                kept_c = [c for c in previous.connectors if c not in assignment.revoked_connectors]
                kept_t = [t for t in previous.tasks if t not in assignment.revoked_tasks]
                merged = _replace_work(
                    assignment,
                    tuple(dict.fromkeys([*assignment.connectors, *kept_c])),
                    tuple(dict.fromkeys([*assignment.tasks, *kept_t])),
                )
        with self._state_lock:
            self.rejoin_requested = False
            self.assignment_snapshot = merged
            self.last_completed_generation = generation
            self.pending.append((assignment, merged, generation))
        self._on_change()

    def need_rejoin(self) -> bool:
        snapshot = self.assignment_snapshot
        return bool(
            super().need_rejoin() or snapshot is None or snapshot.failed or self.rejoin_requested
        )

    def request_rejoin(self) -> None:
        super().request_rejoin()
        self._on_change()

    def reset_generation(self, member_id: str = "") -> None:
        # Called when the broker no longer knows this member or its generation, and on
        # leaving. A *stable* member learns it from a heartbeat (UNKNOWN_MEMBER_ID or
        # ILLEGAL_GENERATION: the worker was frozen or cut off past session.timeout.ms): its
        # work may already run elsewhere, so the member revokes it on its next poll. A member
        # in the middle of a rebalance (JoinGroup/SyncGroup errors) just rejoins, as before.
        lost = self._generation.generation_id >= 0 and self.state is MemberState.STABLE
        super().reset_generation(member_id)
        if lost:
            with self._state_lock:
                self.generation_lost = True
        self._on_change()

    def take_generation_lost(self) -> bool:
        with self._state_lock:
            lost, self.generation_lost = self.generation_lost, False
        return lost

    def take_pending(self) -> list[tuple[ExtendedAssignment, ExtendedAssignment, int]]:
        with self._state_lock:
            pending, self.pending = self.pending, []
        return pending


def _replace_work(
    assignment: ExtendedAssignment,
    connectors: tuple[str, ...],
    tasks: tuple[ConnectorTaskId, ...],
) -> ExtendedAssignment:
    return ExtendedAssignment(
        assignment.version, assignment.error, assignment.leader, assignment.leader_url,
        assignment.config_offset, connectors, tasks, assignment.revoked_connectors,
        assignment.revoked_tasks, assignment.delay,
    )  # fmt: skip


def _close_client(client: KafkaNetClient) -> None:
    # Stop the IO thread before closing: closing a connection cancels its tasks, and doing
    # that from this thread while the IO thread runs one of them logs a traceback
    # ("generator already executing") and may leave the loop mid-step.
    client._net.stop(timeout_ms=5000)
    client.close()


class WorkerGroupMember:
    """This worker's membership of the Connect group (Kafka's ``WorkerGroupMember``)."""

    def __init__(
        self,
        config: DistributedConfig,
        rest_url: str,
        config_snapshot: Callable[[], ConfigSnapshot],
        listener: WorkerRebalanceListener,
    ) -> None:
        self._config = config
        self._rest_url = rest_url
        self._config_snapshot = config_snapshot
        self._listener = listener
        self._attention = threading.Event()
        self._poll_lock = threading.Lock()
        self._stopped = threading.Event()
        self._eager_revoked = False
        self._client: KafkaNetClient | None = None
        self._coordinator: WorkerCoordinator | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Connect to the Kafka cluster (the group is joined by :meth:`poll`)."""
        config = self._config
        security = kafka_python_security(config.originals())  # ConfigError: what it cannot do
        servers = [s for s in config.get_list("bootstrap.servers") if s]
        client_id = config.get_string("client.id") or f"connect-{config.group_id}"
        request_timeout_ms = config.get_int("request.timeout.ms")
        client = KafkaNetClient(
            bootstrap_servers=servers,
            client_id=client_id,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=config.get_long("retry.backoff.ms"),
            reconnect_backoff_ms=config.get_long("reconnect.backoff.ms"),
            reconnect_backoff_max_ms=config.get_long("reconnect.backoff.max.ms"),
            **security,
        )
        client._net.start()
        try:
            client._manager.bootstrap(request_timeout_ms)
        except BaseException:
            _close_client(client)
            raise
        self._client = client
        self._coordinator = WorkerCoordinator(
            client,
            self._rest_url,
            self._config_snapshot,
            config.connect_protocol,
            config.get_int(SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG),
            self._attention.set,
            group_id=config.group_id,
            session_timeout_ms=config.get_int(SESSION_TIMEOUT_MS_CONFIG),
            heartbeat_interval_ms=config.get_int(HEARTBEAT_INTERVAL_MS_CONFIG),
            max_poll_interval_ms=config.get_int(REBALANCE_TIMEOUT_MS_CONFIG),
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=config.get_long("retry.backoff.ms"),
            api_version=client._manager.broker_version,
        )

    def stop(self, timeout_s: float = 5.0) -> None:
        """Leave the group (the others rebalance at once) and close the connections."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._attention.set()
        coordinator, client = self._coordinator, self._client
        if coordinator is not None:
            try:
                coordinator.close(timeout_ms=int(timeout_s * 1000))
            except Exception as e:  # leaving is best effort, as in Kafka
                log.warning("Failed to leave group %s: %s", self._config.group_id, e)
        if client is None:
            return
        client._net.stop(timeout_ms=int(timeout_s * 1000))  # fails a blocked poll's requests
        # A poll that retries would drive the loop on its own thread: let it return first.
        polled = self._poll_lock.acquire(timeout=timeout_s)
        try:
            _close_client(client)
        finally:
            if polled:
                self._poll_lock.release()

    # --- polling --------------------------------------------------------------------------

    def poll(self, timeout_s: float) -> None:
        """Take part in the group for up to ``timeout_s`` (see the module docstring)."""
        coordinator = self._require_started()
        deadline = time.monotonic() + max(timeout_s, 0.0)
        with self._poll_lock:
            self._attention.clear()
            if self._stopped.is_set():
                return
            try:
                self._poll(coordinator, deadline)
            except Exception:
                if self._stopped.is_set():
                    return  # stop() closed the connections under a blocked join
                raise

    def _poll(self, coordinator: WorkerCoordinator, deadline: float) -> None:
        self._revoke_if_generation_lost(coordinator)
        self._ensure_coordinator(coordinator, deadline)
        if coordinator.need_rejoin() and not coordinator.coordinator_unknown():
            self._revoke_before_eager_rejoin(coordinator)
            coordinator.ensure_active_group(timeout_ms=_remaining_ms(deadline))
        coordinator.poll_heartbeat()
        if self._deliver(coordinator):
            return
        while not self._stopped.is_set() and not coordinator.need_rejoin():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._attention.wait(remaining):
                return

    def _ensure_coordinator(self, coordinator: WorkerCoordinator, deadline: float) -> None:
        if not coordinator.coordinator_unknown():
            return
        wait_ms = min(coordinator.config["heartbeat_interval_ms"], _remaining_ms(deadline))
        if coordinator.ensure_coordinator_ready(timeout_ms=wait_ms):
            return
        snapshot = coordinator.assignment_snapshot
        if snapshot is not None and not snapshot.failed and wait_ms > 0:
            # Kafka: don't run work while cut off from the group coordinator.
            log.info("Group coordinator unreachable for %d ms: revoking %s", wait_ms, snapshot)
            self._listener.on_revoked(snapshot.leader, snapshot.connectors, snapshot.tasks)
            coordinator.assignment_snapshot = None

    def _revoke_if_generation_lost(self, coordinator: WorkerCoordinator) -> None:
        """A member that learns it fell out of the group stops all its work at once, before
        it rejoins (Kafka's WorkerCoordinator): the others may run it already."""
        if not coordinator.take_generation_lost():
            return
        snapshot = coordinator.assignment_snapshot
        if snapshot is None or snapshot.failed:
            return
        log.info("This worker fell out of group %s (its generation is gone): revoking %s",
                 self._config.group_id, snapshot)  # fmt: skip
        self._listener.on_revoked(snapshot.leader, snapshot.connectors, snapshot.tasks)
        coordinator.assignment_snapshot = None

    def _revoke_before_eager_rejoin(self, coordinator: WorkerCoordinator) -> None:
        snapshot = coordinator.assignment_snapshot
        if coordinator.current_protocol is not ConnectProtocolCompatibility.EAGER:
            return
        if snapshot is None or snapshot.failed or self._eager_revoked:
            return
        self._listener.on_revoked(snapshot.leader, snapshot.connectors, snapshot.tasks)
        self._eager_revoked = True

    def _deliver(self, coordinator: WorkerCoordinator) -> bool:
        pending = coordinator.take_pending()
        for received, merged, generation in pending:
            eager = coordinator.current_protocol is ConnectProtocolCompatibility.EAGER
            if not eager and (received.revoked_connectors or received.revoked_tasks):
                self._listener.on_revoked(
                    received.leader, received.revoked_connectors, received.revoked_tasks
                )
            self._eager_revoked = False
            self._listener.on_assigned(merged, generation)
        return bool(pending)

    # --- requests from other threads ------------------------------------------------------

    def request_rejoin(self) -> None:
        """Rejoin on the next :meth:`poll` (a scheduled rebalance, or new connectors)."""
        coordinator = self._require_started()
        coordinator.rejoin_requested = True
        self._attention.set()

    def wakeup(self) -> None:
        """Make a blocked :meth:`poll` return once it is done joining."""
        self._attention.set()

    # --- state ----------------------------------------------------------------------------

    @property
    def member_id(self) -> str:
        """This member's id in a stable group, else ``""`` (Kafka's UNKNOWN_MEMBER_ID)."""
        coordinator = self._coordinator
        generation = coordinator.generation_if_stable() if coordinator else None
        return generation.member_id if generation is not None else ""

    @property
    def generation_id(self) -> int:
        coordinator = self._coordinator
        return coordinator._generation.generation_id if coordinator is not None else -1

    @property
    def assignment(self) -> ExtendedAssignment | None:
        """The current complete assignment (None before the first rebalance)."""
        coordinator = self._coordinator
        return coordinator.assignment_snapshot if coordinator is not None else None

    @property
    def leader_id(self) -> str | None:
        assignment = self.assignment
        return assignment.leader if assignment is not None else None

    @property
    def leader_url(self) -> str | None:
        assignment = self.assignment
        return assignment.leader_url if assignment is not None else None

    @property
    def is_leader(self) -> bool:
        member = self.member_id
        return bool(member) and member == self.leader_id

    @property
    def protocol_version(self) -> int:
        """The protocol version of the current generation (2 = sessioned: sign requests)."""
        coordinator = self._coordinator
        if coordinator is None:
            return self._config.connect_protocol.version
        return coordinator.current_protocol.version

    @property
    def rejoin_needed(self) -> bool:
        coordinator = self._coordinator
        return coordinator is None or bool(coordinator.need_rejoin())

    def owner_url(self, target: str | ConnectorTaskId) -> str | None:
        """The REST url of the worker running ``target``; None unless this is the leader of
        a stable group (Kafka's ``ownerUrl``)."""
        coordinator = self._coordinator
        if coordinator is None or coordinator.need_rejoin() or not self.is_leader:
            return None
        state = coordinator.leader_state
        return state.owner_url(target) if state is not None else None

    def _require_started(self) -> WorkerCoordinator:
        if self._coordinator is None:
            raise RuntimeError("WorkerGroupMember.start() was not called")
        return self._coordinator


def _remaining_ms(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))


__all__ = [
    "PROTOCOL_TYPE",
    "WorkerCoordinator",
    "WorkerGroupMember",
    "WorkerRebalanceListener",
]
