"""The S3-semantics storage sink in ``sparkcat standalone``: ``kill -9`` of the worker in the
middle of the stream, then a restart: every record is in exactly one object, exactly once."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]
from tests.support.orders import order, produce_orders
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    WorkerProcess,
    edit_properties,
    wait_for,
    write_properties,
)

from sparkcat.kafka import admin as kafka_admin

# Eight objects in all: the kill (after the first two) lands well before the last.
PER_PARTITION = 20_000
FLUSH_SIZE = 5000


def committed_all(servers: str, group: str, topic: str) -> bool:
    admin = AdminClient({"bootstrap.servers": servers})
    tps = [(topic, 0), (topic, 1)]
    committed = kafka_admin.committed_offsets(admin, group, tps, timeout_s=10)
    return sorted(committed.values()) == [PER_PARTITION, PER_PARTITION]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_kill_9_mid_stream_then_restart_writes_every_record_exactly_once(
    make_worker: Callable[..., WorkerProcess], kafka_broker: Any, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = produce_orders(servers, 2, PER_PARTITION)
    out = tmp_path / "out"
    name = f"storage-{uuid.uuid4().hex[:8]}"
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}",
            "max.batch.ms": "2000",
            "max.batch.records": "12000",
        },
    )
    connector = write_properties(
        tmp_path / "storage.properties",
        {
            "name": name,
            "connector.class": "FileSystemSink",
            "tasks.max": "1",
            "topics": topic,
            "store.url": f"file://{out}",
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "flush.size": str(FLUSH_SIZE),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
        },
    )

    def objects() -> list[Path]:
        return sorted(out.rglob("*.json"))

    worker = make_worker(worker_props, [connector], "worker-1.log").start()
    wait_for(lambda: len(objects()) >= 2, START_TIMEOUT_S, "the first objects", 0.05, worker)
    worker.kill_group()
    at_kill = len(objects())
    assert at_kill < 2 * PER_PARTITION // FLUSH_SIZE, "finished before the kill: nothing tested"
    assert worker.survivors(timeout=30) == []

    worker = make_worker(worker_props, [connector], "worker-2.log").start()
    wait_for(lambda: committed_all(servers, f"connect-{name}", topic), 240,
             "the sink to commit the whole topic", 0.5, worker)  # fmt: skip
    assert worker.terminate() == 0

    files = objects()
    assert len(files) == 2 * PER_PARTITION // FLUSH_SIZE  # no stray objects from the kill
    ids = Counter(orjson.loads(line)["id"] for f in files for line in f.read_bytes().splitlines())
    assert ids == Counter(range(2 * PER_PARTITION))
    for p in range(2):
        first = out / "topics" / topic / f"partition={p}" / f"{topic}+{p}+0000005000.json"
        rows = [orjson.loads(line) for line in first.read_bytes().splitlines()]
        assert rows == [order(p * PER_PARTITION + 5000 + i) for i in range(FLUSH_SIZE)]
    print(f"kill -9 after {at_kill} objects; all {len(files)} objects exactly once")
