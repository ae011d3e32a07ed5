"""The offsets topic an exactly-once lease writes its offsets to, inside its transactions.

The connector's ``offsets.storage.topic`` if set, else the worker's ``offset.storage.topic``
(:func:`offsets_topic`); records are keyed and partitioned exactly as the worker's offset
store writes them (:func:`partition_of`).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.api.errors import ConnectError
from sparkcat.kafka import clients

__all__ = ["offsets_topic", "partition_count", "partition_of"]

_topics_lock = threading.Lock()
_known_partitions: dict[tuple[str, str], int] = {}


def offsets_topic(worker: Mapping[str, Any], connector: Mapping[str, Any]) -> str:
    """The connector's primary offsets topic: ``offsets.storage.topic`` if set, else the
    worker's ``offset.storage.topic``."""
    topic = connector.get("offsets.storage.topic") or worker.get("offset.storage.topic")
    if not topic:
        raise ConnectError("Exactly-once source support needs an offset.storage.topic")
    return str(topic).strip()


def partition_count(worker: Mapping[str, Any], connector: Mapping[str, Any], topic: str) -> int:
    """Partitions of the offsets topic (created compacted when missing, with the worker's
    ``offset.storage.partitions``/``.replication.factor``), cached per process."""
    servers = str(worker.get("bootstrap.servers", ""))
    with _topics_lock:
        known = _known_partitions.get((servers, topic))
    if known:
        return known
    admin = AdminClient(dict(clients.admin_config(worker, connector)))
    metadata = admin.list_topics(topic, timeout=30).topics.get(topic)
    if metadata is None or metadata.error is not None or not metadata.partitions:
        partitions = int(worker.get("offset.storage.partitions", 25))
        replication = int(worker.get("offset.storage.replication.factor", -1))
        new = NewTopic(topic, partitions, replication, config={"cleanup.policy": "compact"})
        try:
            admin.create_topics([new], request_timeout=30)[topic].result()
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise ConnectError(f"Failed to create offsets topic {topic}: {exc}") from exc
        metadata = admin.list_topics(topic, timeout=30).topics[topic]
    count = len(metadata.partitions)
    with _topics_lock:
        _known_partitions[(servers, topic)] = count
    return count


def partition_of(key: bytes, partitions: int) -> int:
    """Where Kafka's default partitioner (and the offset store's ``murmur2_random``) puts
    ``key``: ``toPositive(murmur2(key)) % partitions``."""
    with warnings.catch_warnings():
        # kafka-python's first import uses importlib.resources calls that newer Pythons
        # deprecate; under warnings-as-errors (pytest) that would fail the lease.
        warnings.filterwarnings("ignore", "(read|open)_text is deprecated", DeprecationWarning)
        from kafka.partitioner.default import murmur2

    return int(murmur2(key) & 0x7FFFFFFF) % partitions
