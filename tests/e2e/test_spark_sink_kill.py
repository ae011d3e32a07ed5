"""SparkSinkConnector in ``sparkcat standalone``: 200,000 records into a Parquet directory
partitioned by a field; ``kill -9`` of the worker in the middle of a write (after earlier
writes committed), then a restart: every record is in the directory exactly once (the commit
log beside the table, docs/spark-connectors.md).

Time: the records are produced while the first worker starts (its JVM and Spark's Python
workers), and ``flush.size`` makes four writes of the topic (each a Spark job of fixed
overhead), so the test is mostly two worker starts."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow.dataset as ds
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from tests.support.orders import SCHEMA, order
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

PARTITIONS = 2
PER_PARTITION = 100_000
TOTAL = PARTITIONS * PER_PARTITION
FLUSH_SIZE = 50_000


def create_topic(servers: str) -> str:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the result
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result()
    return topic


def produce(servers: str, topic: str) -> None:
    """Record ``i`` of partition ``p`` is ``order(p * PER_PARTITION + i)`` (JsonConverter
    envelopes with a schema)."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    for p in range(PARTITIONS):
        for i in range(PER_PARTITION):
            value = orjson.dumps({"schema": SCHEMA, "payload": order(p * PER_PARTITION + i)})
            while True:
                try:
                    producer.produce(topic, value, None, p)
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(60) == 0


def committed(servers: str, group: str, topic: str) -> list[int]:
    admin = AdminClient({"bootstrap.servers": servers})
    tps = [(topic, p) for p in range(PARTITIONS)]
    offsets = kafka_admin.committed_offsets(admin, group, tps, timeout_s=10)
    return sorted(offsets.values())


def entries(out: Path) -> list[int]:
    """The sequence numbers of the commit log's entries (writes that happened)."""
    return sorted(int(p.stem) for p in out.glob("_sparkcat_commits/*/*.json"))


def writing(out: Path) -> bool:
    """True while a write after the second is in Spark's hands: its staging directory
    exists and its commit log entry does not yet."""
    done = entries(out)
    if len(done) < 2:
        return False
    staged = [int(p.name) for p in out.glob("_sparkcat_staging/*/*") if p.name.isdigit()]
    return any(seq > done[-1] for seq in staged)


def parquet_files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*.parquet") if not p.relative_to(out).parts[0].startswith("_")]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_kill_9_mid_write_then_restart_writes_every_row_exactly_once(
    make_worker: Callable[..., WorkerProcess], kafka_broker: Any, tmp_path: Path
) -> None:
    started = time.monotonic()
    servers = kafka_broker.bootstrap_servers
    topic = create_topic(servers)
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
    produce(servers, topic)  # while the worker starts
    produced = time.monotonic()
    wait_for(lambda: writing(out), START_TIMEOUT_S, "a write after the second", 0.01, worker)
    worker.kill_group()
    killed = time.monotonic()
    at_kill, files_at_kill = entries(out), len(parquet_files(out))
    assert worker.survivors(timeout=30) == []
    group = f"connect-{name}"
    assert sum(committed(servers, group, topic)) < TOTAL, "finished before the kill"

    worker = make_worker(worker_props, [connector], "worker-2.log").start()
    # Bounds for a loaded machine (the first write of a worker starts Spark's Python workers).
    wait_for(lambda: committed(servers, group, topic) == [PER_PARTITION] * PARTITIONS,
             START_TIMEOUT_S + 120, "the sink to commit the whole topic", 0.2, worker)  # fmt: skip
    finished = time.monotonic()
    assert worker.terminate() == 0

    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    rows = list(zip(*(table.column(k).to_pylist() for k in ("id", "name", "region", "amount")),
                    strict=True))  # fmt: skip
    assert len(rows) == TOTAL
    assert set(rows) == {tuple(order(i).values()) for i in range(TOTAL)}
    assert len(entries(out)) > len(at_kill)  # the restart wrote the rest
    print(
        f"\nproduced {TOTAL:,} in {produced - started:.1f} s; kill -9 during write "
        f"{at_kill[-1] + 1} ({files_at_kill} files in place) at {killed - started:.1f} s; "
        f"restart done at {finished - started:.1f} s; {len(rows):,} rows, each once"
    )
