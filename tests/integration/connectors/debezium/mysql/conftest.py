"""Fixtures of the MySQL/MariaDB CDC tests: a fresh database on the session's throwaway
MariaDB and source leases of the connector's task run as executors run them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.cdc_mariadb import PASSWORD, USER, ThrowawayMariaDb
from tests.support.cdc_servers import read_topic

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


__all__ = ["Leases", "connector_config", "read_topic", "unique"]
