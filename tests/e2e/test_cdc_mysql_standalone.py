"""The MariaDB CDC connector in a real ``sparkcat standalone`` worker on Spark, against the
throwaway MariaDB: the snapshot and streamed changes reach Kafka as Debezium's JSON envelopes;
after ``kill -9`` of the worker mid-stream and a restart, every change is there."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.cdc_mariadb import PASSWORD, USER, ThrowawayMariaDb
from tests.support.cdc_servers import read_topic
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    WorkerProcess,
    edit_properties,
    wait_for,
    write_properties,
)

SNAPSHOT_ROWS = 200


def _ops(servers: str, topic: str, expected: int = 0) -> list[tuple[Any, Any]]:
    # Waiting for ``expected`` messages: a busy broker may answer the first fetch with a part.
    return [
        (key and key["payload"]["id"], value and value["payload"]["op"])
        for key, value in read_topic(servers, topic, expected, timeout_s=3.0)
    ]


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
    servers = kafka_broker.bootstrap_servers
    topic = f"{prefix}.{db}.items"
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties", tmp_path / "worker.properties", {
            "bootstrap.servers": servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}", "max.batch.ms": "2000",
        })  # fmt: skip
    connector = write_properties(tmp_path / "cdc.properties", {
        "name": f"cdc-{suffix}", "connector.class": "MariaDb", "topic.prefix": prefix,
        "database.hostname": cdc_mariadb.host, "database.port": str(cdc_mariadb.port),
        "database.user": USER, "database.password": PASSWORD, "database.server.id": "6001",
        "database.include.list": db, "poll.interval.ms": "200",
    })  # fmt: skip

    worker = make_worker(worker_props, [connector], "worker-1.log").start()
    wait_for(lambda: len(_ops(servers, topic, SNAPSHOT_ROWS)) >= SNAPSHOT_ROWS, START_TIMEOUT_S,
             "the snapshot in Kafka", 0.5, worker)  # fmt: skip
    cdc_mariadb.execute("UPDATE items SET label = 'changed' WHERE id = 1",
                        "DELETE FROM items WHERE id = 2", database=db)  # fmt: skip
    wait_for(lambda: len(_ops(servers, topic, SNAPSHOT_ROWS + 3)) >= SNAPSHOT_ROWS + 3, 60,
             "the update and delete in Kafka", 0.5, worker)  # fmt: skip
    messages = read_topic(servers, topic, SNAPSHOT_ROWS + 3, timeout_s=2.0)
    key, value = messages[0]
    assert key == {"schema": {"type": "struct", "fields": [
        {"type": "int32", "optional": False, "field": "id"}], "optional": False,
        "name": f"{topic}.Key"}, "payload": {"id": 1}}  # fmt: skip
    assert value["schema"]["name"] == f"{topic}.Envelope"
    payload = value["payload"]
    assert payload["op"] == "r" and payload["source"]["snapshot"] == "first"
    assert payload["source"]["connector"] == "mariadb" and payload["after"]["label"] == "item 1"
    tail = [(k and k["payload"], v and v["payload"]["op"]) for k, v in messages[SNAPSHOT_ROWS:]]
    assert tail == [({"id": 1}, "u"), ({"id": 2}, "d"), ({"id": 2}, None)]

    # A writer keeps committing while the worker is killed and restarted.
    stop, written = threading.Event(), []

    def write() -> None:
        conn = cdc_mariadb.connect(db)
        n = 10_000
        try:
            while not stop.is_set():
                with conn.cursor() as cur:
                    cur.execute(f"INSERT INTO items VALUES ({n}, 'w', 1)")
                written.append(n)
                n += 1
                time.sleep(0.01)
        finally:
            conn.close()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        wait_for(lambda: len(written) >= 100, 30, "the writer to start")
        worker.kill_group()
        time.sleep(2)
        worker = make_worker(worker_props, [connector], "worker-2.log").start()
        time.sleep(5)
    finally:
        stop.set()
        writer.join(10)

    def created() -> set[int]:
        return {i for i, op in _ops(servers, topic, SNAPSHOT_ROWS + len(written)) if op == "c"}

    wait_for(lambda: created() >= set(written), START_TIMEOUT_S + 120,
             "every written row as a create event", 1.0, worker)  # fmt: skip
    ops = _ops(servers, topic, SNAPSHOT_ROWS + len(written))
    assert [op for _, op in ops].count("r") == SNAPSHOT_ROWS, "the snapshot ran again"
    creates = [i for i, op in ops if op == "c"]
    print(f"{len(written)} rows written across kill -9: {len(creates) - len(set(creates))} "
          "duplicates")  # fmt: skip
    worker.terminate()
