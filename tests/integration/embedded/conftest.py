"""Shared pieces of the embedded-API tests: a worker config on the session broker with
timings short enough for tests, topic creation, and polling with a deadline."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def wait_for(condition: Callable[[], Any], timeout: float, what: str | Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            described = what if isinstance(what, str) else what()
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {described}")
        time.sleep(0.2)


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
