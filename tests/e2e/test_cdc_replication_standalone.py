"""The pipeline people build first with Debezium, in one real ``sparkcat standalone`` worker:
the PostgresConnector on the throwaway PostgreSQL → Kafka (JsonConverter with schemas) →
``ExtractNewRecordState`` → the JDBC sink (``insert.mode=upsert``, ``delete.enabled=true``,
``pk.mode=record_key``, ``auto.create=true``) into a table on the machine's shared PostgreSQL.
After a snapshot and a few hundred mixed inserts, updates and deletes (a row deleted and
inserted again, a key changed, numerics updated, text set to NULL), the target table equals
the source.

``time.precision.mode=connect`` is what a JDBC sink needs (Connect ``Timestamp``, milliseconds,
becomes a ``TIMESTAMP`` column; Debezium's default ``MicroTimestamp`` is a plain int64), so the
writer's timestamps have millisecond precision.
"""

from __future__ import annotations

import datetime
import decimal
import random
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from tests.support.cdc_servers import PostgresServer
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

TARGET_DB = "sparkcat_cdc_e2e"
SNAPSHOT_ROWS = 50
CHANGES = 400
COLUMNS = "id, name, amount, updated_at"
EPOCH = datetime.datetime(2026, 1, 1)
UPDATE = "UPDATE accounts SET name = %s, amount = %s, updated_at = %s WHERE id = %s"


@pytest.fixture
def target() -> Iterator[tuple[sa.Engine, str]]:
    """A database of this test's own on the shared PostgreSQL, and a fresh table name."""
    ensure_postgres_database(TARGET_DB)
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{TARGET_DB}")
    table = f"accounts_{uuid.uuid4().hex[:8]}"
    yield engine, table
    with engine.begin() as conn:
        conn.exec_driver_sql(f'DROP TABLE IF EXISTS "{table}"')
    engine.dispose()


def _stamp(rng: random.Random) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=rng.randrange(10**10))


def special_changes(server: PostgresServer, dbname: str, rng: random.Random) -> None:
    """Rows 1-4: deleted and inserted again, a numeric updated, a key changed."""
    conn = server.connect(dbname)
    try:
        with conn.cursor() as cur:
            # Deleted and inserted again with other values, in two transactions and in one.
            cur.execute("DELETE FROM accounts WHERE id = 1")
            cur.execute("INSERT INTO accounts VALUES (1, 'back', 1.50, %s)", (_stamp(rng),))
            cur.execute("BEGIN; DELETE FROM accounts WHERE id = 2; "
                        "INSERT INTO accounts VALUES (2, 'again', -2.25, %s); COMMIT",
                        (_stamp(rng),))  # fmt: skip
            cur.execute("UPDATE accounts SET amount = amount * 3 + 0.01 WHERE id = 3")
            # A key change (Debezium: delete, tombstone, create), then one transaction that
            # inserts, updates, deletes and inserts one key again.
            cur.execute("UPDATE accounts SET id = 100000 WHERE id = 4")
            cur.execute("BEGIN; INSERT INTO accounts VALUES (100001, 'x', 1, %s); "
                        "UPDATE accounts SET amount = 2 WHERE id = 100001; "
                        "DELETE FROM accounts WHERE id = 100001; "
                        "INSERT INTO accounts VALUES (100001, 'y', 3, %s); COMMIT",
                        (_stamp(rng), _stamp(rng)))  # fmt: skip
    finally:
        conn.close()


def random_changes(server: PostgresServer, dbname: str, rng: random.Random, count: int) -> None:
    """``count`` one-statement transactions: inserts, updates (text sometimes NULL) and
    deletes of rows 5 to 99999."""
    conn = server.connect(dbname)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM accounts WHERE id BETWEEN 5 AND 99999")
            live = {row[0] for row in cur.fetchall()}
            next_id = max(live | {SNAPSHOT_ROWS}) + 1
            for _ in range(count):
                choice = rng.random()
                if choice < 0.4 or not live:
                    cur.execute("INSERT INTO accounts VALUES (%s, %s, %s, %s)",
                                (next_id, f"n{next_id}", _amount(rng), _stamp(rng)))  # fmt: skip
                    live.add(next_id)
                    next_id += 1
                elif choice < 0.8:
                    key = rng.choice(sorted(live))
                    name = None if rng.random() < 0.1 else f"u{rng.randrange(1000)}"
                    cur.execute(UPDATE, (name, _amount(rng), _stamp(rng), key))
                else:
                    key = rng.choice(sorted(live))
                    cur.execute("DELETE FROM accounts WHERE id = %s", (key,))
                    live.discard(key)
    finally:
        conn.close()


def _amount(rng: random.Random) -> decimal.Decimal:
    return decimal.Decimal(rng.randrange(-(10**9), 10**9)).scaleb(-2)


def source_rows(server: PostgresServer, dbname: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in server.execute(f"SELECT {COLUMNS} FROM accounts ORDER BY id",
                                             dbname=dbname)]  # fmt: skip


def target_rows(engine: sa.Engine, table: str) -> list[tuple[Any, ...]] | None:
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(f'SELECT {COLUMNS} FROM "{table}" ORDER BY id').all()
    except sa.exc.ProgrammingError:
        return None  # not created yet
    return [tuple(r) for r in rows]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_debezium_unwrap_jdbc_sink_replicates_the_table(
    make_worker: Callable[..., WorkerProcess],
    kafka_broker: Any,
    cdc_postgres: PostgresServer,
    target: tuple[sa.Engine, str],
    tmp_path: Path,
) -> None:
    engine, table = target
    suffix = uuid.uuid4().hex[:8]
    dbname, prefix = f"repl_{suffix}", f"repl{suffix}"
    cdc_postgres.create_database(dbname)
    cdc_postgres.execute(
        "CREATE TABLE accounts (id INT PRIMARY KEY, name TEXT, amount NUMERIC(12,2) NOT NULL, "
        "updated_at TIMESTAMP NOT NULL); "
        "INSERT INTO accounts SELECT g, 'a' || g, g * 10.5, "
        f"TIMESTAMP '2026-01-01' + g * INTERVAL '1.5 second' FROM generate_series(1, "
        f"{SNAPSHOT_ROWS}) g",
        dbname=dbname,
    )
    servers = kafka_broker.bootstrap_servers
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties", tmp_path / "worker.properties", {
            "bootstrap.servers": servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}", "max.batch.ms": "2000",
        })  # fmt: skip
    source = write_properties(tmp_path / "source.properties", {
        "name": f"source-{suffix}",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "topic.prefix": prefix, "database.hostname": cdc_postgres.host,
        "database.port": str(cdc_postgres.port), "database.user": cdc_postgres.user,
        "database.dbname": dbname, "slot.name": f"slot_{suffix}", "poll.interval.ms": "200",
        "table.include.list": "public.accounts", "time.precision.mode": "connect",
    })  # fmt: skip
    sink = write_properties(tmp_path / "sink.properties", {
        "name": f"sink-{suffix}",
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "topics": f"{prefix}.public.accounts",
        "connection.url": f"jdbc:postgresql://127.0.0.1:5432/{TARGET_DB}?user=postgres",
        "table.name.format": table,
        "insert.mode": "upsert", "delete.enabled": "true", "pk.mode": "record_key",
        "auto.create": "true",
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    })  # fmt: skip

    worker = make_worker(worker_props, [source, sink], "worker.log").start()
    snapshot = source_rows(cdc_postgres, dbname)
    wait_for(lambda: target_rows(engine, table) == snapshot, START_TIMEOUT_S,
             "the snapshot in the target table", 0.5, worker)  # fmt: skip

    rng = random.Random(34)
    special_changes(cdc_postgres, dbname, rng)
    random_changes(cdc_postgres, dbname, rng, CHANGES)
    expected = source_rows(cdc_postgres, dbname)
    assert expected != snapshot
    assert [r[:3] for r in expected[:3]] == [
        (1, "back", decimal.Decimal("1.50")),
        (2, "again", decimal.Decimal("-2.25")),
        (3, "a3", decimal.Decimal("94.51")),
    ]
    assert [r[:3] for r in expected[-2:]] == [(100000, "a4", decimal.Decimal("42.00")),
                                              (100001, "y", decimal.Decimal("3.00"))]  # fmt: skip
    wait_replicated(engine, table, expected, worker)
    assert worker.terminate() == 0

    # Changes made while the worker is down arrive after its restart.
    random_changes(cdc_postgres, dbname, rng, CHANGES // 2)
    expected = source_rows(cdc_postgres, dbname)
    worker = make_worker(worker_props, [source, sink], "worker-2.log").start()
    wait_replicated(engine, table, expected, worker, START_TIMEOUT_S)
    assert worker.terminate() == 0


def wait_replicated(
    engine: sa.Engine,
    table: str,
    expected: list[tuple[Any, ...]],
    worker: WorkerProcess,
    timeout: float = 180.0,
) -> None:
    try:
        wait_for(lambda: target_rows(engine, table) == expected, timeout,
                 "the target table to equal the source", 0.5, worker)  # fmt: skip
    except AssertionError as exc:
        found = {r[0]: r for r in target_rows(engine, table) or []}
        wanted = {r[0]: r for r in expected}
        diff = sorted(set(found.items()) ^ set(wanted.items()))[:10]
        raise AssertionError(f"{exc}\ntarget differs from source, e.g. {diff}") from None
