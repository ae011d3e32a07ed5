"""PostgresConnector against a throwaway PostgreSQL with wal_level=logical, its task run in
source leases to the broker: the snapshot and the streamed changes as Debezium writes them,
restarts from committed offsets, the slot's confirmed LSN, one consumer per slot, validation."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.support.cdc_servers import PostgresServer

from sparkcat.api.errors import ConnectError
from sparkcat.connectors.debezium.postgres import PostgresConnector

from .conftest import Leases, connector_config, read_topic

pytestmark = pytest.mark.broker

TABLE = ("CREATE TABLE public.customers (id INT PRIMARY KEY, name TEXT NOT NULL, "
         "price NUMERIC(10,2), seen TIMESTAMP(3))")  # fmt: skip


def slot_flushed(server: PostgresServer, slot: str) -> int:
    (text,) = server.execute(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s", (slot,)
    )[0]
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def payloads(messages: list[Any]) -> list[Any]:
    return [(k and k["payload"], v and v["payload"]) for k, v in messages]


def test_snapshot_then_changes_are_debezium_events(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    cdc_postgres.execute(TABLE, dbname=database)
    cdc_postgres.execute("INSERT INTO customers VALUES (1, 'ann', 1.5, '2024-01-02 03:04:05.123'),"
                         " (2, 'bob', NULL, NULL)", dbname=database)  # fmt: skip
    config = connector_config(cdc_postgres, database)
    prefix = config["topic.prefix"]
    topic = f"{prefix}.public.customers"
    leases.run(config)
    cdc_postgres.execute("INSERT INTO customers VALUES (3, 'cy', 2, NULL); "
                         "UPDATE customers SET name = 'ann2' WHERE id = 1; "
                         "DELETE FROM customers WHERE id = 2", dbname=database)  # fmt: skip
    leases.run(config)
    messages = read_topic(leases.servers, topic, 6)
    events = payloads(messages)
    assert [(k["id"], v and v["op"]) for k, v in events] == [
        (1, "r"), (2, "r"), (3, "c"), (1, "u"), (2, "d"), (2, None)]  # fmt: skip
    key, value = messages[0]
    assert key["schema"]["name"] == f"{topic}.Key"
    assert value["schema"]["name"] == f"{topic}.Envelope"
    assert [f["field"] for f in value["schema"]["fields"]] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]  # fmt: skip
    price = value["schema"]["fields"][1]["fields"][2]
    assert (price["name"], price["parameters"]) == (
        "org.apache.kafka.connect.data.Decimal",
        {"scale": "2", "connect.decimal.precision": "10"})  # fmt: skip
    seen = value["schema"]["fields"][1]["fields"][3]
    assert seen["name"] == "io.debezium.time.Timestamp"
    first = events[0][1]
    assert first["after"] == {"id": 1, "name": "ann", "price": "AJY=", "seen": 1704164645123}
    source = first["source"]
    assert {k: source[k] for k in ("connector", "name", "db", "schema", "table", "snapshot")} == {
        "connector": "postgresql", "name": prefix, "db": database, "schema": "public",
        "table": "customers", "snapshot": "first"}  # fmt: skip
    assert events[1][1]["source"]["snapshot"] == "last"
    create, update, delete = events[2][1], events[3][1], events[4][1]
    assert create["source"]["snapshot"] == "false" and create["source"]["lsn"] > 0
    assert create["source"]["txId"] == update["source"]["txId"] == delete["source"]["txId"]
    assert update["before"] is None and update["after"]["name"] == "ann2"
    # REPLICA IDENTITY DEFAULT: the old row holds the key (and empty required columns).
    assert delete["before"] == {"id": 2, "name": "", "price": None, "seen": None}
    assert delete["after"] is None
    (partition, offset), = leases.offsets  # fmt: skip
    assert partition == {"server": prefix}
    assert {"lsn", "lsn_proc", "lsn_commit", "txId", "ts_usec"} <= set(offset)


def test_replica_identity_full_sends_whole_before(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    cdc_postgres.execute(TABLE + "; ALTER TABLE customers REPLICA IDENTITY FULL",
                         dbname=database)  # fmt: skip
    config = connector_config(cdc_postgres, database, **{"snapshot.mode": "no_data"})
    leases.run(config, max_ms=500)
    changes = "INSERT INTO customers VALUES (1, 'a', 1, NULL); UPDATE customers SET price = 2"
    cdc_postgres.execute(changes + " WHERE id = 1", dbname=database)
    leases.run(config)
    events = payloads(read_topic(leases.servers, f"{config['topic.prefix']}.public.customers", 2))
    assert [v["op"] for _, v in events] == ["c", "u"]
    assert events[1][1]["before"]["name"] == "a"


def test_restart_resumes_without_loss_and_confirms_committed_lsn(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    cdc_postgres.execute(TABLE, dbname=database)
    config = connector_config(cdc_postgres, database)
    slot = config["slot.name"]
    leases.run(config, max_ms=500)
    start = slot_flushed(cdc_postgres, slot)
    expected = 0
    for round_ in range(4):
        for i in range(5):
            n = round_ * 100 + i
            cdc_postgres.execute(f"INSERT INTO customers VALUES ({n}, 'n{n}', NULL, NULL)",
                                 dbname=database)  # fmt: skip
            expected += 1
        leases.run(config, max_ms=700)
    leases.run(config, max_ms=300)  # confirms what the last one committed
    events = payloads(read_topic(leases.servers, f"{config['topic.prefix']}.public.customers",
                                 expected))  # fmt: skip
    ids = [k["id"] for k, _ in events]
    assert sorted(ids) == sorted({r * 100 + i for r in range(4) for i in range(5)})
    assert len(ids) == len(set(ids)), "a change was sent twice"
    flushed = slot_flushed(cdc_postgres, slot)
    assert flushed > start
    (_, offset), = leases.offsets  # fmt: skip
    assert flushed <= offset["lsn_commit"] or flushed <= offset["lsn"]


def test_second_consumer_of_a_slot_fails_clearly(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    from sparkcat.connectors.debezium.postgres import PostgresConnectorTask
    from sparkcat.runtime.tasks.task_context import (
        LeaseOffsetStorageReader,
        WorkerSourceTaskContext,
    )

    cdc_postgres.execute(TABLE, dbname=database)
    config = connector_config(cdc_postgres, database, **{"slot.max.retries": "2"})
    leases.run(config, max_ms=300)
    tasks = []
    for _ in range(2):
        task = PostgresConnectorTask()
        task.initialize(WorkerSourceTaskContext(config, LeaseOffsetStorageReader(leases.offsets)))
        task.start(config)
        tasks.append(task)
    try:
        tasks[0].poll()
        started = time.monotonic()
        with pytest.raises(ConnectError, match="in use by another consumer after 2 attempts"):
            tasks[1].poll()
        assert time.monotonic() - started < 10
    finally:
        for task in tasks:
            task.stop()
            task.stopped()


def test_validation_names_the_problem(cdc_postgres: PostgresServer, database: str) -> None:
    def errors(config: dict[str, str]) -> dict[str, list[str]]:
        result = PostgresConnector().validate(config)
        return {v.name: v.error_messages for v in result if v.error_messages}

    config = connector_config(cdc_postgres, database)
    assert errors(config) == {}
    missing = {k: v for k, v in config.items() if k not in ("topic.prefix", "database.dbname")}
    assert set(errors(missing)) == {"topic.prefix", "database.dbname"}
    # The machine's shared server runs with wal_level=replica.
    shared = {**config, "database.port": "5432", "database.dbname": "postgres"}
    (message,) = errors(shared)["database.hostname"]
    assert "wal_level" in message and "logical" in message
    cdc_postgres.execute("DROP ROLE IF EXISTS plain; CREATE ROLE plain LOGIN")
    (message,) = errors({**config, "database.user": "plain"})["database.user"]
    assert "REPLICATION" in message
    assert cdc_postgres.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s",
                                (config["slot.name"],))[0][0] == 0  # fmt: skip


@pytest.mark.parametrize(("mode", "expected"), [("string", "1.50"), ("double", 1.5)])
def test_decimal_handling_modes(
    cdc_postgres: PostgresServer, database: str, leases: Leases, mode: str, expected: object
) -> None:
    cdc_postgres.execute(TABLE + "; INSERT INTO customers VALUES (1, 'a', 1.5, NULL)",
                         dbname=database)  # fmt: skip
    config = connector_config(cdc_postgres, database, **{"decimal.handling.mode": mode})
    leases.run(config, max_ms=500)
    ((_, value),) = read_topic(leases.servers, f"{config['topic.prefix']}.public.customers", 1)
    assert value["payload"]["after"]["price"] == expected
    price = value["schema"]["fields"][1]["fields"][2]
    assert price["type"] == ("string" if mode == "string" else "double")


def test_heartbeats_carry_the_position_past_filtered_changes(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    cdc_postgres.execute(TABLE + "; CREATE TABLE other (id INT PRIMARY KEY)", dbname=database)
    config = connector_config(cdc_postgres, database, **{
        "heartbeat.interval.ms": "100", "table.include.list": "public.customers",
        "snapshot.mode": "no_data"})  # fmt: skip
    leases.run(config, max_ms=500)
    before = slot_flushed(cdc_postgres, config["slot.name"])
    cdc_postgres.execute("INSERT INTO other SELECT generate_series(1, 100)", dbname=database)
    leases.run(config, max_ms=800)
    leases.run(config, max_ms=300)  # confirms what the heartbeat committed
    assert slot_flushed(cdc_postgres, config["slot.name"]) > before
    prefix = config["topic.prefix"]
    key, value = read_topic(leases.servers, f"__debezium-heartbeat.{prefix}", 1)[0]
    assert key["payload"] == {"serverName": prefix}
    assert key["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
    assert value["schema"]["name"] == "io.debezium.connector.common.Heartbeat"
    assert value["payload"]["ts_ms"] > 0


def test_a_snapshot_longer_than_a_lease_goes_on_in_the_next(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    rows = 3000
    cdc_postgres.execute(TABLE + f"; INSERT INTO customers SELECT g, 'n' || g, NULL, NULL "
                         f"FROM generate_series(1, {rows}) g", dbname=database)  # fmt: skip
    config = connector_config(cdc_postgres, database, **{"max.batch.size": "50"})
    topic = f"{config['topic.prefix']}.public.customers"
    runs = 0
    while runs < 40:
        runs += 1
        leases.run(config, max_ms=2000, max_records=500)
        (_, offset), = leases.offsets  # fmt: skip
        if offset.get("snapshot_completed"):
            break
    assert runs > 1, "the snapshot fit in one lease: nothing was tested"
    events = read_topic(leases.servers, topic, rows)
    ids = [k["payload"]["id"] for k, _ in events]
    assert sorted(ids) == list(range(1, rows + 1)), "rows lost or repeated across leases"
    markers = [v["payload"]["source"]["snapshot"] for _, v in events]
    assert (markers[0], markers[-1], markers.count("first"), markers.count("last")) == (
        "first", "last", 1, 1)  # fmt: skip


def test_transactions_across_tables_resume_mid_transaction_without_loss(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    # Each transaction alternates two tables (a poll is one batch with a topic per change);
    # polls of 3 changes and leases of one poll end inside transactions.
    cdc_postgres.execute(
        "CREATE TABLE a (id INT PRIMARY KEY); CREATE TABLE b (id INT PRIMARY KEY, v TEXT)",
        dbname=database,
    )
    config = connector_config(cdc_postgres, database, **{"max.batch.size": "3"})
    leases.run(config, max_ms=500)
    ids = [t * 10 + i for t in range(4) for i in range(2)]
    for t in range(4):
        statements = [f"INSERT INTO a VALUES ({n}); INSERT INTO b VALUES ({n}, 'x')"
                      for n in ids[t * 2 : t * 2 + 2]]  # fmt: skip
        cdc_postgres.execute("; ".join(statements), dbname=database)  # one transaction
    for _ in range(4):
        leases.run(config, max_ms=400, max_records=3)
    leases.run(config, max_ms=700)
    prefix = config["topic.prefix"]
    for table in ("a", "b"):
        events = payloads(read_topic(leases.servers, f"{prefix}.public.{table}", len(ids)))
        assert [k["id"] for k, _ in events] == ids  # in order, none lost, none twice
        assert {v["source"]["table"] for _, v in events} == {table}
