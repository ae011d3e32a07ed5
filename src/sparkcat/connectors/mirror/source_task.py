"""MirrorSourceTask: copies its topic-partitions from the source cluster, byte for byte.

Each record keeps its key, value, headers and timestamp and goes to the same partition
number of the remote topic, as ``BYTES`` data: with ``ByteArrayConverter`` as key, value
and header converter (which dedicated mode sets, and which a connector on a shared worker
must set) the bytes on the target are the bytes on the source. Source partition
``{"cluster", "topic", "partition"}`` and offset ``{"offset"}`` are Kafka's, so offsets
carry over from Kafka's MirrorMaker 2 (the task resumes after the stored offset).

Offset syncs (see :mod:`.offset_sync`) go to partition 0 of the offset-syncs topic, on the
source cluster unless ``offset-syncs.topic.location=target``. A task instance lives for one
lease: its sync state starts afresh each lease, which (as after a restart in Kafka) syncs
the first record of every partition.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import Header, SourceRecord, TopicPartition
from sparkcat.api.source import RecordMetadata, SourceTask
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

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping or self._consumer is None:
            return None
        messages = self._consume()
        records = []
        alias, remote = self._alias, self._remote
        for message in messages:
            error = message.error()
            if error is not None:
                if error.fatal():
                    raise ConnectError(f"Failure during poll: {error}")
                log.warning("Failure during poll: %s", error)
                continue
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            raw_headers = message.headers()
            headers = (
                [Header(k, OPTIONAL_BYTES_SCHEMA, v) for k, v in raw_headers]
                if raw_headers
                else None
            )
            records.append(
                SourceRecord(
                    {"cluster": alias, "partition": partition, "topic": topic},
                    {"offset": offset},
                    remote[topic],
                    partition,
                    OPTIONAL_BYTES_SCHEMA,
                    message.key(),
                    OPTIONAL_BYTES_SCHEMA,
                    message.value(),
                    message.timestamp()[1],
                    headers,
                )
            )
        return records or None

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

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        writer = self._writer
        if writer is None or metadata is None or metadata.offset < 0 or self._stopping:
            return
        # Once per record: plain tuples, and the producer is touched only for a sync.
        partition = record.source_partition
        offset = record.source_offset
        if partition is None or offset is None:
            return
        writer.maybe_queue((partition["topic"], partition["partition"]), offset["offset"],
                           metadata.offset)  # fmt: skip
        if writer.pending:
            self._fire(writer)

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
