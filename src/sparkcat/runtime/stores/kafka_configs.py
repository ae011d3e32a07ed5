"""Kafka's ``KafkaConfigBackingStore``: the ``config.storage.topic`` in Kafka Connect's layout.

Implements :class:`sparkcat.runtime.stores.configs.ConfigBackingStore` (see there for the
API and listener contract) over a one-partition compacted topic. Keys are UTF-8 strings,
values JSON as Kafka's ``JsonConverter`` with ``schemas.enable=false`` writes them, fields
in Kafka's schema order::

    connector-<c>           {"properties":{...}}            null = connector deleted
    task-<c>-<n>            {"properties":{...}}            applies at the commit record
    commit-<c>              {"tasks":N}
    target-state-<c>        {"state":"PAUSED","state.v2":"STOPPED"}   null with the delete
    session-key             {"key":"<base64>","algorithm":"HmacSHA256","creation-timestamp":ms}
    restart-connector-<c>   {"include-tasks":true,"only-failed":false}
    tasks-fencing-<c>       {"task-count":N}

Reading follows Kafka's rules: task records wait for their commit record; a commit whose
tasks ``0..N-1`` were not all read marks the connector inconsistent (its tasks stay
unapplied); a commit for a connector without config is dropped; a connector without a
target-state record is STARTED; ``state.v2`` wins over ``state``; records with an unknown
key or a malformed value are logged and skipped. Records written by Kafka Connect itself
read the same.

``start()`` creates the topic when missing (compacted, 1 partition,
``config.storage.replication.factor``), reads it to the end, and refuses a topic with more
than one partition with Kafka's exact message (a :class:`ConfigError`). Every ``put_*``
returns once its records are acked and read back (so :meth:`snapshot` shows them);
``put_task_configs`` first reads to the end, then writes the task records, then the commit.

With ``exactly.once.source.support`` ``preparing`` or ``enabled`` the leader calls
:meth:`claim_write_privileges`: from then on its writes (all but target states, which any
worker writes) go through a transactional producer with ``transactional.id =
connect-cluster-<group.id>``, whose ``init_transactions`` fences the previous leader's writer;
a fenced (zombie) leader's writes fail instead of landing (KIP-618).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.runtime.stores.configs import (
    ClusterConfigState,
    ConfigUpdateListener,
    ConnectorTaskId,
    RestartRequest,
    SessionKey,
    TargetState,
)
from sparkcat.runtime.stores.kafka_log import KafkaBasedLog, LogRecord, internal_client_configs
from sparkcat.runtime.stores.kafka_offsets import topic_setting

__all__ = [
    "CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG",
    "CONFIG_TOPIC_CONFIG",
    "KafkaConfigBackingStore",
    "config_record",
]

log = logging.getLogger(__name__)

CONFIG_TOPIC_CONFIG = "config.storage.topic"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"

TARGET_STATE_PREFIX = "target-state-"
CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
RESTART_PREFIX = "restart-connector-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"
SESSION_KEY_KEY = "session-key"

_WRITE_TIMEOUT_S = 30.0


def _json(value: Mapping[str, Any]) -> bytes:
    return orjson.dumps(value)


def config_record(kind: str, connector: str = "", value: Any = None) -> tuple[str, bytes | None]:
    """The ``(key, value bytes)`` Kafka writes for one config-topic record.

    ``kind``/``value``: ``connector`` (properties or None), ``task`` (``connector`` is
    ``"<c>-<n>"``; properties), ``commit`` (task count), ``target-state`` (a
    :class:`TargetState` or None), ``session-key`` (a :class:`SessionKey`), ``restart`` (a
    :class:`RestartRequest`), ``tasks-fencing`` (task count).
    """
    if kind == "connector":
        return CONNECTOR_PREFIX + connector, None if value is None else _json({"properties": value})
    if kind == "task":
        return TASK_PREFIX + connector, _json({"properties": value})
    if kind == "commit":
        return COMMIT_TASKS_PREFIX + connector, _json({"tasks": value})
    if kind == "target-state":
        if value is None:
            return TARGET_STATE_PREFIX + connector, None
        # Workers before STOPPED existed read "state" only: they see STOPPED as PAUSED.
        old = TargetState.PAUSED if value is TargetState.STOPPED else value
        return TARGET_STATE_PREFIX + connector, _json({"state": old.value, "state.v2": value.value})
    if kind == "session-key":
        encoded = base64.b64encode(value.key).decode("ascii")
        return SESSION_KEY_KEY, _json(
            {
                "key": encoded,
                "algorithm": value.algorithm,
                "creation-timestamp": value.creation_timestamp,
            }
        )
    if kind == "restart":
        return RESTART_PREFIX + value.connector, _json(
            {"include-tasks": value.include_tasks, "only-failed": value.only_failed}
        )
    if kind == "tasks-fencing":
        return TASK_COUNT_RECORD_PREFIX + connector, _json({"task-count": value})
    raise ValueError(f"unknown config record kind {kind!r}")


class _ConfigView:
    """What the reader has applied so far: Kafka's fields, guarded by one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.offset = -1
        self.session_key: SessionKey | None = None
        self.task_counts: dict[str, int] = {}
        self.configs: dict[str, dict[str, str]] = {}
        self.states: dict[str, TargetState] = {}
        self.task_configs: dict[ConnectorTaskId, dict[str, str]] = {}
        self.deferred: dict[str, dict[int, dict[str, str]]] = {}
        self.task_count_records: dict[str, int] = {}
        self.generations: dict[str, int] = {}
        self.pending_fencing: set[str] = set()
        self.inconsistent: set[str] = set()

    def snapshot(self) -> ClusterConfigState:
        with self.lock:
            return ClusterConfigState(
                offset=self.offset,
                session_key=self.session_key,
                connector_task_counts=dict(self.task_counts),
                connector_configs={c: dict(p) for c, p in self.configs.items()},
                connector_target_states=dict(self.states),
                task_configs={t: dict(p) for t, p in self.task_configs.items()},
                connector_task_count_records=dict(self.task_count_records),
                connector_task_config_generations=dict(self.generations),
                connectors_pending_fencing=frozenset(self.pending_fencing),
                inconsistent_connectors=frozenset(self.inconsistent),
            )

    def remove_connector(self, connector: str) -> None:
        self.configs.pop(connector, None)
        self.task_counts.pop(connector, None)
        for task in [t for t in self.task_configs if t[0] == connector]:
            del self.task_configs[task]
        self.deferred.pop(connector, None)


def _strings(value: Any) -> dict[str, Any] | None:
    # Kafka's schema is a map of string to *optional* string: a null value stays None.
    if not isinstance(value, dict):
        return None
    return {str(k): v if v is None or isinstance(v, str) else str(v) for k, v in value.items()}


def _parse_task_id(key: str) -> ConnectorTaskId | None:
    parts = key.split("-")
    if len(parts) < 3:
        return None
    try:
        return "-".join(parts[1:-1]), int(parts[-1])
    except ValueError:
        return None


class KafkaConfigBackingStore:
    """Connector and task configs in the config topic; see the module docstring."""

    def __init__(
        self,
        worker: Mapping[str, Any],
        topic: str | None = None,
        client_id: str = "connect-distributed-configs",
    ) -> None:
        name = topic if topic is not None else str(worker.get(CONFIG_TOPIC_CONFIG, ""))
        if not name.strip():
            raise ConfigError("Must specify topic for connector configurations.")
        self.topic = name.strip()
        self._view = _ConfigView()
        self._listener: ConfigUpdateListener | None = None
        self._started = False
        clients = internal_client_configs(worker, client_id)
        self._producer_config = clients[0]
        self._fencable: Any = None  # the leader's transactional producer, once claimed
        self._log = KafkaBasedLog(
            self.topic,
            *clients,
            self._consume,
            purpose=(CONFIG_TOPIC_CONFIG, "connector configurations"),
            partitions=1,
            replication_factor=topic_setting(worker, CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG, 3),
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    def start(self, timeout_s: float = 60.0) -> None:
        self._log.start(timeout_s)
        if self._log.partition_count > 1:
            self._log.stop()
            raise ConfigError(
                f"Topic '{self.topic}' supplied via the '{CONFIG_TOPIC_CONFIG}' property is "
                "required to have a single partition in order to guarantee consistency of "
                f"connector configurations, but found {self._log.partition_count} partitions."
            )
        self._started = True
        log.info("Started KafkaConfigBackingStore")

    def stop(self) -> None:
        self._started = False
        self._log.stop()

    def refresh(self, timeout_s: float = 30.0) -> None:
        self._log.read_to_end(timeout_s)

    def claim_write_privileges(self, transactional_id: str) -> None:
        """Write through a transactional producer from now on (the leader with exactly-once
        source support); fences any other writer with the same ``transactional_id``."""
        from confluent_kafka import Producer

        if self._fencable is not None:
            return
        config = dict(self._producer_config)
        # librdkafka requires message.timeout.ms <= transaction.timeout.ms.
        config.update({"transactional.id": transactional_id, "enable.idempotence": "true",
                       "acks": "all", "linger.ms": "0", "delivery.timeout.ms": "60000",
                       "transaction.timeout.ms": "60000"})  # fmt: skip
        producer = Producer(config)
        producer.init_transactions(_WRITE_TIMEOUT_S)
        self._fencable = producer
        log.info("Claimed write privileges on the config topic as %s", transactional_id)

    def release_write_privileges(self) -> None:
        """Back to the plain producer (this worker is no longer the leader)."""
        self._fencable = None

    # -- reads -------------------------------------------------------------------------------

    def snapshot(self) -> ClusterConfigState:
        return self._view.snapshot()

    def contains(self, connector: str) -> bool:
        with self._view.lock:
            return connector in self._view.configs

    # -- writes ------------------------------------------------------------------------------

    def put_connector_config(
        self,
        connector: str,
        properties: Mapping[str, str],
        target_state: TargetState | None = None,
    ) -> None:
        records = []
        if target_state is not None:
            records.append(config_record("target-state", connector, target_state))
        records.append(config_record("connector", connector, dict(properties)))
        self._write(records, "connector configuration")

    def remove_connector_config(self, connector: str) -> None:
        self._write(
            [config_record("connector", connector), config_record("target-state", connector)],
            "connector configuration removal",
        )

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None:
        deadline = time.monotonic() + _WRITE_TIMEOUT_S
        # Catch up first, as Kafka: a stale view must not decide what is committed.
        self._log.read_to_end(_WRITE_TIMEOUT_S)
        tasks = [
            config_record("task", f"{connector}-{n}", dict(props))
            for n, props in enumerate(configs)
        ]
        if tasks:
            self._write(tasks, "task configurations", deadline)
        self._write([config_record("commit", connector, len(configs))], "task commit", deadline)

    def remove_task_configs(self, connector: str) -> None:
        raise ConnectError("Removal of tasks is not currently supported")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        # Any worker writes target states (pause/resume), as Kafka: never transactional.
        self._write(
            [config_record("target-state", connector, state)], "target state", privileged=False
        )

    def put_session_key(self, key: SessionKey) -> None:
        self._write([config_record("session-key", value=key)], "session key")

    def put_restart_request(self, request: RestartRequest) -> None:
        self._write([config_record("restart", value=request)], "restart request")

    def put_task_count_record(self, connector: str, task_count: int) -> None:
        self._write([config_record("tasks-fencing", connector, task_count)], "task count record")

    def _write(
        self,
        records: list[tuple[str, bytes | None]],
        what: str,
        deadline: float | None = None,
        privileged: bool = True,
    ) -> None:
        end = deadline if deadline is not None else time.monotonic() + _WRITE_TIMEOUT_S
        try:
            if privileged and self._fencable is not None:
                written = self._write_transaction(records, end)
            else:
                futures = [self._log.send(key.encode(), value) for key, value in records]
                written = {}
                for future in futures:
                    partition, offset = future.result(timeout=max(end - time.monotonic(), 0))
                    written[partition] = max(written.get(partition, 0), offset + 1)
            self._log.wait_until_consumed(written, end)
        except (ConnectError, TimeoutError) as exc:
            raise ConnectError(f"Error writing {what} to Kafka: {exc}") from exc

    def _write_transaction(
        self, records: list[tuple[str, bytes | None]], end: float
    ) -> dict[int, int]:
        """One transaction of the leader's fencable producer; ``{partition: offset + 1}``."""
        from confluent_kafka import KafkaException

        producer = self._fencable
        written: dict[int, int] = {}

        def delivered(err: Any, msg: Any) -> None:
            if err is None:
                p = msg.partition()
                written[p] = max(written.get(p, 0), msg.offset() + 1)

        try:
            producer.begin_transaction()
            for key, value in records:
                producer.produce(self.topic, value, key.encode(), on_delivery=delivered)
            producer.commit_transaction(max(end - time.monotonic(), 0.1))
            producer.poll(0)  # serve the delivery reports
        except KafkaException as exc:
            # Fenced by a newer leader, or failed: this writer is done.
            self._fencable = None
            raise ConnectError(f"transactional write failed: {exc}") from exc
        return written

    # -- reading the topic -------------------------------------------------------------------

    def _consume(self, record: LogRecord) -> None:
        key = (record.key or b"").decode("utf-8", "replace")
        try:
            value = None if record.value is None else orjson.loads(record.value)
        except orjson.JSONDecodeError:
            log.error("Failed to convert config data to Kafka Connect format: %s", key)
            return
        with self._view.lock:
            self._view.offset = record.offset + 1
        notify = self._apply(key, value)
        if notify is not None and self._started and self._listener is not None:
            notify(self._listener)

    def _apply(self, key: str, value: Any) -> Callable[[ConfigUpdateListener], None] | None:
        # Kafka's order of prefix checks, kept so that odd keys are classified alike.
        if key.startswith(TARGET_STATE_PREFIX):
            return self._target_state(key[len(TARGET_STATE_PREFIX) :], value)
        if key.startswith(CONNECTOR_PREFIX):
            return self._connector_config(key[len(CONNECTOR_PREFIX) :], value)
        if key.startswith(TASK_PREFIX):
            self._task_config(key, value)
            return None
        if key.startswith(COMMIT_TASKS_PREFIX):
            return self._commit(key[len(COMMIT_TASKS_PREFIX) :], value)
        if key.startswith(RESTART_PREFIX):
            return self._restart(key[len(RESTART_PREFIX) :], value)
        if key.startswith(TASK_COUNT_RECORD_PREFIX):
            return self._task_count(key[len(TASK_COUNT_RECORD_PREFIX) :], value)
        if key == SESSION_KEY_KEY:
            return self._session_key(value)
        log.error("Discarding config update record with invalid key: %s", key)
        return None

    def _target_state(self, connector: str, value: Any) -> Callable[..., None] | None:
        view = self._view
        with view.lock:
            if value is None:
                view.states.pop(connector, None)
                if connector in view.configs:
                    view.states[connector] = TargetState.STARTED
                return None  # the connector tombstone tells the listener
            if not isinstance(value, dict):
                log.error("Ignoring target state for connector '%s': wrong format", connector)
                return None
            raw = value.get("state.v2")
            if not isinstance(raw, str):
                raw = value.get("state")
            try:
                state = TargetState(raw)
            except ValueError:
                log.error("Invalid target state for connector '%s': %s", connector, raw)
                return None
            changed = view.states.get(connector) is not state
            view.states[connector] = state
            exists = connector in view.configs
        if changed and exists:
            return lambda listener: listener.on_connector_target_state_change(connector)
        return None

    def _connector_config(self, connector: str, value: Any) -> Callable[..., None] | None:
        view = self._view
        with view.lock:
            if value is None:
                view.remove_connector(connector)
                log.info("Successfully processed removal of connector '%s'", connector)
                return lambda listener: listener.on_connector_config_remove(connector)
            properties = _strings(value.get("properties") if isinstance(value, dict) else None)
            if properties is None:
                log.error("Ignoring configuration for connector '%s': wrong format", connector)
                return None
            view.configs[connector] = properties
            view.states.setdefault(connector, TargetState.STARTED)
        return lambda listener: listener.on_connector_config_update(connector)

    def _task_config(self, key: str, value: Any) -> None:
        task = _parse_task_id(key)
        properties = _strings(value.get("properties") if isinstance(value, dict) else None)
        if task is None or properties is None:
            log.error("Ignoring task configuration record %s: bad key or value", key)
            return
        with self._view.lock:
            self._view.deferred.setdefault(task[0], {})[task[1]] = properties

    def _commit(self, connector: str, value: Any) -> Callable[..., None] | None:
        view = self._view
        with view.lock:
            if connector not in view.configs:
                # Deleted before these tasks were published, and compaction removed both
                # its config and its tombstone: ignore the tasks (as Kafka).
                view.remove_connector(connector)
                return None
            count = value.get("tasks") if isinstance(value, dict) else None
            if not isinstance(count, int):
                log.error("Ignoring task commit for connector '%s': wrong format", connector)
                return None
            deferred = view.deferred.pop(connector, {})
            updated: list[ConnectorTaskId] = []
            if not all(n in deferred for n in range(count)):
                view.inconsistent.add(connector)
            else:
                for n, properties in deferred.items():
                    view.task_configs[(connector, n)] = properties
                    updated.append((connector, n))
                view.generations[connector] = view.generations.get(connector, -1) + 1
                view.inconsistent.discard(connector)
            view.task_counts[connector] = count
            view.pending_fencing.add(connector)
        return lambda listener: listener.on_task_config_update(sorted(updated))

    def _restart(self, connector: str, value: Any) -> Callable[..., None] | None:
        if not isinstance(value, dict):
            log.error("Ignoring restart request because the value is not a Map")
            return None
        only_failed, include_tasks = value.get("only-failed"), value.get("include-tasks")
        request = RestartRequest(
            connector,
            only_failed=only_failed if isinstance(only_failed, bool) else False,
            include_tasks=include_tasks if isinstance(include_tasks, bool) else False,
        )
        return lambda listener: listener.on_restart_request(request)

    def _task_count(self, connector: str, value: Any) -> Callable[..., None] | None:
        count = value.get("task-count") if isinstance(value, dict) else None
        if not isinstance(count, int):
            log.error("Ignoring task count record for connector '%s': wrong format", connector)
            return None
        with self._view.lock:
            self._view.task_count_records[connector] = count
            self._view.pending_fencing.discard(connector)
        return lambda listener: listener.on_task_count_record(connector, count)

    def _session_key(self, value: Any) -> Callable[..., None] | None:
        if not isinstance(value, dict):
            log.error("Ignoring session key because it is null or not a Map")
            return None
        key, algorithm, created = (
            value.get("key"),
            value.get("algorithm"),
            value.get("creation-timestamp"),
        )
        if (
            not isinstance(key, str)
            or not isinstance(algorithm, str)
            or not isinstance(created, int)
        ):
            log.error("Ignoring session key: 'key', 'algorithm' or 'creation-timestamp' is invalid")
            return None
        session_key = SessionKey(base64.b64decode(key), algorithm, created)
        with self._view.lock:
            self._view.session_key = session_key
        return lambda listener: listener.on_session_key_update(session_key)
