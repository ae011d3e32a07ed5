"""The CDC connectors' end-to-end scenario, one for every database: a real ``sparkcat
standalone`` worker on Spark copies a table's snapshot and streamed changes to Kafka as
Debezium's JSON envelopes, and after ``kill -9`` of the worker under a writer that keeps
committing, and a restart, every change is there."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

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
FIRST_WRITTEN = 10_000

# Opens the writer's connection; yields what inserts row ``n`` (``(n, 'w', 1)``).
Writer = Callable[[], AbstractContextManager[Callable[[int], None]]]


def ops(servers: str, topic: str, expected: int, timeout_s: float) -> list[tuple[Any, Any]]:
    """(id, op) of every message; waits for ``expected`` of them (a busy broker may answer
    the first fetch with a part)."""
    return [
        (key and key["payload"]["id"], value and value["payload"]["op"])
        for key, value in read_topic(servers, topic, expected, timeout_s=timeout_s)
    ]


def snapshot_change_and_kill_9(
    make_worker: Callable[..., WorkerProcess],
    servers: str,
    tmp_path: Path,
    topic: str,
    connector: dict[str, str],
    change: Callable[[], None],
    writer: Writer,
    read_timeout_s: float = 10.0,
) -> tuple[Any, Any]:
    """Run the scenario on ``connector``'s table ``items`` (``SNAPSHOT_ROWS`` rows ``(i,
    'item i', i * 1.25)``): ``change`` updates row 1 and deletes row 2. Returns the first
    message (key, value) for database-specific checks."""
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties", tmp_path / "worker.properties", {
            "bootstrap.servers": servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}", "max.batch.ms": "2000",
        })  # fmt: skip
    connector_props = write_properties(tmp_path / "cdc.properties", connector)

    def seen(expected: int) -> list[tuple[Any, Any]]:
        return ops(servers, topic, expected, read_timeout_s)

    worker = make_worker(worker_props, [connector_props], "worker-1.log").start()
    wait_for(lambda: len(seen(SNAPSHOT_ROWS)) >= SNAPSHOT_ROWS, START_TIMEOUT_S,
             "the snapshot in Kafka", 0.5, worker)  # fmt: skip
    change()
    wait_for(lambda: len(seen(SNAPSHOT_ROWS + 3)) >= SNAPSHOT_ROWS + 3, 60,
             "the update and delete in Kafka", 0.5, worker)  # fmt: skip
    messages = read_topic(servers, topic, SNAPSHOT_ROWS + 3, timeout_s=2.0)
    key, value = messages[0]
    assert key == {"schema": {"type": "struct", "fields": [
        {"type": "int32", "optional": False, "field": "id"}], "optional": False,
        "name": f"{topic}.Key"}, "payload": {"id": 1}}  # fmt: skip
    assert value["schema"]["name"] == f"{topic}.Envelope"
    assert value["payload"]["op"] == "r" and value["payload"]["source"]["snapshot"] == "first"
    assert value["payload"]["after"]["label"] == "item 1"
    tail = [(k and k["payload"], v and v["payload"]["op"]) for k, v in messages[SNAPSHOT_ROWS:]]
    assert tail == [({"id": 1}, "u"), ({"id": 2}, "d"), ({"id": 2}, None)]

    worker, written = _kill_9_under_a_writer(
        make_worker, worker, worker_props, connector_props, writer
    )
    total = SNAPSHOT_ROWS + 3 + len(written)

    def created() -> set[int]:
        return {i for i, op in seen(total) if op == "c"}

    wait_for(lambda: created() >= set(written), START_TIMEOUT_S + 120,
             "every written row as a create event", 1.0, worker)  # fmt: skip
    events = seen(total)
    assert [op for _, op in events].count("r") == SNAPSHOT_ROWS, "the snapshot ran again"
    creates = [i for i, op in events if op == "c"]
    print(f"{len(written)} rows written across kill -9: "
          f"{len(creates) - len(set(creates))} duplicates")  # fmt: skip
    worker.terminate()
    return messages[0]


def _kill_9_under_a_writer(
    make_worker: Callable[..., WorkerProcess], worker: WorkerProcess, worker_props: Path,
    connector_props: Path, writer: Writer,
) -> tuple[WorkerProcess, list[int]]:  # fmt: skip
    """``kill -9`` of ``worker`` while ``writer`` commits a row every 10 ms, and a restart;
    the restarted worker and the rows written."""
    written: list[int] = []
    stop = threading.Event()

    def write() -> None:
        with writer() as insert:
            n = FIRST_WRITTEN
            while not stop.is_set():
                insert(n)
                written.append(n)
                n += 1
                time.sleep(0.01)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(written) >= 100, 30, "the writer to start")
        worker.kill_group()
        time.sleep(2)
        worker = make_worker(worker_props, [connector_props], "worker-2.log").start()
        time.sleep(5)
    finally:
        stop.set()
        thread.join(10)
    return worker, written
