"""What the embedded-API tests share: a worker config on the session broker with timings
short enough for tests, application ids, and topic creation."""

from __future__ import annotations

import uuid

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


def app_config(bootstrap_servers: str, **extra: str) -> dict[str, str]:
    """A worker config for an embedded member on ``bootstrap_servers``."""
    config = {
        "bootstrap.servers": bootstrap_servers,
        "key.converter": STRING,
        "value.converter": STRING,
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "2",
        "status.storage.partitions": "1",
        "max.batch.ms": "1000",
        "offset.flush.interval.ms": "1000",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "scheduled.rebalance.max.delay.ms": "1000",
    }
    config.update(extra)
    return config


def new_app_id(prefix: str = "app") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topics(bootstrap_servers: str, *names: str) -> None:
    """One-partition topics (the broker would auto-create several partitions)."""
    from confluent_kafka.admin import AdminClient

    from sparkcat.kafka.admin import TopicSpec, ensure_topics

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    ensure_topics(admin, [TopicSpec(name, 1, 1) for name in names])
