"""A topic of "orders" for the sink tests that write tables and files (storage, Spark-native):
JsonConverter envelopes of one struct schema, with values that say where they came from."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

BASE_TS = 1_700_000_000_000
SCHEMA = {
    "type": "struct",
    "name": "com.example.Order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "name", "type": "string", "optional": True},
        {"field": "region", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": False},
    ],
}
REGIONS = ("eu", "us", "ap")


def order(i: int) -> dict[str, Any]:
    return {"id": i, "name": None if i % 7 == 0 else f"n{i}", "region": REGIONS[i % 3],
            "amount": i / 4}  # fmt: skip


def produce_orders(servers: str, partitions: int, per_partition: int) -> str:
    """A new topic: ``per_partition`` JsonConverter envelopes per partition; record ``i`` of
    partition ``p`` is ``order(p * per_partition + i)`` with timestamp ``BASE_TS + i * 1000``."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    for p in range(partitions):
        for i in range(per_partition):
            value = orjson.dumps({"schema": SCHEMA, "payload": order(p * per_partition + i)})
            while True:
                try:
                    producer.produce(topic, value, None, p, timestamp=BASE_TS + i * 1000)
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(60) == 0
    return topic
