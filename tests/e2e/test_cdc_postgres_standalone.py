"""The PostgreSQL CDC connector in a real ``sparkcat standalone`` worker on Spark, against the
throwaway PostgreSQL: the snapshot and streamed changes reach Kafka as Debezium's JSON
envelopes; after ``kill -9`` of the worker mid-stream and a restart, every change is there."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.cdc_e2e import SNAPSHOT_ROWS, snapshot_change_and_kill_9
from tests.support.cdc_servers import PostgresServer
from tests.support.worker_process import WorkerProcess


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_cdc_events_in_kafka_survive_kill_9(
    make_worker: Callable[..., WorkerProcess],
    kafka_broker: Any,
    cdc_postgres: PostgresServer,
    tmp_path: Path,
) -> None:
    suffix = uuid.uuid4().hex[:8]
    dbname, prefix = f"e2e_{suffix}", f"e2e{suffix}"
    cdc_postgres.create_database(dbname)
    cdc_postgres.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, label TEXT NOT NULL, price NUMERIC(8,2)); "
        f"INSERT INTO items SELECT g, 'item ' || g, g * 1.25 FROM generate_series(1, "
        f"{SNAPSHOT_ROWS}) g",
        dbname=dbname,
    )

    def change() -> None:
        cdc_postgres.execute("UPDATE items SET label = 'changed' WHERE id = 1; "
                             "DELETE FROM items WHERE id = 2", dbname=dbname)  # fmt: skip

    @contextmanager
    def writer() -> Iterator[Callable[[int], None]]:
        yield lambda n: cdc_postgres.execute(
            f"INSERT INTO items VALUES ({n}, 'w', 1)", dbname=dbname
        )

    snapshot_change_and_kill_9(
        make_worker, kafka_broker.bootstrap_servers, tmp_path, f"{prefix}.public.items", {
            "name": f"cdc-{suffix}",
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "topic.prefix": prefix, "database.hostname": cdc_postgres.host,
            "database.port": str(cdc_postgres.port), "database.user": cdc_postgres.user,
            "database.dbname": dbname, "slot.name": f"slot_{suffix}", "poll.interval.ms": "200",
            "slot.retry.delay.ms": "1000", "slot.max.retries": "30",
        }, change, writer,
    )  # fmt: skip
