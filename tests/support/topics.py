"""Reading what a source connector writes to Kafka while it runs."""

from __future__ import annotations

from typing import Any

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


class TopicReader:
    """Reads the topic from its beginning once the connector created it (assign: no group,
    and no subscription to a topic that does not exist yet)."""

    def __init__(self, servers: str, topic: str) -> None:
        self.topic = topic
        self.consumer = Consumer({"bootstrap.servers": servers, "group.id": f"r-{topic}"})
        self.assigned = False
        self.values: list[dict[str, Any]] = []

    def at_least(self, count: int) -> bool:
        if not self.assigned:
            topics = self.consumer.list_topics(timeout=10).topics
            if self.topic not in topics or topics[self.topic].error is not None:
                return False
            partitions = topics[self.topic].partitions
            self.consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING)
                                  for p in partitions])  # fmt: skip
            self.assigned = True
        for msg in self.consumer.consume(1000, 0.2):
            if msg.error() is None:
                self.values.append(orjson.loads(msg.value()))
        return len(self.values) >= count
