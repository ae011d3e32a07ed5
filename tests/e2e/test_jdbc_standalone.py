"""The JDBC connectors in a real ``sparkcat standalone`` worker on Spark (PostgreSQL):
a table copied through Kafka into two tables, ``kill -9`` of the worker mid-stream and a
restart (upsert: the target equals the source; insert: duplicates within one lease), then a
create with an unreachable database answered 400."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from tests.support.databases import ensure_postgres_database
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    WorkerProcess,
    edit_properties,
    wait_for,
    write_properties,
)

DB = "sparkcat_jdbc_test"
# The kill comes at 2 * MAX_BATCH_RECORDS rows in the upsert target: half-way.
ROWS = 20_000
MAX_BATCH_RECORDS = 5000
BATCH_MAX_ROWS = 1000


def _engine() -> sa.Engine:
    ensure_postgres_database(DB)
    return sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB}")


def _count(engine: sa.Engine, sql: str) -> int:
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql(sql).scalar() or 0)
    except sa.exc.ProgrammingError:
        return 0  # the sink has not created the table yet


def _rows(engine: sa.Engine, sql: str) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(sql)]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_jdbc_copy_survives_kill_9_and_bad_config_is_rejected(
    make_worker: Callable[..., WorkerProcess],
    kafka_broker: Any,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    suffix = uuid.uuid4().hex[:8]
    source, upserted, inserted = f"e2e_src_{suffix}", f"e2e_up_{suffix}", f"e2e_in_{suffix}"
    engine = _engine()
    request.addfinalizer(engine.dispose)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"CREATE TABLE {source} (id BIGSERIAL PRIMARY KEY, n INTEGER NOT NULL, "
            "amount NUMERIC(12,2), label TEXT, day DATE, at TIMESTAMP(3), ok BOOLEAN, "
            "raw BYTEA, ratio DOUBLE PRECISION)"
        )
        conn.exec_driver_sql(
            f"INSERT INTO {source} (n, amount, label, day, at, ok, raw, ratio) "
            "SELECT g, g * 1.25, 'row ' || g, DATE '2020-01-01' + mod(g, 1000), "
            "TIMESTAMP '2024-01-01' + g * INTERVAL '1.001 second', mod(g, 2) = 0, "
            f"decode(lpad(to_hex(g), 8, '0'), 'hex'), g / 3.0 FROM generate_series(1, {ROWS}) g"
        )
    url = f"jdbc:postgresql://127.0.0.1:5432/{DB}"
    prefix = f"e2e-{suffix}-"
    offsets = tmp_path / "connect.offsets"
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties", tmp_path / "worker.properties", {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "offset.storage.file.filename": str(offsets),
            "listeners": f"http://127.0.0.1:{free_port()}",
            "max.batch.ms": "2000", "max.batch.records": str(MAX_BATCH_RECORDS),
        })  # fmt: skip
    common = {"connection.url": url, "connection.user": "postgres", "tasks.max": "1"}
    connectors = [
        write_properties(tmp_path / "source.properties", {
            **common, "name": f"jdbc-source-{suffix}", "connector.class": "JdbcSource",
            "mode": "incrementing", "incrementing.column.name": "id",
            "table.whitelist": source, "topic.prefix": prefix,
            "batch.max.rows": str(BATCH_MAX_ROWS), "poll.interval.ms": "500",
        }),
        write_properties(tmp_path / "upsert.properties", {
            **common, "name": f"jdbc-upsert-{suffix}", "connector.class": "JdbcSink",
            "topics": prefix + source, "table.name.format": upserted, "auto.create": "true",
            "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id",
        }),
        write_properties(tmp_path / "insert.properties", {
            **common, "name": f"jdbc-insert-{suffix}",
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": prefix + source, "table.name.format": inserted, "auto.create": "true",
        }),
    ]  # fmt: skip

    worker = make_worker(worker_props, connectors, "worker-1.log").start()
    wait_for(lambda: _count(engine, f"SELECT count(*) FROM {upserted}") >= 2 * MAX_BATCH_RECORDS,
             START_TIMEOUT_S, "rows in the upsert target", 0.05, worker)  # fmt: skip
    worker.kill_group()
    at_kill = _count(engine, f"SELECT count(*) FROM {upserted}")
    assert at_kill < ROWS, "the copy finished before the kill: nothing was tested"

    worker = make_worker(worker_props, connectors, "worker-2.log").start()
    wait_for(lambda: _count(engine, f"SELECT count(DISTINCT id) FROM {inserted}") == ROWS
             and _count(engine, f"SELECT count(*) FROM {upserted}") == ROWS,
             START_TIMEOUT_S + 300, "both targets to hold every row", 0.5, worker)  # fmt: skip
    columns = "id, n, amount, label, day, at, ok, raw, ratio"
    assert _rows(engine, f"SELECT {columns} FROM {upserted} ORDER BY id") == _rows(
        engine, f"SELECT {columns} FROM {source} ORDER BY id"
    )
    duplicates = _count(engine, f"SELECT count(*) FROM {inserted}") - ROWS
    # Uncommitted at the kill: one source lease (its records re-produced) and one sink lease
    # (its records re-written), each at most max.batch.records (+ one poll for the source).
    bound = (MAX_BATCH_RECORDS + BATCH_MAX_ROWS) + MAX_BATCH_RECORDS
    print(f"kill -9 at {at_kill} rows: {duplicates} duplicates in the insert target (<= {bound})")
    assert 0 <= duplicates <= bound

    bad = {"name": f"jdbc-bad-{suffix}", "config": {
        "connector.class": "JdbcSource", "connection.url": "jdbc:postgresql://127.0.0.1:1/x",
        "mode": "bulk", "topic.prefix": "x-", "table.whitelist": "t"}}  # fmt: skip
    response = httpx.post(f"{worker.url}/connectors", json=bad, timeout=60)
    assert response.status_code == 400
    assert "Could not connect to postgresql+psycopg://127.0.0.1:1/x" in response.json()["message"]
    validated = httpx.put(f"{worker.url}/connector-plugins/JdbcSourceConnector/config/validate",
                          json=bad["config"], timeout=60).json()  # fmt: skip
    url_value = next(c["value"] for c in validated["configs"]
                     if c["value"]["name"] == "connection.url")  # fmt: skip
    assert validated["error_count"] >= 1 and any("Could not connect" in e
                                                 for e in url_value["errors"])  # fmt: skip
    with engine.begin() as conn:
        for table in (source, upserted, inserted):
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
