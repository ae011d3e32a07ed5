"""Fixtures of the PostgreSQL CDC tests: a fresh database on the session's throwaway server
and source leases of the connector's task run as executors run them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.cdc_servers import PostgresServer, read_topic

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

    def run(self, config: dict[str, str], max_ms: int = 1500, max_records: int = 1_000_000) -> Any:
        from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

        worker = {"bootstrap.servers": self.servers, "key.converter": JSON,
                  "value.converter": JSON}  # fmt: skip
        spec = LeaseSpec(
            connector="cdc", task=0, generation=1, kind="source",
            task_config={"task.class": TASK, **config}, connector_config=dict(config),
            worker_config=worker, max_ms=max_ms, max_records=max_records, control=None,
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


__all__ = ["Leases", "connector_config", "read_topic", "unique"]
