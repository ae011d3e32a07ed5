"""Offset syncs: written by the source task, read by the checkpoint task.

:class:`PartitionState` and :class:`OffsetSyncWriter` decide when a replicated record's
(upstream, downstream) offset pair is worth an ``OffsetSync`` record, as Kafka's
``OffsetSyncWriter``: the first record of a task's lifetime, a gap in upstream offsets, a
downstream offset that went backwards, or once the downstream offset is ``offset.lag.max``
past the last sync + 1. Others are remembered and sent when the task commits, so a quiet
topic's last offsets are synced too.

:class:`OffsetSyncStore` translates a consumer group's upstream offset with the latest sync
at or before it: ``downstream`` when the offsets are equal, else ``downstream + 1`` — never
further, so a translated offset never skips a record the group has not consumed (it may
re-deliver some). Kafka keeps 64 syncs per partition, spaced exponentially; this store
keeps every sync read in the current lease (a translation is therefore at least as close).
"""

from __future__ import annotations

import bisect
import logging
import operator
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror.formats import OffsetSync

log = logging.getLogger(__name__)

_MAX_OUTSTANDING = 10_000


class PartitionState:
    """When to sync one partition (Kafka's ``OffsetSyncWriter.PartitionState``)."""

    __slots__ = (
        "last_sync_downstream",
        "max_offset_lag",
        "previous_downstream",
        "previous_upstream",
        "should_sync",
    )

    def __init__(self, max_offset_lag: int) -> None:
        self.max_offset_lag = max_offset_lag
        self.previous_upstream = -1
        self.previous_downstream = -1
        self.last_sync_downstream = -1
        self.should_sync = False

    def update(self, upstream: int, downstream: int) -> bool:
        """Whether an offset sync should be sent now for this record."""
        no_sync_yet = self.last_sync_downstream == -1
        # A translation lands one past the last sync, hence the + 1.
        too_stale = downstream - (self.last_sync_downstream + 1) >= self.max_offset_lag
        skipped_upstream = upstream - self.previous_upstream != 1
        truncated_downstream = downstream < self.previous_downstream
        if no_sync_yet or too_stale or skipped_upstream or truncated_downstream:
            self.last_sync_downstream = downstream
            self.should_sync = True
        self.previous_upstream = upstream
        self.previous_downstream = downstream
        return self.should_sync

    def reset(self) -> None:
        self.should_sync = False


class OffsetSyncWriter:
    """Queues offset syncs; :meth:`fire_pending` hands them to ``send``.

    ``send(key, value)`` produces one record to partition 0 of the offset-syncs topic.
    """

    def __init__(self, max_offset_lag: int) -> None:
        self.max_offset_lag = max_offset_lag
        self.states: dict[tuple[str, int], PartitionState] = {}
        # (upstream, downstream) per partition: called once per replicated record, so no
        # OffsetSync is built until one is sent.
        self.pending: dict[tuple[str, int], tuple[int, int]] = {}
        self.delayed: dict[tuple[str, int], tuple[int, int]] = {}

    def maybe_queue(self, tp: tuple[str, int], upstream: int, downstream: int) -> None:
        """Note a replicated record of ``tp`` (a :class:`TopicPartition` or a plain
        ``(topic, partition)`` tuple)."""
        state = self.states.get(tp)
        if state is None:
            state = self.states[tp] = PartitionState(self.max_offset_lag)
        if state.update(upstream, downstream):
            self.delayed.pop(tp, None)
            self.pending[tp] = (upstream, downstream)
            state.reset()
        else:
            self.delayed[tp] = (upstream, downstream)

    def sync_run(
        self, tp: tuple[str, int], upstream: Sequence[int], downstream: Sequence[int]
    ) -> list[OffsetSync]:
        """Note consecutive replicated records of ``tp`` (``upstream[i]`` landed at
        ``downstream[i]``; ``-1``: not written, skipped as Kafka skips a record without
        metadata); the syncs to send now, in order: exactly those that :meth:`maybe_queue`
        then :meth:`take_pending` per record would give. A run copied without gaps (the
        common case) is settled by arithmetic instead of a call per record."""
        state = self.states.get(tp)
        if state is None:
            state = self.states[tp] = PartitionState(self.max_offset_lag)
        size = len(upstream)
        if size < 2 or not _contiguous(upstream, downstream):
            syncs = []
            for up, down in zip(upstream, downstream, strict=True):
                if down >= 0:
                    self.maybe_queue(tp, up, down)
                    syncs += self.take_pending()
            return syncs
        pairs = []
        if state.update(upstream[0], downstream[0]):
            pairs.append((upstream[0], downstream[0]))
            state.reset()
        # Within the run neither a gap nor a truncation can happen: a record is synced once
        # its downstream offset is offset.lag.max past the last sync + 1.
        step = max(state.max_offset_lag, 0) + 1
        shift = upstream[0] - downstream[0]
        nxt = max(state.last_sync_downstream + step, downstream[0] + 1)
        while nxt <= downstream[-1]:
            pairs.append((shift + nxt, nxt))
            nxt += step
        if pairs:
            state.last_sync_downstream = pairs[-1][1]
        state.previous_upstream = upstream[-1]
        state.previous_downstream = downstream[-1]
        if pairs and pairs[-1][1] == downstream[-1]:
            self.delayed.pop(tp, None)
        else:
            self.delayed[tp] = (upstream[-1], downstream[-1])
        topic_partition = TopicPartition(*tp)
        return [OffsetSync(topic_partition, up, down) for up, down in pairs]

    def promote_delayed(self) -> None:
        self.pending.update(self.delayed)
        self.delayed.clear()

    def take_pending(self) -> list[OffsetSync]:
        """The syncs to send now, in queue order; the queue is emptied."""
        taken = list(self.pending.items())[:_MAX_OUTSTANDING]
        for tp, _ in taken:
            del self.pending[tp]
        return [OffsetSync(TopicPartition(*tp), up, down) for tp, (up, down) in taken]


def _contiguous(upstream: Sequence[int], downstream: Sequence[int]) -> bool:
    """Both columns step by exactly 1 (checked in C: no call per record)."""
    size = len(upstream)
    return (
        upstream[-1] - upstream[0] == size - 1
        and downstream[-1] - downstream[0] == size - 1
        and min(downstream) >= 0
        and all(map(operator.lt, upstream, islice(upstream, 1, None)))
        and all(map(operator.lt, downstream, islice(downstream, 1, None)))
    )


class OffsetSyncStore:
    """The offset syncs of the topic read so far, by source topic-partition."""

    def __init__(self) -> None:
        self._upstream: dict[TopicPartition, list[int]] = {}
        self._downstream: dict[TopicPartition, list[int]] = {}

    def load(self, messages: Iterable[Any]) -> None:
        """Apply offset-sync records (objects with ``key()``/``value()``) in topic order."""
        for message in messages:
            try:
                sync = OffsetSync.deserialize(message.key(), message.value())
            except Exception:
                log.warning("Skipping a record of the offset-syncs topic that is not an OffsetSync")
                continue
            self.add(sync)

    def add(self, sync: OffsetSync) -> None:
        tp = sync.topic_partition
        upstream = self._upstream.setdefault(tp, [])
        downstream = self._downstream.setdefault(tp, [])
        if upstream and sync.upstream_offset < upstream[-1]:
            # The upstream offsets went back (topic recreated or reset): older syncs are void.
            upstream.clear()
            downstream.clear()
        elif upstream and sync.upstream_offset == upstream[-1]:
            downstream[-1] = sync.downstream_offset
            return
        upstream.append(sync.upstream_offset)
        downstream.append(sync.downstream_offset)

    def translate_downstream(self, tp: TopicPartition, upstream_offset: int) -> int | None:
        """The downstream offset for ``upstream_offset``; ``None`` without syncs for ``tp``,
        ``-1`` when the offset is older than every sync (cannot be translated)."""
        upstream = self._upstream.get(tp)
        if not upstream:
            return None
        index = bisect.bisect_right(upstream, upstream_offset) - 1
        if index < 0:
            return -1
        downstream = self._downstream[tp][index]
        return downstream if upstream[index] == upstream_offset else downstream + 1


__all__ = ["OffsetSyncStore", "OffsetSyncWriter", "PartitionState"]
