"""The schema history in a Kafka topic (``schema.history.internal.kafka.topic`` on
``schema.history.internal.kafka.bootstrap.servers``), as Debezium's ``KafkaSchemaHistory``
keeps it: one partition, unlimited retention, created when missing; each record a JSON
string with a null key on partition 0, flushed before :meth:`record` returns.

Every lease reads the topic from its start to its end once (a history holds a record per DDL
statement and per snapshot, so it stays small) and keeps the records for the lease.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sparkcat.connectors.debezium.mysql.history import HistoryRecord

PARTITION = 0
_TIMEOUT_S = 30.0
_TOPIC_CONFIG = {"cleanup.policy": "delete", "retention.ms": "-1", "retention.bytes": "-1"}


class KafkaSchemaHistory:
    def __init__(self, servers: str, topic: str, client_id: str = "schema-history") -> None:
        self.servers = servers
        self.topic = topic
        self._client_id = client_id
        self._records: list[HistoryRecord] | None = None
        self._producer: Any = None

    def records(self) -> Sequence[HistoryRecord]:
        if self._records is None:
            self._records = self._read()
        return list(self._records)

    def record(self, record: HistoryRecord) -> None:
        from confluent_kafka import Producer

        if self._producer is None:
            self._ensure_topic()
            self._producer = Producer({"bootstrap.servers": self.servers, "acks": "all",
                                       "client.id": self._client_id})  # fmt: skip
        failures: list[Any] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                failures.append(error)

        self._producer.produce(self.topic, record.to_json().encode(), partition=PARTITION,
                               on_delivery=delivered)  # fmt: skip
        left = self._producer.flush(_TIMEOUT_S)
        if failures or left:
            raise RuntimeError(f"Could not write to the schema history topic {self.topic}: "
                               f"{failures[0] if failures else 'timed out'}")  # fmt: skip
        if self._records is not None:
            self._records.append(record)

    def _ensure_topic(self) -> None:
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

        admin = AdminClient({"bootstrap.servers": self.servers})
        if self.topic in admin.list_topics(timeout=_TIMEOUT_S).topics:
            return
        future = admin.create_topics([NewTopic(self.topic, 1, -1, config=_TOPIC_CONFIG)])
        try:
            future[self.topic].result(_TIMEOUT_S)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise

    def _read(self) -> list[HistoryRecord]:
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({
            "bootstrap.servers": self.servers, "group.id": f"{self._client_id}-reader",
            "enable.auto.commit": False, "client.id": self._client_id,
        })  # fmt: skip
        try:
            metadata = consumer.list_topics(self.topic, timeout=_TIMEOUT_S).topics.get(self.topic)
            if metadata is None or metadata.error is not None or not metadata.partitions:
                return []
            low, high = consumer.get_watermark_offsets(TopicPartition(self.topic, PARTITION),
                                                       timeout=_TIMEOUT_S)  # fmt: skip
            consumer.assign([TopicPartition(self.topic, PARTITION, low)])
            records: list[HistoryRecord] = []
            position, deadline = low, time.monotonic() + _TIMEOUT_S
            while position < high:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Could not read the schema history topic {self.topic} "
                                       f"to its end (offset {position} of {high})")  # fmt: skip
                for message in consumer.consume(min(1000, high - position), 0.5) or []:
                    if message.error() is not None:
                        continue
                    position = int(message.offset() or 0) + 1
                    parsed = HistoryRecord.from_json(message.value() or b"")
                    if parsed is not None:
                        records.append(parsed)
            return records
        finally:
            consumer.close()

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(_TIMEOUT_S)
            self._producer = None


__all__ = ["KafkaSchemaHistory"]
