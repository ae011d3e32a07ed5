"""SparkSinkConnector in ``sparkcat standalone``: ``kill -9`` of the worker while it writes a
Parquet directory, then a restart: every record is in the directory exactly once (the commit
log beside the table, docs/spark-connectors.md)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]
from tests.e2e.conftest import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    WorkerProcess,
    edit_properties,
    wait_for,
    write_properties,
)
from tests.integration.connectors.storage.conftest import produce_orders
from tests.support.ports import free_port

from sparkcat.kafka import admin as kafka_admin

PER_PARTITION = 10_000
FLUSH_SIZE = 1000


def committed(servers: str, group: str, topic: str) -> list[int]:
    admin = AdminClient({"bootstrap.servers": servers})
    offsets = kafka_admin.committed_offsets(admin, group, [(topic, 0), (topic, 1)], timeout_s=10)
    return sorted(offsets.values())


def parquet_files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*.parquet") if not p.relative_to(out).parts[0].startswith("_")]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_kill_9_mid_stream_then_restart_writes_every_row_exactly_once(
    make_worker: Callable[..., WorkerProcess], kafka_broker: Any, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = produce_orders(servers, 2, PER_PARTITION)
    out = tmp_path / "orders"
    name = f"spark-sink-{uuid.uuid4().hex[:8]}"
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}",
        },
    )
    connector = write_properties(
        tmp_path / "spark-sink.properties",
        {
            "name": name,
            "connector.class": "SparkSinkConnector",
            "tasks.max": "2",
            "topics": topic,
            "spark.path": str(out),
            "spark.partition.by": "region",
            "flush.size": str(FLUSH_SIZE),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
        },
    )
    worker = make_worker(worker_props, [connector], "worker-1.log").start()
    wait_for(lambda: len(parquet_files(out)) >= 3, START_TIMEOUT_S, "the first writes", 0.02,
             worker)  # fmt: skip
    worker.kill_group()
    at_kill = len(parquet_files(out))
    assert worker.survivors(timeout=30) == []
    group = f"connect-{name}"
    assert sum(committed(servers, group, topic)) < 2 * PER_PARTITION, "finished before the kill"

    worker = make_worker(worker_props, [connector], "worker-2.log").start()
    wait_for(lambda: committed(servers, group, topic) == [PER_PARTITION, PER_PARTITION], 240,
             "the sink to commit the whole topic", 0.5, worker)  # fmt: skip
    assert worker.terminate() == 0

    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    ids = Counter(table.column("id").to_pylist())
    assert table.num_rows == 2 * PER_PARTITION
    assert ids == Counter(range(2 * PER_PARTITION))
    print(f"kill -9 with {at_kill} files written; {table.num_rows} rows, each once")
