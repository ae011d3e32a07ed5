"""Incremental snapshots through the signal table while streaming goes on."""

from __future__ import annotations

import json

import pytest
from tests.support.cdc_servers import PostgresServer

from .conftest import Leases, connector_config, read_topic

pytestmark = pytest.mark.broker

SIGNAL = ("CREATE TABLE debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL,"
          " data VARCHAR(2048) NULL)")  # fmt: skip


def test_execute_snapshot_signal_reads_the_table_in_chunks_while_streaming(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    rows = 250
    cdc_postgres.execute(
        f"{SIGNAL}; CREATE TABLE items (id INT PRIMARY KEY, label TEXT NOT NULL); "
        f"INSERT INTO items SELECT g, 'l' || g FROM generate_series(1, {rows}) g",
        dbname=database,
    )
    config = connector_config(cdc_postgres, database, **{
        "snapshot.mode": "no_data", "signal.data.collection": "public.debezium_signal",
        "incremental.snapshot.chunk.size": "100"})  # fmt: skip
    leases.run(config, max_ms=300)
    data = json.dumps({"data-collections": ["public.items"], "type": "incremental"})
    cdc_postgres.execute(
        "UPDATE items SET label = 'changed' WHERE id = 5; DELETE FROM items WHERE id = 7; "
        "INSERT INTO debezium_signal VALUES ('s1', 'execute-snapshot', %s)",
        (data,), dbname=database,
    )  # fmt: skip
    progress = []
    for _ in range(10):
        leases.run(config, max_ms=1500, max_records=120)  # about one chunk per lease
        (_, offset), = leases.offsets  # fmt: skip
        progress.append("incremental_snapshot_collections" in offset)
        if not progress[-1] and any(progress):
            break
    assert any(progress) and not progress[-1], progress
    topic = f"{config['topic.prefix']}.public.items"
    events = [v["payload"] for _, v in read_topic(leases.servers, topic, rows + 2)
              if v is not None]  # fmt: skip
    reads = {e["after"]["id"]: e for e in events if e["op"] == "r"}
    assert sorted(reads) == [i for i in range(1, rows + 1) if i != 7]
    assert reads[5]["after"]["label"] == "changed"
    assert {e["source"]["snapshot"] for e in reads.values()} == {"incremental"}
    assert all(e["source"]["lsn"] is None for e in reads.values())
    assert [e["op"] for e in events if e["op"] != "r"] == ["u", "d"]
    signals = read_topic(leases.servers, f"{config['topic.prefix']}.public.debezium_signal", 3)
    kinds = [v["payload"]["after"]["type"] for _, v in signals if v is not None]
    assert kinds[0] == "execute-snapshot" and "snapshot-window-open" in kinds
