"""Kafka's ``KafkaStatusBackingStore``: connector, task and topic statuses in the
``status.storage.topic``, in Kafka Connect's record layout::

    status-connector-<c>   {"state":"RUNNING","trace":null,"worker_id":"host:port","generation":G}
    status-task-<c>-<n>    the same fields
    status-topic-<topic>:connector-<c>
                           {"topic":{"name":..,"connector":..,"task":n,"discoverTimestamp":ms}}

A ``DESTROYED`` status, a removed connector or task, and a deleted topic status are
tombstones (null values). Public API -- the ``StatusBackingStore`` protocol
(``sparkcat.runtime.stores.statuses``, topic statuses included) plus the log's lifecycle::

    store = KafkaStatusBackingStore(worker_config)   # status.storage.topic,
                                                     # status.storage.partitions (5),
                                                     # status.storage.replication.factor (3)
    store.start(timeout_s) / store.stop()            # start reads the topic to the end
    store.put(ConnectorStatus) / store.put_safe(ConnectorStatus)
    store.put_task(TaskStatus) / store.put_task_safe(TaskStatus)
    store.get(connector) / store.get_task(connector, task) / store.get_all(connector)
    store.remove(connector) / store.remove_tasks(connector, keep_below=0)
    store.connectors()
    store.put_topic(TopicStatus) / store.delete_topic(connector, topic)
    store.get_topic(connector, topic) / store.get_all_topics(connector)
    store.flush(timeout_s)        # wait until every status written so far is acked
    store.read_to_end(timeout_s)  # make statuses written by other workers visible

Writes are asynchronous, as Kafka's (``put`` never blocks on the broker; a failed write is
logged), and read-your-writes: the writer's own view changes at once, and the record read
back later re-applies the same value. Statuses written by other workers arrive through the
reader thread (after :meth:`read_to_end` at the latest). Kafka's rules hold:

* ``put_safe``/``put_task_safe`` skip the write when the status already known has a newer
  generation and was written by another worker (Kafka's ``CacheEntry.canWriteSafely``);
* a task status ``UNASSIGNED`` read from the topic does not replace a ``RUNNING`` status of
  the same or a newer generation (a slow worker's stale report during a rebalance).

The producer is Kafka's for this topic: ``enable.idempotence=false`` with one request in
flight (ordered), ``acks=all``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import orjson

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.stores.kafka_log import KafkaBasedLog, LogRecord, internal_client_configs
from sparkcat.runtime.stores.kafka_offsets import topic_setting
from sparkcat.runtime.stores.statuses import (
    ConnectorStatus,
    State,
    Status,
    StatusView,
    TaskStatus,
    TopicStatus,
)

__all__ = [
    "STATUS_STORAGE_PARTITIONS_CONFIG",
    "STATUS_STORAGE_REPLICATION_FACTOR_CONFIG",
    "STATUS_STORAGE_TOPIC_CONFIG",
    "KafkaStatusBackingStore",
    "TopicStatus",
    "status_value",
    "topic_status_value",
]

log = logging.getLogger(__name__)

STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


def status_value(status: Status) -> bytes | None:
    """The record value of ``status``: Kafka's field order; ``None`` for DESTROYED."""
    if status.state is State.DESTROYED:
        return None
    return orjson.dumps(
        {
            "state": status.state.value,
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": status.generation,
        }
    )


def topic_status_value(status: TopicStatus) -> bytes:
    """The record value of a topic status, as Kafka writes it."""
    return orjson.dumps(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": status.task,
                "discoverTimestamp": status.discover_timestamp,
            }
        }
    )


def _task_key(connector: str, task: int) -> str:
    return f"{TASK_STATUS_PREFIX}{connector}-{task}"


def _can_write_safely(old: Status, new: Status) -> bool:
    return old.worker_id == new.worker_id or old.generation <= new.generation


def _not_stale(old: Status, new: Status) -> bool:
    """False for a task status UNASSIGNED read from the topic after a RUNNING one of the same
    or a newer generation: a stale report from a worker that missed the RUNNING status."""
    return not (
        new.state is State.UNASSIGNED
        and old.state is State.RUNNING
        and old.generation >= new.generation
    )


class KafkaStatusBackingStore(StatusView):
    """Statuses in a compacted Kafka topic, read from the :class:`StatusView` that its own
    writes and the records read back both apply to; see the module docstring."""

    def __init__(
        self,
        worker: Mapping[str, Any],
        topic: str | None = None,
        client_id: str = "connect-distributed-statuses",
    ) -> None:
        name = topic if topic is not None else str(worker.get(STATUS_STORAGE_TOPIC_CONFIG, ""))
        if not name.strip():
            raise ConfigError("Must specify topic for connector status.")
        self.topic = name.strip()
        super().__init__()
        # Held from a local change to its send: the topic gets writes in the order the
        # writer's own view applied them.
        self._write_lock = threading.Lock()
        self._log = KafkaBasedLog(
            self.topic,
            *internal_client_configs(worker, client_id),
            self._consume,
            purpose=(STATUS_STORAGE_TOPIC_CONFIG, "connector and task statuses"),
            partitions=topic_setting(worker, STATUS_STORAGE_PARTITIONS_CONFIG, 5),
            replication_factor=topic_setting(worker, STATUS_STORAGE_REPLICATION_FACTOR_CONFIG, 3),
            idempotent=False,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout_s: float = 60.0) -> None:
        self._log.start(timeout_s)

    def stop(self) -> None:
        self._log.stop()

    def flush(self, timeout_s: float = 30.0) -> None:
        self._log.flush(timeout_s)

    def read_to_end(self, timeout_s: float = 30.0) -> None:
        self._log.read_to_end(timeout_s)

    # -- connector and task statuses ------------------------------------------------------------

    def put(self, status: ConnectorStatus) -> None:
        """Write a connector status unconditionally (DESTROYED removes it)."""
        self._put_connector(status, safe=False)

    def put_safe(self, status: ConnectorStatus) -> None:
        """Write unless another worker's status of a newer generation is known."""
        self._put_connector(status, safe=True)

    def put_task(self, status: TaskStatus) -> None:
        self._put_task(status, safe=False)

    def put_task_safe(self, status: TaskStatus) -> None:
        self._put_task(status, safe=True)

    def remove_tasks(self, connector: str, keep_below: int = 0) -> None:
        """Tombstone the statuses of tasks with id >= ``keep_below`` (all by default)."""
        with self._write_lock:
            for task in self._forget_tasks(connector, keep_below):
                self._send(_task_key(connector, task), None)

    def remove(self, connector: str) -> None:
        """Tombstone the connector's status and its tasks' (Kafka's DESTROYED)."""
        with self._write_lock:
            tasks = self._forget_connector(connector)
            self._send(CONNECTOR_STATUS_PREFIX + connector, None)
            for task in tasks:
                self._send(_task_key(connector, task), None)

    # -- topic statuses ------------------------------------------------------------------------

    def put_topic(self, status: TopicStatus) -> None:
        with self._write_lock:
            self._set_topic(status.connector, status.topic, status)
            key = f"{TOPIC_STATUS_PREFIX}{status.topic}{TOPIC_STATUS_SEPARATOR}{status.connector}"
            self._send(key, topic_status_value(status))

    def delete_topic(self, connector: str, topic: str) -> None:
        with self._write_lock:
            self._forget_topic(connector, topic)
            self._send(f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}", None)

    # -- writing -------------------------------------------------------------------------------

    def _put_connector(self, status: ConnectorStatus, safe: bool) -> None:
        with self._write_lock:
            if not self._set_connector(status, _can_write_safely if safe else None):
                return
            self._send(CONNECTOR_STATUS_PREFIX + status.connector, status_value(status))

    def _put_task(self, status: TaskStatus, safe: bool) -> None:
        with self._write_lock:
            if not self._set_task(status, _can_write_safely if safe else None):
                return
            self._send(_task_key(status.connector, status.task), status_value(status))

    def _send(self, key: str, value: bytes | None) -> None:
        def sent(error: Exception | None, partition: int, offset: int) -> None:
            if error is not None:
                log.error("Failed to write status update %s: %s", key, error)

        self._log.send(key.encode(), value, sent)

    # -- reading -------------------------------------------------------------------------------

    def _consume(self, record: LogRecord) -> None:
        key = (record.key or b"").decode("utf-8", "replace")
        if key.startswith(CONNECTOR_STATUS_PREFIX):
            self._read_connector(key[len(CONNECTOR_STATUS_PREFIX) :], record.value)
        elif key.startswith(TASK_STATUS_PREFIX):
            self._read_task(key, record.value)
        elif key.startswith(TOPIC_STATUS_PREFIX):
            self._read_topic(key, record.value)
        else:
            log.warning("Discarding record with invalid key %s", key)

    def _read_connector(self, connector: str, value: bytes | None) -> None:
        if not connector:
            log.warning("Discarding record with invalid connector status key")
            return
        if value is None:
            self._forget_connector(connector)
            return
        fields = _status_fields(value)
        if fields is not None:
            self._set_connector(ConnectorStatus(connector, *fields))

    def _read_task(self, key: str, value: bytes | None) -> None:
        parts = key.split("-")
        try:
            connector, task = "-".join(parts[2:-1]), int(parts[-1])
        except ValueError:
            connector, task = "", -1
        if len(parts) < 4 or not connector:
            log.warning("Discarding record with invalid task status key %s", key)
            return
        if value is None:
            self._forget_task(connector, task)
            return
        fields = _status_fields(value)
        if fields is not None:
            self._set_task(TaskStatus(connector, task, *fields), _not_stale)

    def _read_topic(self, key: str, value: bytes | None) -> None:
        rest = key[len(TOPIC_STATUS_PREFIX) :]
        topic, separator, connector = rest.partition(TOPIC_STATUS_SEPARATOR)
        if not separator or not topic or not connector:
            log.warning("Discarding record with invalid topic status key %s", key)
            return
        if value is None:
            self._forget_topic(connector, topic)
            return
        try:
            inner = orjson.loads(value)["topic"]
            status = TopicStatus(
                str(inner["name"]),
                str(inner["connector"]),
                int(inner["task"]),
                int(inner["discoverTimestamp"]),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            log.warning("Failed to parse topic status with key %s", key)
            return
        self._set_topic(connector, topic, status)


def _status_fields(value: bytes) -> tuple[State, str, int, str | None] | None:
    """``(state, worker_id, generation, trace)`` of a status value, or None if malformed."""
    try:
        decoded = orjson.loads(value)
        state = State(decoded["state"])
        worker_id, generation, trace = (
            decoded["worker_id"],
            decoded["generation"],
            decoded.get("trace"),
        )
        if not isinstance(worker_id, str) or not isinstance(generation, int):
            raise TypeError("worker_id/generation")
        return state, worker_id, generation, trace if isinstance(trace, str) else None
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        log.error("Failed to deserialize status %r", value[:200])
        return None
