"""Fixtures of the PostgreSQL CDC tests: a fresh database on the session's throwaway server
and source leases of the connector's task run as executors run them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.cdc_servers import PostgresServer

from sparkcat.runtime.tasks import client_cache

JSON = "org.apache.kafka.connect.json.JsonConverter"
TASK = "io.debezium.connector.postgresql.PostgresConnectorTask"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def database(cdc_postgres: PostgresServer) -> str:
    name = unique("cdc")
    cdc_postgres.create_database(name)
    return name


def connector_config(server: PostgresServer, dbname: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "topic.prefix": unique("srv"), "database.hostname": server.host,
        "database.port": str(server.port), "database.user": server.user,
        "database.dbname": dbname, "slot.name": unique("slot"),
        "poll.interval.ms": "100", "slot.retry.delay.ms": "200", **extra,
    }  # fmt: skip


class Leases:
    """Source leases of task 0, each resuming from the offsets the previous one committed."""

    def __init__(self, servers: str) -> None:
        self.servers = servers
        self.offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()

    def run(self, config: dict[str, str], max_ms: int = 1500) -> Any:
        from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

        worker = {"bootstrap.servers": self.servers, "key.converter": JSON,
                  "value.converter": JSON}  # fmt: skip
        spec = LeaseSpec(
            connector="cdc", task=0, generation=1, kind="source",
            task_config={"task.class": TASK, **config}, connector_config=dict(config),
            worker_config=worker, max_ms=max_ms, max_records=1_000_000, control=None,
            source_offsets=self.offsets,
        )  # fmt: skip
        result = run_lease(spec)
        assert result.trace is None, result.trace
        for partition, offset in result.source_offsets:
            if offset is not None:
                self.offsets = ((partition, offset),)
        return result


@pytest.fixture
def leases(kafka_broker: Any) -> Iterator[Leases]:
    yield Leases(kafka_broker.bootstrap_servers)
    client_cache.close_all()


def read_topic(servers: str, topic: str, expected: int, timeout_s: float = 20.0) -> list[Any]:
    """``(key, value)`` JSON envelopes of partition 0 of ``topic`` (``None`` for a null),
    read until ``expected`` arrived, then whatever else follows at once."""
    import time

    import orjson
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "unused",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50})  # fmt: skip
    found: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        while time.monotonic() < deadline:
            messages = consumer.consume(1000, 0.3)
            found += [
                (None if m.key() is None else orjson.loads(m.key()),
                 None if m.value() is None else orjson.loads(m.value()))
                for m in messages if m.error() is None
            ]  # fmt: skip
            if len(found) >= expected and not messages:
                break
    finally:
        consumer.close()
    return found
