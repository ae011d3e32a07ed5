"""Kafka's ``KafkaOffsetBackingStore``: source offsets in the ``offset.storage.topic``.

Implements :class:`sparkcat.runtime.stores.offsets.OffsetStore` with the very key and value
bytes of the file and memory stores, which are Kafka Connect's::

    key   = ["<connector>",{<source partition>}]   value = {<offset>}   (null = tombstone)

Records are produced with librdkafka's ``murmur2_random`` partitioner, so a key lands on the
partition Kafka's Java producer picks and Kafka's tools find it. Public API::

    store = KafkaOffsetBackingStore(worker_config)   # reads offset.storage.topic,
                                                     # offset.storage.partitions (25),
                                                     # offset.storage.replication.factor (3)
    store.start(timeout_s)      # create the topic if missing; read it to the end
    store.get(connector, partition) / store.get_all(connector)
                                # answered from memory (what the reader has read so far)
    store.put_batch(connector, [(partition, offset_or_None), ...])
                                # validates all, produces all, returns once every record is
                                # acked by the broker *and* read back, so the writer's own
                                # get() sees it at once; raises OffsetStoreError otherwise
    store.read_to_end(timeout_s)  # make writes by other workers visible (Kafka's get()
                                # reads to the end first; here the caller chooses when)
    store.flush()               # no-op beyond put_batch's own wait (kept for the Protocol)
    store.close()               # stop the log; the store is unusable afterwards

Thread-safe: the reader thread and callers share one lock around the map.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.stores.kafka_log import KafkaBasedLog, LogRecord, internal_client_configs
from sparkcat.runtime.stores.offsets import (
    OffsetStoreError,
    OffsetView,
    SourceOffset,
    SourcePartition,
    offset_key_bytes,
    offset_value_bytes,
)

__all__ = [
    "OFFSET_STORAGE_PARTITIONS_CONFIG",
    "OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG",
    "OFFSET_STORAGE_TOPIC_CONFIG",
    "KafkaOffsetBackingStore",
]

OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"

_WRITE_TIMEOUT_S = 30.0


def topic_setting(worker: Mapping[str, Any], key: str, default: int) -> int:
    """An int worker setting (``-1`` = the broker's default), Kafka's default when unset."""
    raw = worker.get(key)
    return default if raw is None or str(raw).strip() == "" else int(str(raw).strip())


class KafkaOffsetBackingStore(OffsetView):
    """Source offsets kept in a compacted Kafka topic, read from the :class:`OffsetView` that
    the records read back (and :meth:`restore_raw`) apply to; see the module docstring."""

    def __init__(
        self,
        worker: Mapping[str, Any],
        topic: str | None = None,
        client_id: str = "connect-distributed-offsets",
    ) -> None:
        name = topic if topic is not None else str(worker.get(OFFSET_STORAGE_TOPIC_CONFIG, ""))
        if not name.strip():
            raise ConnectError("Offset storage topic must be specified")
        self.topic = name.strip()
        super().__init__()
        # key -> (partition, offset) of the record its value comes from, where known (read
        # back, or set by restore_at): the view never goes back to an older record of a key.
        self._positions: dict[bytes, tuple[int, int]] = {}
        self._log = KafkaBasedLog(
            self.topic,
            *internal_client_configs(worker, client_id),
            self._consume,
            purpose=(OFFSET_STORAGE_TOPIC_CONFIG, "source connector offsets"),
            partitions=topic_setting(worker, OFFSET_STORAGE_PARTITIONS_CONFIG, 25),
            replication_factor=topic_setting(worker, OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG, 3),
        )

    def start(self, timeout_s: float = 60.0) -> None:
        """Create the topic when missing and read every offset in it."""
        self._log.start(timeout_s)

    def read_to_end(self, timeout_s: float = 30.0) -> None:
        """Apply every record in the topic now, whoever wrote it."""
        self._check_open()
        self._log.read_to_end(timeout_s)

    def put_batch(
        self,
        connector: str,
        items: Iterable[tuple[SourcePartition, SourceOffset | None]],
    ) -> None:
        encoded = [(offset_key_bytes(connector, p), offset_value_bytes(o)) for p, o in items]
        self._check_open()
        deadline = time.monotonic() + _WRITE_TIMEOUT_S
        futures = [self._log.send(key, value) for key, value in encoded]
        written: dict[int, int] = {}
        try:
            for future in futures:
                partition, offset = future.result(timeout=max(deadline - time.monotonic(), 0))
                written[partition] = max(written.get(partition, 0), offset + 1)
            self._log.wait_until_consumed(written, deadline)
        except (ConnectError, TimeoutError) as exc:
            raise OffsetStoreError(f"Failed to write offsets to {self.topic}: {exc}") from exc

    def remember(
        self, connector: str, items: Iterable[tuple[SourcePartition, SourceOffset | None]]
    ) -> None:
        """Take offsets that another producer committed to this topic into this store's view
        now, without waiting for the reader to reach them (it applies the same records when
        it does)."""
        self.restore_raw((offset_key_bytes(connector, p), offset_value_bytes(o)) for p, o in items)

    def restore_raw(self, items: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Set keys to the given serialized values (``None``: forget the key): a reader that
        resolves transactions itself corrects what this store took from aborted ones."""
        with self._lock:
            self._check_open()
            self._apply(items)

    def restore_at(self, items: Iterable[tuple[bytes, bytes | None, int, int]]) -> int:
        """Set keys to values that hold as of a position of the topic: ``(key, value,
        partition, offset)``, ``value`` being what a committed reader sees for ``key`` once
        past ``offset`` (``None``: forget the key). The reader then skips the key's records up
        to that offset, so a reader behind it (a ``read_committed`` reader waits at the last
        stable offset while any transaction is open on the partition) cannot take the key
        back to an older value when it catches up. A position before the one the key's value
        already comes from changes nothing. Returns how many keys changed value."""
        changed = 0
        with self._lock:
            self._check_open()
            for key, value, partition, offset in items:
                known = self._positions.get(key)
                if known is not None and known[0] == partition and known[1] > offset:
                    continue
                self._positions[key] = (partition, offset)
                if self._data.get(key) != value:
                    changed += 1
                    self._apply([(key, value)])
        return changed

    def flush(self) -> None:
        self._check_open()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._log.stop()

    def _consume(self, record: LogRecord) -> None:
        if record.key is None:
            return
        with self._lock:
            known = self._positions.get(record.key)
            if known is not None and known[0] == record.partition and record.offset <= known[1]:
                return  # restore_at already set what holds past this record
            self._positions[record.key] = (record.partition, record.offset)
            self._apply([(record.key, record.value)])
