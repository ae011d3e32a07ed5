"""Fixtures of the storage-sink tests: moto's S3 server on loopback (one per session), the
broker's address, and a topic of schema'd JSON records produced once per module."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from moto.server import ThreadedMotoServer

from sparkcat.runtime.tasks import client_cache

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


@dataclass(frozen=True, slots=True)
class S3Server:
    endpoint: str

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def new_bucket(self) -> str:
        bucket = f"b-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 HTTP API on a free 127.0.0.1 port, for the whole session."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        server.stop()


@pytest.fixture(scope="module")
def servers(kafka_broker: Any) -> Iterator[str]:
    yield kafka_broker.bootstrap_servers
    client_cache.close_all()


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
