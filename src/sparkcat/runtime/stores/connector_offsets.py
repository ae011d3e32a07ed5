"""Kafka's ``ConnectorOffsetBackingStore``: a connector's own offsets topic (KIP-618).

A source connector whose config sets ``offsets.storage.topic`` keeps its offsets in that
topic instead of the worker's ``offset.storage.topic`` (distributed workers; a standalone
worker ignores the key, as Kafka's). As in Kafka:

- reads look in the connector's topic first and fall back to the worker's global topic for
  partitions the connector's topic does not know (a connector that was given its own topic
  later resumes from what the global topic holds);
- writes go to the connector's topic, then to the worker's global topic as well (a failure
  there is logged, not raised: the connector's topic is the truth). Tombstones go to the
  global topic first, so a crash between the two writes never resurrects a removed
  partition through the fallback.

:func:`for_connector` picks the store a connector's query uses; :class:`ConnectorOffsetStore`
implements :class:`~sparkcat.runtime.stores.offsets.OffsetStore`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.offsets import (
    OffsetStore,
    SourceOffset,
    SourcePartition,
    offset_key_bytes,
)

__all__ = ["CONNECTOR_OFFSETS_TOPIC_CONFIG", "ConnectorOffsetStore", "for_connector"]

log = logging.getLogger(__name__)

CONNECTOR_OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"


def for_connector(
    worker_store: OffsetStore, worker_config: Mapping[str, Any], connector_config: Mapping[str, Any]
) -> OffsetStore:
    """The offset store of one connector: ``worker_store`` itself unless the connector names
    an offsets topic of its own and the worker keeps offsets in Kafka (distributed). The
    connector's topic is created when missing and read to its end before this returns."""
    topic = str(connector_config.get(CONNECTOR_OFFSETS_TOPIC_CONFIG) or "").strip()
    if not topic or not isinstance(worker_store, KafkaOffsetBackingStore):
        return worker_store
    if topic == worker_store.topic:
        return worker_store
    name = str(connector_config.get("name", ""))
    own = KafkaOffsetBackingStore(worker_config, topic, client_id=f"connect-offsets-{name}")
    try:
        own.start()
    except BaseException:
        own.close()
        raise
    log.info("Connector %s keeps its source offsets in %s (worker's %s as fallback)", name,
             topic, worker_store.topic)  # fmt: skip
    return ConnectorOffsetStore(own, worker_store)


class ConnectorOffsetStore:
    """The connector's own store first, the worker's as fallback (see the module docs).
    Closing it closes the connector's store only: the worker's is shared."""

    def __init__(self, primary: KafkaOffsetBackingStore, worker: OffsetStore) -> None:
        self.primary = primary
        self.worker = worker

    @property
    def topic(self) -> str:
        return self.primary.topic

    def get(self, connector: str, partition: SourcePartition) -> dict[str, Any] | None:
        found = self.primary.get(connector, partition)
        return found if found is not None else self.worker.get(connector, partition)

    def get_all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        merged: dict[bytes, tuple[dict[str, Any], dict[str, Any]]] = {}
        for store in (self.worker, self.primary):  # the connector's own topic wins
            for partition, offset in store.get_all(connector):
                merged[offset_key_bytes(connector, partition)] = (partition, offset)
        return list(merged.values())

    def put_batch(
        self,
        connector: str,
        items: Iterable[tuple[SourcePartition, SourceOffset | None]],
    ) -> None:
        batch = list(items)
        tombstones = [(p, o) for p, o in batch if o is None]
        if tombstones:
            self.worker.put_batch(connector, tombstones)
        self.primary.put_batch(connector, batch)
        offsets = [(p, o) for p, o in batch if o is not None]
        if offsets:
            try:
                self.worker.put_batch(connector, offsets)
            except Exception as exc:  # the connector's topic has them: that is the truth
                log.warning("Could not also write offsets of %s to the worker's global offsets "
                            "topic: %s", connector, exc)  # fmt: skip

    def read_to_end(self, timeout_s: float = 30.0) -> None:
        """Apply every record of both topics now, whoever wrote it."""
        self.primary.read_to_end(timeout_s)
        read = getattr(self.worker, "read_to_end", None)
        if read is not None:
            read(timeout_s)

    def flush(self) -> None:
        self.primary.flush()
        self.worker.flush()

    def close(self) -> None:
        self.primary.close()
