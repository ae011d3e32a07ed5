"""The MariaDB CDC connector in a real ``sparkcat standalone`` worker on Spark, against the
throwaway MariaDB: the snapshot and streamed changes reach Kafka as Debezium's JSON envelopes;
after ``kill -9`` of the worker mid-stream and a restart, every change is there."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.cdc_e2e import SNAPSHOT_ROWS, snapshot_change_and_kill_9
from tests.support.cdc_mariadb import PASSWORD, USER, ThrowawayMariaDb
from tests.support.worker_process import WorkerProcess


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_cdc_events_in_kafka_survive_kill_9(
    make_worker: Callable[..., WorkerProcess],
    kafka_broker: Any,
    cdc_mariadb: ThrowawayMariaDb,
    tmp_path: Path,
) -> None:
    suffix = uuid.uuid4().hex[:8]
    db, prefix = f"e2e_{suffix}", f"e2e{suffix}"
    values = ", ".join(f"({i}, 'item {i}', {i * 1.25})" for i in range(1, SNAPSHOT_ROWS + 1))
    cdc_mariadb.execute(
        f"CREATE DATABASE {db}",
        f"CREATE TABLE {db}.items (id INT PRIMARY KEY, label VARCHAR(40) NOT NULL, "
        "price DECIMAL(8,2))",
        f"INSERT INTO {db}.items VALUES {values}",
    )

    def change() -> None:
        cdc_mariadb.execute("UPDATE items SET label = 'changed' WHERE id = 1",
                            "DELETE FROM items WHERE id = 2", database=db)  # fmt: skip

    @contextmanager
    def writer() -> Iterator[Callable[[int], None]]:
        conn = cdc_mariadb.connect(db)

        def insert(n: int) -> None:
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO items VALUES ({n}, 'w', 1)")

        try:
            yield insert
        finally:
            conn.close()

    _, value = snapshot_change_and_kill_9(
        make_worker, kafka_broker.bootstrap_servers, tmp_path, f"{prefix}.{db}.items", {
            "name": f"cdc-{suffix}", "connector.class": "MariaDb", "topic.prefix": prefix,
            "database.hostname": cdc_mariadb.host, "database.port": str(cdc_mariadb.port),
            "database.user": USER, "database.password": PASSWORD, "database.server.id": "6001",
            "database.include.list": db, "poll.interval.ms": "200",
        }, change, writer, read_timeout_s=3.0,
    )  # fmt: skip
    assert value["payload"]["source"]["connector"] == "mariadb"
