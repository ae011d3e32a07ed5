"""The config store seam: Kafka's ``ConfigBackingStore``, ``ClusterConfigState`` and
``ConfigUpdateListener``, and :class:`MemoryConfigBackingStore`, the reference store.

A config store holds what the cluster agreed on: connector configs, their target states,
the task configs generated from them (applied as a whole, once committed), the session key
of inter-worker requests, restart requests and exactly-once task-count records. The
herder reads it through :meth:`ConfigBackingStore.snapshot`, an immutable
:class:`ClusterConfigState`, and hears about changes through a
:class:`ConfigUpdateListener`. Public API::

    store.start() / store.stop()
    store.set_update_listener(listener)           # before start()
    store.snapshot() -> ClusterConfigState         # a consistent, immutable view
    store.contains(connector) -> bool
    store.put_connector_config(name, props, target_state=None)
    store.remove_connector_config(name)            # also drops its target state and tasks
    store.put_task_configs(name, [task_props, ...])  # all tasks at once, then a commit
    store.remove_task_configs(name)
    store.put_target_state(name, TargetState.PAUSED)
    store.put_session_key(SessionKey(key_bytes, "HmacSHA256", creation_ms))
    store.put_restart_request(RestartRequest(name, only_failed, include_tasks))
    store.put_task_count_record(name, count)       # exactly-once (KIP-618) bookkeeping
    store.refresh(timeout_s)                       # catch up with other workers' writes

Writes are synchronous: when a ``put_*`` returns, :meth:`snapshot` shows it. Listener
callbacks (Kafka's names, Pythonic): ``on_connector_config_update(name)``,
``on_connector_config_remove(name)``, ``on_task_config_update([(name, task), ...])``,
``on_connector_target_state_change(name)``, ``on_session_key_update(key)``,
``on_restart_request(request)``, ``on_task_count_record(name, count)``. The memory store
calls them on the writer's thread; the Kafka store on its reader thread, only for records
read after start-up, exactly as Kafka's. A callback must not call back into the store's
writers (it may call :meth:`snapshot`).

Not here yet: ``claim_write_privileges`` (the leader's transactional writes for
exactly-once source support) and cluster logger levels (``logger-cluster-*`` records).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, runtime_checkable

from sparkcat.api.errors import ConnectError

__all__ = [
    "NO_OFFSET",
    "ClusterConfigState",
    "ConfigBackingStore",
    "ConfigUpdateListener",
    "ConnectorTaskId",
    "MemoryConfigBackingStore",
    "RestartRequest",
    "SessionKey",
    "TargetState",
]

#: ``ClusterConfigState.offset`` of a store that is not a log (Kafka's ``NO_OFFSET``).
NO_OFFSET = -1

#: A task: ``(connector, task number)`` (Kafka's ``ConnectorTaskId``).
ConnectorTaskId = tuple[str, int]


class TargetState(Enum):
    """What the user asked a connector to be (Kafka's ``TargetState``)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


@dataclass(frozen=True, slots=True)
class SessionKey:
    """The key that signs internal requests; ``creation_timestamp`` in epoch ms."""

    key: bytes
    algorithm: str
    creation_timestamp: int

    def __repr__(self) -> str:  # never log the secret
        return f"SessionKey(algorithm={self.algorithm!r}, created={self.creation_timestamp})"


@dataclass(frozen=True, slots=True)
class RestartRequest:
    """A restart of a connector and maybe its tasks (Kafka's ``RestartRequest``)."""

    connector: str
    only_failed: bool = False
    include_tasks: bool = False


@dataclass(frozen=True, slots=True)
class ClusterConfigState:
    """An immutable snapshot of the config store (Kafka's ``ClusterConfigState``).

    Task configs of a connector listed in ``inconsistent_connectors`` (a commit record was
    read without all the task records it counts) are not applied: :meth:`tasks` is empty for
    it until a complete set is committed, and the herder should regenerate them.
    """

    offset: int = NO_OFFSET
    session_key: SessionKey | None = None
    connector_task_counts: Mapping[str, int] = field(default_factory=dict)
    connector_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    connector_target_states: Mapping[str, TargetState] = field(default_factory=dict)
    task_configs: Mapping[ConnectorTaskId, Mapping[str, str]] = field(default_factory=dict)
    connector_task_count_records: Mapping[str, int] = field(default_factory=dict)
    connector_task_config_generations: Mapping[str, int] = field(default_factory=dict)
    connectors_pending_fencing: frozenset[str] = frozenset()
    inconsistent_connectors: frozenset[str] = frozenset()

    def connectors(self) -> list[str]:
        """The names of all connectors, sorted."""
        return sorted(self.connector_configs)

    def contains(self, connector: str) -> bool:
        return connector in self.connector_configs

    def connector_config(self, connector: str) -> dict[str, str] | None:
        config = self.connector_configs.get(connector)
        return None if config is None else dict(config)

    def target_state(self, connector: str) -> TargetState | None:
        return self.connector_target_states.get(connector)

    def task_count(self, connector: str) -> int:
        """The task count of the latest commit record (0 when none)."""
        return self.connector_task_counts.get(connector, 0)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        """The committed tasks of ``connector``; empty while it is inconsistent."""
        if connector in self.inconsistent_connectors:
            return []
        return [(connector, n) for n in range(self.task_count(connector))]

    def task_config(self, task: ConnectorTaskId) -> dict[str, str] | None:
        config = self.task_configs.get(task)
        return None if config is None else dict(config)

    def all_task_configs(self, connector: str) -> list[dict[str, str]]:
        """The committed task configs of ``connector`` in task order."""
        return [dict(self.task_configs[task]) for task in self.tasks(connector)]

    def task_count_record(self, connector: str) -> int | None:
        return self.connector_task_count_records.get(connector)

    def task_config_generation(self, connector: str) -> int | None:
        return self.connector_task_config_generations.get(connector)

    def pending_fencing(self, connector: str) -> bool:
        return connector in self.connectors_pending_fencing


@runtime_checkable
class ConfigUpdateListener(Protocol):
    """Kafka's ``ConfigBackingStore.UpdateListener``: what changed, not the new values."""

    def on_connector_config_update(self, connector: str) -> None: ...

    def on_connector_config_remove(self, connector: str) -> None: ...

    def on_task_config_update(self, tasks: Sequence[ConnectorTaskId]) -> None: ...

    def on_connector_target_state_change(self, connector: str) -> None: ...

    def on_session_key_update(self, key: SessionKey) -> None: ...

    def on_restart_request(self, request: RestartRequest) -> None: ...

    def on_task_count_record(self, connector: str, task_count: int) -> None: ...


@runtime_checkable
class ConfigBackingStore(Protocol):
    """Where connector and task configs live; see the module docstring."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def snapshot(self) -> ClusterConfigState: ...

    def contains(self, connector: str) -> bool: ...

    def put_connector_config(
        self, connector: str, properties: Mapping[str, str], target_state: TargetState | None
    ) -> None: ...

    def remove_connector_config(self, connector: str) -> None: ...

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None: ...

    def remove_task_configs(self, connector: str) -> None: ...

    def put_target_state(self, connector: str, state: TargetState) -> None: ...

    def put_session_key(self, key: SessionKey) -> None: ...

    def put_restart_request(self, request: RestartRequest) -> None: ...

    def put_task_count_record(self, connector: str, task_count: int) -> None: ...

    def refresh(self, timeout_s: float) -> None: ...

    def set_update_listener(self, listener: ConfigUpdateListener) -> None: ...


class MemoryConfigBackingStore:
    """The reference :class:`ConfigBackingStore` (standalone mode; tests).

    Everything applies at once and the listener is called on the writer's thread, after
    the change (outside the store's lock), as Kafka's ``MemoryConfigBackingStore``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, dict[str, str]] = {}
        self._states: dict[str, TargetState] = {}
        self._tasks: dict[str, list[dict[str, str]]] = {}
        self._generations: dict[str, int] = {}
        self._task_count_records: dict[str, int] = {}
        self._session_key: SessionKey | None = None
        self._listener: ConfigUpdateListener | None = None

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return ClusterConfigState(
                offset=NO_OFFSET,
                session_key=self._session_key,
                connector_task_counts={c: len(t) for c, t in self._tasks.items()},
                connector_configs={c: dict(p) for c, p in self._configs.items()},
                connector_target_states=dict(self._states),
                task_configs={
                    (c, n): dict(props)
                    for c, tasks in self._tasks.items()
                    for n, props in enumerate(tasks)
                },
                connector_task_count_records=dict(self._task_count_records),
                connector_task_config_generations=dict(self._generations),
            )

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self._configs

    def put_connector_config(
        self,
        connector: str,
        properties: Mapping[str, str],
        target_state: TargetState | None = None,
    ) -> None:
        with self._lock:
            self._configs[connector] = dict(properties)
            if target_state is not None:
                self._states[connector] = target_state
            else:
                self._states.setdefault(connector, TargetState.STARTED)
        if self._listener is not None:
            self._listener.on_connector_config_update(connector)

    def remove_connector_config(self, connector: str) -> None:
        with self._lock:
            existed = self._configs.pop(connector, None) is not None
            self._states.pop(connector, None)
            self._tasks.pop(connector, None)
            self._generations.pop(connector, None)
        if existed and self._listener is not None:
            self._listener.on_connector_config_remove(connector)

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None:
        with self._lock:
            if connector not in self._configs:
                raise ConnectError(f"No connector `{connector}` configured")
            old = len(self._tasks.get(connector, ()))
            self._tasks[connector] = [dict(c) for c in configs]
            self._generations[connector] = self._generations.get(connector, -1) + 1
        if self._listener is not None:
            count = max(old, len(configs))
            self._listener.on_task_config_update([(connector, n) for n in range(count)])

    def remove_task_configs(self, connector: str) -> None:
        with self._lock:
            old = len(self._tasks.pop(connector, ()))
        if self._listener is not None:
            self._listener.on_task_config_update([(connector, n) for n in range(old)])

    def put_target_state(self, connector: str, state: TargetState) -> None:
        with self._lock:
            if connector not in self._configs:
                raise ConnectError(f"No connector `{connector}` configured")
            changed = self._states.get(connector) is not state
            self._states[connector] = state
        if changed and self._listener is not None:
            self._listener.on_connector_target_state_change(connector)

    def put_session_key(self, key: SessionKey) -> None:
        with self._lock:
            self._session_key = key
        if self._listener is not None:
            self._listener.on_session_key_update(key)

    def put_restart_request(self, request: RestartRequest) -> None:
        if self._listener is not None:
            self._listener.on_restart_request(request)

    def put_task_count_record(self, connector: str, task_count: int) -> None:
        with self._lock:
            self._task_count_records[connector] = task_count
        if self._listener is not None:
            self._listener.on_task_count_record(connector, task_count)

    def refresh(self, timeout_s: float = 30.0) -> None:
        pass
