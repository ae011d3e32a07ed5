"""How a Spark-native sink waits for its next records: without polling the broker.

An idle SparkSinkConnector must cost next to nothing, and wake as soon as a record arrives. The
watch is a plain consumer (no group membership) assigned at the sink's positions: its fetches
long-poll at the broker, so a blocked :meth:`SinkWatch.wait` returns within milliseconds of a
produce and does no Python work meanwhile. The first records it returns are kept as the next
write's sample (the write's schema is learnt from them) and their partitions are paused, so the
driver never reads the stream itself -- the executors do. The high watermark of the fetch
response that carried them ends the write's ranges: the broker's own number, right also on
brokers whose ListOffsets answer lags behind. After each write the watch is assigned again at
the new positions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from sparkcat.api.records import TopicPartition

log = logging.getLogger(__name__)

Key = tuple[str, int]

# Settings of the watch's consumer on top of the connector's: a small prefetch (it reads a
# sample, then pauses), a long-poll fetch (idle partitions cost one request per wait), and
# librdkafka's partition EOF events off (a wait ends on records only).
WATCH_CONSUMER = {
    "enable.auto.commit": "false",
    "enable.partition.eof": "false",
    "fetch.wait.max.ms": "500",
    "queued.max.messages.kbytes": "1024",
}


class SinkWatch:
    """The records waiting at one sink's positions (see the module docs)."""

    def __init__(self, consumer: Consumer, sample_records: int) -> None:
        self._consumer = consumer
        self._sample_records = sample_records
        self._assigned: dict[Key, int | None] = {}
        self._buffer: dict[Key, list[Any]] = {}
        self._fresh = False

    def wait(self, positions: Mapping[Key, int | None], wait_s: float) -> bool:
        """Whether records are waiting at ``positions`` (next offsets; ``None``: the
        partition's beginning), blocking up to ``wait_s`` for the first ones."""
        if dict(positions) != self._assigned:
            self._assign(positions)
        if self._buffer:
            self._fresh = False  # kept from an earlier wait: its watermarks may be old
            return True
        first = self._consumer.poll(wait_s)
        if first is None:
            return False
        arrived = [first, *self._consumer.consume(self._sample_records, 0)]
        for message in arrived:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.debug("Watch of %s: %s", message.topic(), error.str())
                continue
            key = (message.topic() or "", message.partition() or 0)
            if key in self._assigned:
                self._buffer.setdefault(key, []).append(message)
        if not self._buffer:
            return False
        self._consumer.pause([KafkaTopicPartition(t, p) for t, p in self._buffer])
        self._fresh = True
        return True

    def fresh_ends(self) -> dict[TopicPartition, int] | None:
        """The end (high watermark) of every watched partition as the fetch that just
        brought records saw it, or ``None`` when that is not known or no longer fresh."""
        if not self._fresh:
            return None
        ends = {}
        for topic, partition in self._assigned:
            _, high = self._consumer.get_watermark_offsets(
                KafkaTopicPartition(topic, partition), cached=True
            )
            if high is None or high < 0:
                return None
            ends[TopicPartition(topic, partition)] = high
        return ends

    def messages(self, topic: str, partition: int, start: int, end: int) -> list[Any]:
        """The first records of ``[start, end)`` (at most the sample size): those kept by the
        last wait, then read from the broker if they do not cover it."""
        wanted = min(end - start, self._sample_records)
        kept = [m for m in self._buffer.get((topic, partition), ())
                if start <= (m.offset() or 0) < end][:wanted]  # fmt: skip
        if len(kept) >= wanted:
            return kept
        # Not all kept (a partition the last wait did not see, or more records since): read
        # the rest directly. The assignment changes, so the next wait assigns it again.
        self._assigned = {}
        consumer = self._consumer
        after = kept[-1].offset() + 1 if kept else start
        consumer.assign([KafkaTopicPartition(topic, partition, after)])
        consumer.resume([KafkaTopicPartition(topic, partition)])
        deadline = time.monotonic() + 30
        while len(kept) < wanted and time.monotonic() < deadline:
            batch = consumer.consume(wanted - len(kept), 0.5)
            kept.extend(
                m for m in batch
                if m.error() is None and m.topic() == topic and m.partition() == partition
                and start <= (m.offset() or 0) < end
            )  # fmt: skip
        return kept

    def written(self) -> None:
        """A write committed: what was kept is behind the sink's positions now."""
        self._buffer.clear()
        self._fresh = False

    def _assign(self, positions: Mapping[Key, int | None]) -> None:
        parts = [
            KafkaTopicPartition(t, p, OFFSET_BEGINNING if o is None else o)
            for (t, p), o in sorted(positions.items())
        ]
        self._consumer.assign(parts)
        if parts:
            self._consumer.resume(parts)  # a partition paused by an earlier wait reads again
        self._assigned = dict(positions)
        self._buffer.clear()
        self._fresh = False
