"""Offsets in the herder: ``GET /connectors/{name}/offsets`` (KIP-875), ``initial_offsets``
on create (KIP-995), and the contexts handed to running connectors.

Source offsets live in the worker's offset store (``get_all``/``put_batch``/``flush``); sink
offsets in consumer group ``connect-<name>`` (or ``consumer.override.group.id``), reached
through an admin client built from the worker config (:mod:`sparkcat.kafka.admin`).

``initial_offsets`` takes the body of ``PATCH .../offsets`` — ``{"offsets": [...]}`` — or
just its list: ``[{"partition": {...}, "offset": {...}}, ...]``. They are validated with
Kafka's messages (source: string keys and primitive values; sink: §1.6), passed to the
connector's ``alter_offsets``, and written before the connector starts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sparkcat.api.errors import ConnectError, DataError, NotFoundError
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import SinkConnectorContext
from sparkcat.api.source import OffsetStorageReader, SourceConnectorContext
from sparkcat.runtime.errors import BadRequestError

if TYPE_CHECKING:
    import threading

    from sparkcat.runtime.herder import ManagedConnector, StandaloneHerder
    from sparkcat.runtime.herder_validation import Validation
    from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger(__name__)


def sink_group(name: str, config: Mapping[str, str]) -> str:
    return config.get("consumer.override.group.id") or f"connect-{name}"


class HerderOffsetsMixin:
    """Offset operations of :class:`~sparkcat.runtime.herder.StandaloneHerder`."""

    # Provided by StandaloneHerder.
    _lock: threading.RLock
    _connectors: dict[str, ManagedConnector]
    offset_store: Any
    worker_config: WorkerConfig

    def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets": [{"partition": ..., "offset": ...}, ...]}`` (any target state)."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Connector {name} not found")
            kind, config = managed.kind, dict(managed.config)
        if kind == "source":
            pairs = self.offset_store.get_all(name)
            return {"offsets": [{"partition": p, "offset": o} for p, o in pairs if o is not None]}
        from sparkcat.kafka.admin import committed_offsets

        with self.admin_client(config) as admin:
            offsets = committed_offsets(admin, sink_group(name, config))
        return {
            "offsets": [
                {
                    "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                    "offset": {"kafka_offset": offset},
                }
                for tp, offset in sorted(offsets.items())
            ]
        }

    def admin_client(self, config: Mapping[str, str]) -> Any:
        """A context manager yielding a confluent-kafka ``AdminClient`` for ``config``."""
        import contextlib

        from confluent_kafka.admin import AdminClient

        from sparkcat.kafka.clients import admin_config

        @contextlib.contextmanager
        def client() -> Any:
            conf: dict[str, str | int | float | bool] = {
                **admin_config(self.worker_config.strings(), config)
            }
            yield AdminClient(conf)

        return client()

    def write_initial_offsets(
        self,
        name: str,
        validation: Validation,
        config: dict[str, str],
        initial_offsets: Any,
    ) -> None:
        """Validate and store KIP-995 initial offsets before the connector starts."""
        entries = _offset_entries(initial_offsets)
        connector = validation.connector_class()
        if validation.kind == "source":
            pairs = _source_pairs(entries)
            self._alter(name, connector, config, pairs)
            self.offset_store.put_batch(name, pairs)
            self.offset_store.flush()
            return
        sink_offsets = _sink_offsets(entries)
        self._alter(name, connector, config, sink_offsets)
        from sparkcat.kafka.admin import alter_group_offsets

        committed = {(tp.topic, tp.partition): o for tp, o in sink_offsets.items() if o is not None}
        with self.admin_client(config) as admin:
            alter_group_offsets(admin, sink_group(name, config), committed)

    def _alter(self, name: str, connector: Any, config: dict[str, str], offsets: Any) -> None:
        try:
            connector.alter_offsets(config, offsets)
        except NotImplementedError as exc:
            raise ConnectError(
                f"Failed to modify offsets for connector {name} because it doesn't support "
                "external modification of offsets"
            ) from exc


def _offset_entries(initial_offsets: Any) -> list[Any]:
    entries = initial_offsets
    if isinstance(entries, Mapping):
        entries = entries.get("offsets")
    if not isinstance(entries, list) or not entries:
        raise BadRequestError(
            "Partitions / offsets need to be provided for an alter offsets request"
        )
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise BadRequestError(f"Invalid offsets entry {entry!r}: expected an object")
    return entries


def _source_pairs(entries: list[Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    from sparkcat.runtime.stores.offsets import validate_offset_map

    pairs = []
    for entry in entries:
        partition, offset = entry.get("partition"), entry.get("offset")
        try:
            if partition is None:
                raise DataError("Partition objects cannot be null")
            validate_offset_map(partition)
            validate_offset_map(offset)
        except DataError as exc:
            raise BadRequestError(str(exc)) from exc
        pairs.append((dict(partition), None if offset is None else dict(offset)))
    return pairs


def _as_int(value: Any, message: str) -> int:
    if isinstance(value, bool):
        raise BadRequestError(message)
    try:
        return int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError) as exc:
        raise BadRequestError(message) from exc


def _sink_offsets(entries: list[Any]) -> dict[TopicPartition, int | None]:
    offsets: dict[TopicPartition, int | None] = {}
    for entry in entries:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, Mapping):
            raise BadRequestError(
                "The partition for a sink connector offset cannot be null or missing"
            )
        if "kafka_topic" not in partition or "kafka_partition" not in partition:
            raise BadRequestError(
                "The partition for a sink connector offset must contain the keys 'kafka_topic' "
                "and 'kafka_partition'"
            )
        topic = partition["kafka_topic"]
        if not isinstance(topic, str):
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if partition["kafka_partition"] is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        number = _as_int(
            partition["kafka_partition"],
            "Failed to parse the following Kafka partition value in the provided offsets: "
            f"'{partition['kafka_partition']}'. Partition values for sink connectors need to be "
            "integers.",
        )
        if offset is None:
            offsets[TopicPartition(topic, number)] = None
            continue
        if not isinstance(offset, Mapping) or "kafka_offset" not in offset:
            raise BadRequestError(
                "The offset for a sink connector should either be null or contain the key "
                "'kafka_offset'"
            )
        offsets[TopicPartition(topic, number)] = _as_int(
            offset["kafka_offset"],
            "Failed to parse the following Kafka offset value in the provided offsets: "
            f"'{offset['kafka_offset']}'. Offset values for sink connectors need to be integers.",
        )
    return offsets


# -- the contexts handed to Connector.initialize ----------------------------------------------
class _ContextBase:
    def __init__(self, herder: StandaloneHerder, name: str) -> None:
        self._herder = herder
        self._name = name
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def request_task_reconfiguration(self) -> None:
        if self._closed:
            raise ConnectError(
                f"The connector {self._name} was shut down; it cannot request a task "
                "reconfiguration"
            )
        self._herder.request_task_reconfiguration(self._name)

    def raise_error(self, exc: BaseException) -> None:
        if self._closed:
            return
        with self._herder._lock:
            managed = self._herder._connectors.get(self._name)
            if managed is not None:
                self._herder.fail_connector(managed, exc)


class _StoreOffsetReader(OffsetStorageReader):
    def __init__(self, store: Any, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._store.get(self._connector, partition)
        return found


class HerderSourceConnectorContext(_ContextBase, SourceConnectorContext):
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _StoreOffsetReader(self._herder.offset_store, self._name)


class HerderSinkConnectorContext(_ContextBase, SinkConnectorContext):
    pass


def make_context(herder: StandaloneHerder, managed: ManagedConnector) -> _ContextBase:
    if managed.kind == "source":
        return HerderSourceConnectorContext(herder, managed.name)
    return HerderSinkConnectorContext(herder, managed.name)


__all__ = ["HerderOffsetsMixin", "make_context", "sink_group"]
