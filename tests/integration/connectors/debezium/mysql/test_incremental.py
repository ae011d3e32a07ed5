"""Incremental snapshots of a MariaDB table through the signal table while streaming goes on
and a writer keeps updating the table."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from tests.support.cdc_mariadb import ThrowawayMariaDb

from .conftest import Leases, connector_config, read_topic

pytestmark = pytest.mark.broker

SIGNAL = ("CREATE TABLE debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL,"
          " data VARCHAR(2048) NULL)")  # fmt: skip
ROWS = 250


def writer(server: ThrowawayMariaDb, database: str, done: threading.Event) -> None:
    """Updates even rows all over the table until ``done``, one transaction each."""
    conn = server.connect(database, autocommit=True)
    try:
        i = 0
        while not done.is_set() and i < 400:
            with conn.cursor() as cur:
                cur.execute("UPDATE items SET label = %s WHERE id = %s",
                            (f"w{i}", i * 37 % (ROWS // 2) * 2 + 2))  # fmt: skip
            i += 1
            done.wait(0.01)
    finally:
        conn.close()


def test_execute_snapshot_reads_every_row_once_without_losing_concurrent_updates(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute(SIGNAL, "CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(20))",
                        f"INSERT INTO items SELECT seq, CONCAT('l', seq) FROM seq_1_to_{ROWS}",
                        database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database, **{
        "snapshot.mode": "no_data", "signal.data.collection": f"{database}.debezium_signal",
        "incremental.snapshot.chunk.size": "100", "heartbeat.interval.ms": "100"})  # fmt: skip
    leases.run(config, max_ms=1000)  # commits a stream position (a heartbeat's)
    data = json.dumps({"data-collections": [f"{database}.items"], "type": "incremental"})
    cdc_mariadb.execute("UPDATE items SET label = 'changed' WHERE id = 5",
                        "DELETE FROM items WHERE id = 7",
                        f"INSERT INTO debezium_signal VALUES ('s1', 'execute-snapshot', '{data}')",
                        database=database)  # fmt: skip
    done = threading.Event()
    thread = threading.Thread(target=writer, args=(cdc_mariadb, database, done))
    thread.start()
    progress: list[bool] = []
    try:
        for _ in range(12):
            leases.run(config, max_ms=1500, max_records=150)  # about one chunk per lease
            ((_, offset),) = leases.offsets
            progress.append("incremental_snapshot_collections" in offset)
            if not progress[-1] and any(progress):
                break
    finally:
        done.set()
        thread.join()
    leases.run(config, max_ms=1500)  # the writer's last updates
    assert any(progress) and not progress[-1], progress

    topic = f"{config['topic.prefix']}.{database}.items"
    events = [v["payload"] for _, v in read_topic(leases.servers, topic, ROWS) if v is not None]
    reads = [e["after"]["id"] for e in events if e["op"] == "r"]
    assert len(reads) == len(set(reads)), "a row was read twice"
    # A row changed while its chunk was open is not read (the streamed change is newer), as
    # in Debezium; the rows the writer leaves alone are each read once.
    assert sorted(i for i in reads if i % 2) == [i for i in range(1, ROWS + 1, 2) if i != 7]
    assert {e["source"]["snapshot"] for e in events if e["op"] == "r"} == {"incremental"}
    # The last event of each key is the row as it is now: no update was lost to a stale read.
    latest: dict[int, Any] = {}
    for event in events:
        row = event["after"] or event["before"]
        latest[row["id"]] = event["after"]
    with cdc_mariadb.connect(database) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, label FROM items")
        now = {i: {"id": i, "label": label} for i, label in cur.fetchall()}
    assert {i: r for i, r in latest.items() if r is not None} == now
