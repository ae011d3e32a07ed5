"""MirrorSourceTask: copies its topic-partitions from the source cluster, byte for byte.

Each record keeps its key, value, headers and timestamp and goes to the same partition
number of the remote topic, as ``BYTES`` data: with ``ByteArrayConverter`` as key, value
and header converter (which dedicated mode sets, and which a connector on a shared worker
must set) the bytes on the target are the bytes on the source. Source partition
``{"cluster", "topic", "partition"}`` and offset ``{"offset"}`` are Kafka's, so offsets
carry over from Kafka's MirrorMaker 2 (the task resumes after the stored offset).

``poll`` returns a :class:`~sparkcat.api.batch.SourceRecordBatch` per source topic of a
consumed batch: the consumer's columns (keys, values, partitions, timestamps, header tuples)
as they are, so the framework sends them with no object per record. Kafka's task learns each
record's target offset in ``commitRecord``; this one gets them a batch at a time in
``commit_batch``.

Offset syncs (see :mod:`.offset_sync`) go to partition 0 of the offset-syncs topic, on the
source cluster unless ``offset-syncs.topic.location=target``. A task instance lives for one
lease: its sync state starts afresh each lease, which (as after a restart in Kafka) syncs
the first record of every partition.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from itertools import groupby
from operator import itemgetter, methodcaller
from typing import Any

from sparkcat.api.batch import RecordMetadataBatch, SourceRecordBatch, SourceRun
from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import TopicPartition
from sparkcat.api.source import SourceTask
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.config import (
    CONSUMER_POLL_TIMEOUT_MILLIS,
    EMIT_OFFSET_SYNCS_ENABLED,
    OFFSET_LAG_MAX,
    SOURCE_CONFIG_DEF,
    TASK_TOPIC_PARTITIONS,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.offset_sync import OffsetSyncWriter

log = logging.getLogger(__name__)

_BATCH = 10_000
_SLICE_S = 0.02  # what a record may wait in the consumer for more to join its batch
_FLUSH_TIMEOUT_S = 10.0
# confluent-kafka Message accessors as C callables, mapped over a whole consumed batch.
_ERROR, _TOPIC, _PARTITION, _OFFSET, _KEY, _VALUE, _TIMESTAMP, _HEADERS = map(
    methodcaller, ("error", "topic", "partition", "offset", "key", "value", "timestamp", "headers")
)
_MS = itemgetter(1)  # of a (type, ms) timestamp


class MirrorBatch(SourceRecordBatch):
    """A batch of one source topic that also keeps its records' upstream offsets."""

    __slots__ = ("upstream_offsets",)

    upstream_offsets: list[int]


def _decode(text: str) -> TopicPartition:
    topic, _, partition = text.strip().rpartition("-")
    return TopicPartition(topic, int(partition))


class MirrorSourceTask(SourceTask):
    """Consumes (assign, no group) from the source, returns records for the remote topics."""

    def __init__(self) -> None:
        self._consumer: Any = None
        self._sync_producer: Any = None
        self._writer: OffsetSyncWriter | None = None
        self._alias = ""
        self._remote: dict[str, str] = {}
        self._timeout_s = 1.0
        self._syncs_topic = ""
        self._stopping = False
        self._ready: deque[MirrorBatch] = deque()  # one consumed batch, split by topic
        self._partitions: dict[tuple[str, int], dict[str, Any]] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = MirrorConfig(SOURCE_CONFIG_DEF, props)
        self._alias = config.source_alias
        self._timeout_s = config.get_long(CONSUMER_POLL_TIMEOUT_MILLIS) / 1000.0
        label = config.entity_label()
        assigned = [
            _decode(part) for part in props.get(TASK_TOPIC_PARTITIONS, "").split(",") if part
        ]
        self._remote = {
            tp.topic: config.policy.format_remote_topic(self._alias, tp.topic) for tp in assigned
        }
        if config.get_boolean(EMIT_OFFSET_SYNCS_ENABLED):
            side: kafka_io.Side = "source" if config.offset_syncs_on_source else "target"
            role = f"{label}|offset-syncs-{side}-producer"
            self._sync_producer = kafka_io.new_producer(
                kafka_io.client_config(props, side, "producer", role)
            )
            self._writer = OffsetSyncWriter(config.get_long(OFFSET_LAG_MAX))
            self._syncs_topic = config.offset_syncs_topic()
        consumer_conf = kafka_io.client_config(
            props, "source", "consumer", label + "|replication-consumer"
        )
        self._consumer = kafka_io.new_consumer(consumer_conf)
        self._assign(assigned)
        log.info("%s replicating %d topic-partitions", label, len(assigned))

    def _assign(self, assigned: list[TopicPartition]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        reader = self.context.offset_storage_reader()
        positions = []
        for tp in assigned:
            stored = reader.offset(
                {"cluster": self._alias, "topic": tp.topic, "partition": tp.partition}
            )
            offset = stored.get("offset") if stored else None
            # Kafka stores the last copied offset: resume after it; otherwise the consumer's
            # auto.offset.reset (earliest) applies.
            start = offset + 1 if isinstance(offset, int) and offset >= 0 else -1001
            positions.append(KafkaTopicPartition(tp.topic, tp.partition, start))
        self._consumer.assign(positions)

    def poll(self) -> SourceRecordBatch | None:
        if self._stopping or self._consumer is None:
            return None
        if self._ready:
            return self._ready.popleft()
        messages = self._consume()
        if not messages:
            return None
        if any(map(_ERROR, messages)):
            messages = self._without_errors(messages)
            if not messages:
                return None
        topics = list(map(_TOPIC, messages))
        groups: dict[str, list[Any]] = {topics[0]: messages}
        if topics.count(topics[0]) != len(topics):  # several topics: one batch each
            groups = {}
            for topic, message in zip(topics, messages, strict=True):
                groups.setdefault(topic, []).append(message)
        self._ready.extend(self._batch(topic, group) for topic, group in groups.items())
        return self._ready.popleft()

    def _without_errors(self, messages: list[Any]) -> list[Any]:
        for message in messages:
            error = message.error()
            if error is not None:
                if error.fatal():
                    raise ConnectError(f"Failure during poll: {error}")
                log.warning("Failure during poll: %s", error)
        return [message for message in messages if message.error() is None]

    def _batch(self, topic: str, messages: list[Any]) -> MirrorBatch:
        """The records of one source topic, as the consumer's columns."""
        partitions = list(map(_PARTITION, messages))
        offsets = list(map(_OFFSET, messages))
        runs = []
        end = 0
        for partition, group in groupby(partitions):
            length = len(list(group))
            end += length
            runs.append(SourceRun(self._source_partition(topic, partition),
                                  {"offset": offsets[end - 1]}, length))  # fmt: skip
        headers = list(map(_HEADERS, messages))
        batch = MirrorBatch(
            self._remote[topic],
            list(map(_VALUE, messages)),
            OPTIONAL_BYTES_SCHEMA,
            runs,
            keys=list(map(_KEY, messages)),
            key_schema=OPTIONAL_BYTES_SCHEMA,
            # Each record carries its own offset when the framework takes them one by one.
            record_offsets=lambda: [{"offset": offset} for offset in offsets],
            kafka_partitions=partitions,
            timestamps=list(map(_MS, map(_TIMESTAMP, messages))),
            headers=None if headers.count(None) == len(headers) else headers,
        )
        batch.upstream_offsets = offsets
        return batch

    def _source_partition(self, topic: str, partition: int) -> dict[str, Any]:
        found = self._partitions.get((topic, partition))
        if found is None:
            found = {"cluster": self._alias, "partition": partition, "topic": topic}
            self._partitions[(topic, partition)] = found
        return found

    def _consume(self) -> list[Any]:
        """Like Kafka's ``poll(consumer.poll.timeout.ms)``: what is there as soon as there is
        something, waiting up to the timeout for it. librdkafka's ``consume(n, timeout)``
        waits for ``n`` messages or the whole timeout, which made every record of a quiet
        topic wait ``consumer.poll.timeout.ms`` (1 s by default) on its way to the target."""
        deadline = time.monotonic() + self._timeout_s
        while True:
            remaining = deadline - time.monotonic()
            messages = self._consumer.consume(_BATCH, timeout=min(_SLICE_S, max(remaining, 0)))
            if messages or remaining <= _SLICE_S or self._stopping:
                return messages  # type: ignore[no-any-return]

    def commit_batch(self, batch: SourceRecordBatch, metadata: RecordMetadataBatch) -> None:
        """Kafka's ``commitRecord`` for a whole batch: offset syncs for its records."""
        writer = self._writer
        if writer is None or self._stopping or not isinstance(batch, MirrorBatch):
            return
        upstream, downstream = batch.upstream_offsets, metadata.offsets
        producer, topic = self._sync_producer, self._syncs_topic
        start = 0
        for run in batch.runs:
            end = start + run.length
            source = run.source_partition
            assert source is not None
            for sync in writer.sync_run((source["topic"], source["partition"]),
                                        upstream[start:end], downstream[start:end]):  # fmt: skip
                producer.produce(topic, sync.record_value(), sync.record_key(), 0)
            start = end
        producer.poll(0)

    def _fire(self, writer: OffsetSyncWriter) -> None:
        producer, topic = self._sync_producer, self._syncs_topic
        for sync in writer.take_pending():
            producer.produce(topic, sync.record_value(), sync.record_key(), 0)
        producer.poll(0)

    def commit(self) -> None:
        # Syncs held back by offset.lag.max go out now, so a quiet topic's end is synced.
        writer = self._writer
        if writer is None:
            return
        writer.promote_delayed()
        self._fire(writer)
        remaining = self._sync_producer.flush(_FLUSH_TIMEOUT_S)
        if remaining:
            log.warning("%d offset syncs were not acknowledged in time", remaining)

    def stop(self) -> None:
        self._stopping = True

    def stopped(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()
        producer, self._sync_producer = self._sync_producer, None
        if producer is not None:
            producer.flush(_FLUSH_TIMEOUT_S)


__all__ = ["MirrorSourceTask"]
