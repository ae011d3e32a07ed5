"""How a Spark-native sink waits for its next records: without polling the broker.

An idle SparkSinkConnector must cost next to nothing, and wake as soon as a record arrives. The
watch is a plain consumer (no group membership) assigned at the sink's positions: its fetches
long-poll at the broker, so a blocked :meth:`SinkWatch.wait` returns within milliseconds of a
produce and does no Python work meanwhile. The first records it returns are kept as the next
write's sample (the write's schema is learnt from them) and the consumer stops fetching, so the
driver never reads the stream itself -- the executors do. The high watermark of the fetch
response that carried them ends the write's ranges: the broker's own number, right also on
brokers whose ListOffsets answer lags behind. After each write the watch is assigned again at
the new positions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from sparkcat.api.records import TopicPartition

log = logging.getLogger(__name__)

Key = tuple[str, int]

# Settings of the watch's consumer on top of the connector's: a small prefetch (it reads a
# sample, then stops fetching), a long-poll fetch (idle partitions cost one request per wait), and
# librdkafka's partition EOF events off (a wait ends on records only).
WATCH_CONSUMER = {
    "enable.auto.commit": "false",
    "enable.partition.eof": "false",
    "fetch.wait.max.ms": "500",
    "queued.max.messages.kbytes": "1024",
}


# How often a blocked wait checks whether it should end: often while the sink is busy (a stop
# right after a write should not wait), seldom once it has been idle a while (each check wakes
# a thread: 50 idle sinks at 0.1 s cost 0.09 cores more than at 0.25 s).
BUSY_SLICE_S = 0.05
IDLE_SLICE_S = 0.25


class SinkWatch:
    """The records waiting at one sink's positions (see the module docs)."""

    def __init__(self, consumer: Consumer, sample_records: int) -> None:
        self._consumer = consumer
        self._sample_records = sample_records
        self._at: dict[Key, int | None] = {}  # the positions watched (and kept records')
        self._fetching = False  # whether the consumer is assigned at ``_at``
        self._buffer: dict[Key, list[Any]] = {}
        self._ends: dict[TopicPartition, int] | None = None  # from the waking fetch
        self._beginnings: dict[Key, int] = {}  # of partitions without a position

    def wait(
        self,
        positions: Mapping[Key, int | None],
        wait_s: float,
        interrupted: Callable[[], bool] = lambda: False,
        slice_s: float = IDLE_SLICE_S,
    ) -> bool:
        """Whether records are waiting at ``positions`` (next offsets; ``None``: the
        partition's beginning), blocking up to ``wait_s`` for the first ones, or until
        ``interrupted()`` (checked every ``slice_s``: a stop must not wait for a poll)."""
        if dict(positions) != self._at:
            self._at = dict(positions)
            self._buffer.clear()
            self._beginnings.clear()
            self._fetching = False
        if self._buffer:
            self._ends = None  # kept from an earlier wait: its watermarks may be old
            return True
        if not self._fetching:
            self._assign(self._at)
        deadline = time.monotonic() + wait_s
        first = None
        while first is None and not interrupted():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            first = self._consumer.poll(min(remaining, slice_s))
        if first is None:
            return False
        self._keep([first, *self._consumer.consume(self._sample_records, 0)])
        if not self._buffer:
            return False
        self._ends = self._cached_ends()
        # Stop fetching until the write is done: the executors read the stream, not the
        # driver. (Unassigned rather than paused: resuming a paused partition at a new
        # offset left librdkafka's fetcher idle for up to a second.)
        self._consumer.unassign()
        self._fetching = False
        return True

    def fresh_ends(self) -> dict[TopicPartition, int] | None:
        """The end (high watermark) of every watched partition as the fetch that just
        brought records saw it, or ``None`` when that is not known or no longer fresh."""
        return self._ends

    def messages(self, topic: str, partition: int, start: int, end: int) -> list[Any]:
        """The first records of ``[start, end)`` (at most the sample size): those kept by the
        last wait, then read from the broker if they do not cover it."""
        wanted = min(end - start, self._sample_records)
        kept = [m for m in self._buffer.get((topic, partition), ())
                if start <= (m.offset() or 0) < end][:wanted]  # fmt: skip
        if len(kept) >= wanted:
            return kept
        # Not all kept (a partition the last wait did not see, or more records since): read
        # the rest directly; the next wait assigns the watched positions again.
        consumer = self._consumer
        after = kept[-1].offset() + 1 if kept else start
        consumer.assign([KafkaTopicPartition(topic, partition, after)])
        self._fetching = False
        deadline = time.monotonic() + 30
        tp = KafkaTopicPartition(topic, partition)
        try:
            while len(kept) < wanted and time.monotonic() < deadline:
                batch = consumer.consume(wanted - len(kept), 0.1)
                kept.extend(
                    m for m in batch
                    if m.error() is None and m.topic() == topic and m.partition() == partition
                    and start <= (m.offset() or 0) < end
                )  # fmt: skip
                # Transaction markers and compaction leave offsets without a record: the
                # position, not the count, says when the range is read.
                if consumer.position([tp])[0].offset >= end:
                    break
        finally:
            consumer.unassign()
        return kept

    def written(self) -> None:
        """A write committed: what was kept is behind the sink's positions now."""
        self._buffer.clear()
        self._ends = None

    def _keep(self, arrived: list[Any]) -> None:
        for message in arrived:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.debug("Watch of %s: %s", message.topic(), error.str())
                continue
            key = (message.topic() or "", message.partition() or 0)
            if key in self._at:
                self._buffer.setdefault(key, []).append(message)

    def _cached_ends(self) -> dict[TopicPartition, int] | None:
        ends = {}
        for topic, partition in self._at:
            _, high = self._consumer.get_watermark_offsets(
                KafkaTopicPartition(topic, partition), cached=True
            )
            if high is None or high < 0:
                return None
            ends[TopicPartition(topic, partition)] = high
        return ends

    def _assign(self, positions: Mapping[Key, int | None]) -> None:
        parts = [
            KafkaTopicPartition(t, p, self._beginning(t, p) if o is None else o)
            for (t, p), o in sorted(positions.items())
        ]
        self._consumer.assign(parts)
        self._fetching = True

    def start(self, topic: str, partition: int) -> int:
        """Where a partition without a position starts: its first offset."""
        return self._beginning(topic, partition)

    def _beginning(self, topic: str, partition: int) -> int:
        # Asked explicitly: assign(OFFSET_BEGINNING) makes librdkafka look it up only after a
        # ~0.5 s retry timer when the leader connection is new. Kept until the positions
        # change: it only moves when retention deletes records, and a stale one is still a
        # valid start (a read from there begins at the first record there is).
        key = (topic, partition)
        known = self._beginnings.get(key)
        if known is not None:
            return known
        low, _ = self._consumer.get_watermark_offsets(
            KafkaTopicPartition(topic, partition), timeout=10, cached=False
        )
        found = int(low) if low is not None and low >= 0 else 0
        self._beginnings[key] = found
        return found
