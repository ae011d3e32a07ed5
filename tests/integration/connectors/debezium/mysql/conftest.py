"""Fixtures of the MySQL/MariaDB CDC tests: a fresh database on the session's throwaway
MariaDB and source leases of the connector's task run as executors run them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.cdc_mariadb import PASSWORD, USER, ThrowawayMariaDb

from sparkcat.runtime.tasks import client_cache

JSON = "org.apache.kafka.connect.json.JsonConverter"
MARIADB_TASK = "io.debezium.connector.mariadb.MariaDbConnectorTask"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def database(cdc_mariadb: ThrowawayMariaDb) -> Iterator[str]:
    name = unique("cdc")
    cdc_mariadb.execute(f"CREATE DATABASE {name}")
    yield name
    cdc_mariadb.execute(f"DROP DATABASE {name}")


def connector_config(server: ThrowawayMariaDb, db: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "topic.prefix": unique("srv"), "database.hostname": server.host,
        "database.port": str(server.port), "database.user": USER, "database.password": PASSWORD,
        "database.server.id": str(5000 + uuid.uuid4().int % 1000),
        "database.include.list": db, "poll.interval.ms": "100", **extra,
    }  # fmt: skip


class Leases:
    """Source leases of task 0, each resuming from the offsets the previous one committed."""

    def __init__(self, servers: str, task_class: str = MARIADB_TASK) -> None:
        self.servers = servers
        self.task_class = task_class
        self.offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()

    def run(self, config: dict[str, str], max_ms: int = 10_000, max_records: int = 10**6) -> Any:
        """One lease: it waits up to ``max_ms`` for data and ends soon after the first record
        (the machine may be busy: a fixed short lease would end before the task did anything)."""
        from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

        worker = {"bootstrap.servers": self.servers, "key.converter": JSON,
                  "value.converter": JSON}  # fmt: skip
        spec = LeaseSpec(
            connector="cdc", task=0, generation=1, kind="source",
            task_config={"task.class": self.task_class, **config},
            connector_config=dict(config), worker_config=worker, max_ms=max_ms,
            max_records=max_records, control=None, source_offsets=self.offsets,
            data_max_ms=min(max_ms, 800),
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


__all__ = ["Leases", "connector_config", "read_topic", "unique"]
