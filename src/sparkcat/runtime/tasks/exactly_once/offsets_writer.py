"""Offsets written outside a lease while exactly-once source support is on (KIP-618).

With ``exactly.once.source.support=enabled`` every write of a source connector's offsets to
its primary offsets topic (the connector's ``offsets.storage.topic``, else the worker's
``offset.storage.topic``) is transactional, so a ``read_committed`` reader never sees an offset
whose records were not committed, and a fenced zombie can never overwrite one. Leases write
theirs in their own transactions (:mod:`.source_task`); this module is the other writer Kafka
has: the offsets REST API and ``initial_offsets`` (Kafka's ``Worker.modifySourceConnectorOffsets``
uses the transactional producer of the connector's task 0, ``<group.id>-<connector>-0``, which
also fences any instance of that task still running).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaException, Producer

from sparkcat.api.errors import ConnectError
from sparkcat.kafka import clients
from sparkcat.runtime.stores.connector_offsets import ConnectorOffsetStore
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import (
    SourceOffset,
    SourcePartition,
    offset_key_bytes,
    offset_value_bytes,
    validate_offset_map,
)
from sparkcat.runtime.tasks.exactly_once import enabled, transactional_id
from sparkcat.runtime.tasks.exactly_once.offsets_topic import (
    offsets_topic,
    partition_count,
    partition_of,
)

__all__ = ["after_transaction", "write_offsets", "write_offsets_transactionally"]

log = logging.getLogger(__name__)

_TIMEOUT_S = 30.0
# How long the worker waits to read a lease's committed offsets back before it takes them as
# they are (the connector's next lease waits for this).
_READ_BACK_TIMEOUT_S = 5.0


def write_offsets_transactionally(
    worker: Mapping[str, Any],
    connector_config: Mapping[str, Any],
    connector: str,
    items: Iterable[tuple[SourcePartition, SourceOffset | None]],
) -> str:
    """Write ``items`` to the connector's primary offsets topic in one transaction of task 0's
    transactional id; the topic written. Raises :class:`ConnectError` when the transaction
    does not commit (nothing of it is then visible to ``read_committed`` readers)."""
    pairs = list(items)
    for partition, offset in pairs:
        validate_offset_map(partition)
        validate_offset_map(offset)
    topic = offsets_topic(worker, connector_config)
    partitions = partition_count(worker, connector_config, topic)
    group = str(worker.get("group.id", ""))
    config = clients.producer_config(
        worker, connector_config, f"connector-offset-producer-{connector}"
    )
    config.update(
        {
            "transactional.id": transactional_id(group, connector, 0),
            "enable.idempotence": "true",
            "acks": "all",
            # librdkafka requires message.timeout.ms <= transaction.timeout.ms.
            "delivery.timeout.ms": str(int(_TIMEOUT_S * 1000)),
            "transaction.timeout.ms": str(int(_TIMEOUT_S * 1000)),
        }
    )
    producer = Producer(config)
    try:
        producer.init_transactions(_TIMEOUT_S)
        producer.begin_transaction()
        for partition, offset in pairs:
            key = offset_key_bytes(connector, partition)
            producer.produce(
                topic, offset_value_bytes(offset), key, partition=partition_of(key, partitions)
            )
        producer.commit_transaction(_TIMEOUT_S)
    except KafkaException as exc:
        try:
            producer.abort_transaction(_TIMEOUT_S)
        except KafkaException:
            log.debug("Aborting the offsets transaction of %s failed", connector, exc_info=True)
        raise ConnectError(
            f"Failed to write offsets for source connector {connector} to {topic} in a "
            f"transaction: {exc}"
        ) from exc
    finally:
        producer.flush(0)
    return topic


def _primary(store: Any) -> Any:
    return store.primary if isinstance(store, ConnectorOffsetStore) else store


def after_transaction(
    store: Any, connector: str, items: Iterable[tuple[SourcePartition, SourceOffset | None]]
) -> None:
    """Offsets a transaction committed to ``store``'s primary topic: take them into the
    store's view, so the next lease starts from them, and copy them to the worker's global
    topic when the connector has a topic of its own (best effort, as Kafka's secondary store:
    a failure is logged; the connector's topic is the truth). Never writes to the primary
    topic.

    They are taken as they are, not read back: they are committed, and a read_committed
    reader cannot pass another producer's transaction still open on the partition (every
    exactly-once task of the worker writes this topic), so reading back stalled each result
    for up to that transaction's length (seen in a soak: 5 s, 250 times in 45 minutes)."""
    pairs = list(items)
    primary = _primary(store)
    remember = getattr(primary, "remember", None)
    read = getattr(primary, "read_to_end", None)
    try:
        if remember is not None:
            remember(connector, pairs)
        elif read is not None:
            read(_READ_BACK_TIMEOUT_S)
    except Exception as exc:
        log.warning("Could not take the committed offsets of %s into the store's view: %s",
                    connector, exc)  # fmt: skip
    if isinstance(store, ConnectorOffsetStore):
        try:
            store.worker.put_batch(connector, pairs)
        except Exception as exc:
            log.warning("Could not also write offsets of %s to the worker's global offsets "
                        "topic: %s", connector, exc)  # fmt: skip


def settle_committed(store: Any, worker: Mapping[str, Any], connector: str | None = None) -> int:
    """Make ``store`` hold only committed offsets, and ``connector``'s latest committed ones;
    the number of keys corrected.

    A read_committed reader must not see offset records of transactions that were aborted or
    are still open (a task instance killed mid-transaction); a broker that shows them anyway
    (the embedded one does) would make the task's next instance start after records that
    never committed, and lose them. And a read_committed reader stops at the last stable
    offset: while any task's transaction is open on a partition, offsets committed after its
    start stay unread, so a task resuming here (a restart, a move) would start from an older
    offset and produce its records again. So the connector's offsets topic is read once more
    to its end with transactions resolved here: every key written by such a transaction gets
    its last committed value back (or falls back to the worker's copy when it has none), and
    every key of ``connector`` gets its latest committed value as of its latest record, which
    the store's reader cannot then undo when it catches up (``restore_at``)."""
    from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

    primary = _primary(store)
    topic, restore = getattr(primary, "topic", None), getattr(primary, "restore_raw", None)
    if topic is None or restore is None:
        return 0
    view = read_topic(str(worker.get("bootstrap.servers", "")), topic, timeout_s=10.0)
    mine = _key_prefix(connector) if connector is not None else None
    doubtful = {r.key for r in (*view.aborted, *view.open) if r.key is not None}
    committed = {r.key: r.value for r in view.records if r.key is not None}
    others = [k for k in doubtful if mine is None or not k.startswith(mine)]
    if others:
        restore([(key, committed.get(key)) for key in others])
    restore_at = getattr(primary, "restore_at", None)
    if mine is None or restore_at is None:
        return len(others)
    latest: dict[bytes, tuple[int, int]] = {}  # key -> its last record's position, any state
    for r in (*view.records, *view.aborted, *view.open):
        if r.key is not None and r.key.startswith(mine):
            known = latest.get(r.key)
            if known is None or r.offset > known[1]:
                latest[r.key] = (r.partition, r.offset)
    changed = restore_at(
        [
            (key, committed.get(key), partition, offset)
            for key, (partition, offset) in latest.items()
        ]
    )
    return len(others) + int(changed)


def _key_prefix(connector: str) -> bytes:
    """How the offset keys of ``connector`` begin (``["<connector>",``)."""
    return offset_key_bytes(connector, {})[:-3]


def write_offsets(
    store: Any,
    worker: Mapping[str, Any],
    connector_config: Mapping[str, Any],
    connector: str,
    items: Iterable[tuple[SourcePartition, SourceOffset | None]],
) -> None:
    """The herder's write of a source connector's offsets (REST, ``initial_offsets``):
    transactional with exactly-once source support on a Kafka-backed store, else the store's
    own ``put_batch``. Tombstones reach the worker's global topic first either way, so a crash
    between the two writes never resurrects a removed partition through the fallback."""
    pairs = list(items)
    if not (enabled(worker) and isinstance(_primary(store), KafkaOffsetBackingStore)):
        store.put_batch(connector, pairs)
        store.flush()
        return
    tombstones = [(p, o) for p, o in pairs if o is None]
    if tombstones and isinstance(store, ConnectorOffsetStore):
        store.worker.put_batch(connector, tombstones)
    write_offsets_transactionally(worker, connector_config, connector, pairs)
    after_transaction(store, connector, [(p, o) for p, o in pairs if o is not None])
