"""The runtime's side of the task contexts, for one lease on an executor.

* :class:`LeaseOffsetStorageReader` answers ``offset(partition)`` from the offsets the worker
  placed in the lease (the committed offsets when the lease was planned).
* :class:`WorkerSourceTaskContext` hands a source task its config and that reader.
* :class:`WorkerSinkTaskContext` records what a sink task asks for (rewinds, pauses, commit
  requests, a redelivery timeout); the sink lease loop applies the requests to its consumer
  between calls into the task, as Kafka's ``WorkerSinkTask`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import TopicPartition
from sparkcat.api.sink import ErrantRecordReporter, SinkTaskContext
from sparkcat.api.source import OffsetStorageReader, SourceTaskContext

__all__ = [
    "IllegalPartitionError",
    "LeaseOffsetStorageReader",
    "WorkerSinkTaskContext",
    "WorkerSourceTaskContext",
    "partition_key",
]


def partition_key(partition: Mapping[str, Any]) -> bytes:
    """A hashable, order-independent key for a source partition map (its sorted JSON)."""
    return orjson.dumps(partition, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


class LeaseOffsetStorageReader(OffsetStorageReader):
    """Serves the source offsets known when the lease started; read-only."""

    def __init__(self, offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]):
        self._offsets: dict[bytes, dict[str, Any]] = {}
        for partition, offset in offsets:
            if offset is not None:
                self._offsets[partition_key(partition)] = dict(offset)

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._offsets.get(partition_key(partition))
        # A copy, so a task that mutates what it read cannot change what others read.
        return None if found is None else dict(found)


class WorkerSourceTaskContext(SourceTaskContext):
    """The context of a source task during one lease."""

    def __init__(self, configs: dict[str, str], reader: OffsetStorageReader) -> None:
        self._configs = configs
        self._reader = reader

    def configs(self) -> dict[str, str]:
        return self._configs

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class WorkerSinkTaskContext(SinkTaskContext):
    """The context of a sink task during one lease.

    Requests are recorded here and applied by the lease loop: :attr:`pending_offsets`
    (rewinds to seek before the next fetch), :attr:`paused`, :attr:`commit_requested`,
    :attr:`timeout_ms`.
    """

    def __init__(
        self,
        configs: dict[str, str],
        assignment: Iterable[TopicPartition],
        errant_reporter: ErrantRecordReporter | None = None,
    ) -> None:
        self._configs = configs
        self._assignment = frozenset(assignment)
        self._errant_reporter = errant_reporter
        self.pending_offsets: dict[TopicPartition, int] = {}
        self.paused: set[TopicPartition] = set()
        self.pause_changed = False
        self.commit_requested = False
        self.timeout_ms = -1

    def configs(self) -> dict[str, str]:
        return self._configs

    def _reset_offsets(self, offsets: dict[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            if not isinstance(offset, int) or offset < 0:
                raise ValueError(f"Invalid offset {offset!r} for {tp}: must be an int >= 0")
            self.pending_offsets[TopicPartition(tp[0], tp[1])] = offset

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused.update(partitions)
        self.pause_changed = True

    def resume(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused.difference_update(partitions)
        self.pause_changed = True

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        # KIP-610: only when a DLQ topic is set or errors.log.enable=true (else None).
        return self._errant_reporter

    def _check_assigned(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            if tp not in self._assignment:
                # Kafka's message for pausing/resuming a partition the task does not own.
                raise IllegalPartitionError(
                    f"No current assignment for partition {TopicPartition(tp[0], tp[1])}"
                )


class IllegalPartitionError(ConnectError):
    """A sink task paused or resumed a partition that is not assigned to it."""
