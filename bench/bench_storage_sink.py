"""Kafka -> Parquet files: the storage sink in one lease vs a hand-written loop, one run.

    python bench/bench_storage_sink.py [--records N] [--flush-size N] [--repeat N] [--no-append]

One topic of N JsonConverter envelopes (schemas.enable=true; a struct of id/name/region/
amount, ~250 B). Lease: one sink lease (:func:`sparkcat.runtime.tasks.lease.run_lease`, as
bench_lease.py drives sink tasks) of ``sparkcat.connectors.storage.FileSystemSinkTask`` with
ParquetFormat (snappy), DefaultPartitioner and ``flush.size``. Hand-written: confluent-kafka
``assign``/``consume(10000)``, ``orjson.loads`` of each envelope's payload into four column
lists, and ``pyarrow.parquet.write_table`` (snappy) every ``flush.size`` records. Both with
the same librdkafka settings (:mod:`sparkcat.kafka.clients`), on the embedded broker, files on
a local temporary directory (so the numbers are the CPU path, not S3 latency).

Prints records/s and the lease/hand-written ratio; appends to ``bench/RESULTS.md`` (section
``## Storage sink``) unless ``--no-append``. Best of ``--repeat`` runs each: the machine is
shared.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import tempfile
import time
import uuid
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka import clients
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

JSON = "org.apache.kafka.connect.json.JsonConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## Storage sink"
SCHEMA = {
    "type": "struct", "name": "com.example.Order", "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "name", "type": "string", "optional": True},
        {"field": "region", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": False},
    ],
}  # fmt: skip
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                   pa.field("region", pa.string(), nullable=False),
                   pa.field("amount", pa.float64(), nullable=False)])  # fmt: skip


def produce(servers: str, topic: str, n: int) -> None:
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the result
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    regions = ("eu", "us", "ap")
    for i in range(n):
        payload = {"id": i, "name": f"name-{i}", "region": regions[i % 3], "amount": i / 4}
        value = orjson.dumps({"schema": SCHEMA, "payload": payload})
        while True:
            try:
                producer.produce(topic, value, None, 0)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def hand_written(servers: str, topic: str, out: Path, n: int, flush_size: int) -> int:
    config = clients.consumer_config({"bootstrap.servers": servers}, None, "hand", "hand")
    consumer = Consumer(config)
    consumer.assign([KafkaTopicPartition(topic, 0, OFFSET_BEGINNING)])
    loads = orjson.loads
    seen = written = 0
    columns: tuple[list[object], ...] = ([], [], [], [])
    start = 0
    while seen < n:
        for message in consumer.consume(min(10_000, n - seen), 1.0):
            p = loads(message.value())["payload"]
            for column, value in zip(columns, (p["id"], p["name"], p["region"], p["amount"]),
                                     strict=True):  # fmt: skip
                column.append(value)
            seen += 1
            if len(columns[0]) == flush_size:
                table = pa.Table.from_arrays([pa.array(c) for c in columns], schema=ARROW)
                pq.write_table(table, out / f"{topic}+0+{start:010d}.snappy.parquet")
                written += len(columns[0])
                start = seen
                columns = ([], [], [], [])
    consumer.close()
    return written


def lease(servers: str, topic: str, out: Path, n: int, flush_size: int) -> int:
    task = {
        "task.class": "sparkcat.connectors.storage.FileSystemSinkTask",
        "topics": topic, "store.url": f"file://{out}", "flush.size": str(flush_size),
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
    }  # fmt: skip
    spec = LeaseSpec(
        connector=f"bench-{uuid.uuid4().hex[:6]}", task=0, generation=1, kind="sink",
        task_config=task, connector_config={},
        worker_config={"bootstrap.servers": servers, "key.converter": JSON,
                       "value.converter": JSON},
        max_ms=600_000, max_records=n, control=None, assignment=((topic, 0, None),),
    )  # fmt: skip
    result = run_lease(spec)
    assert result.trace is None, result.trace
    return sum(o for _, _, o in result.sink_offsets)


def timed(fn, *args) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    count = fn(*args)
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--flush-size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    n, flush_size = args.records, args.flush_size
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        produce(servers, "orders", n)
        hand_s = lease_s = float("inf")
        for attempt in range(args.repeat):
            hand_dir, lease_dir = Path(tmp) / f"h{attempt}", Path(tmp) / f"l{attempt}"
            hand_dir.mkdir()
            hc, t = timed(hand_written, servers, "orders", hand_dir, n, flush_size)
            hand_s = min(hand_s, t)
            lc, t = timed(lease, servers, "orders", lease_dir, n, flush_size)
            lease_s = min(lease_s, t)
            assert hc == lc == n - n % flush_size, (hc, lc)
            rows = sum(pq.read_metadata(f).num_rows for f in lease_dir.rglob("*.parquet"))
            assert rows == lc
        client_cache.close_all()
    line = (
        f"| Kafka→Parquet, JsonConverter, flush.size={flush_size} | {n:,} | "
        f"{n / hand_s:,.0f} | {n / lease_s:,.0f} | {hand_s / lease_s:.2f} |"
    )
    print(line)
    if not args.no_append:
        append(line, n)


def append(line: str, n: int) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if SECTION not in text:
        text += (
            f"\n{SECTION}\n\n`bench/bench_storage_sink.py`: one sink lease of the storage sink "
            "(FileSystemSinkTask, ParquetFormat snappy, local files) vs a hand-written "
            "confluent-kafka + pyarrow loop doing the same work, same run, best of 2. "
            "Ratio = hand-written time / lease time (target >= 0.8).\n"
        )
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text += (
        f"\nRun {stamp}, Python {platform.python_version()}, {n:,} records; the machine "
        "(2 cores) was shared with ~7 other agents' work, so the numbers are noisy.\n\n"
        "| case | records | hand-written rec/s | lease rec/s | ratio |\n|---|---|---|---|---|\n"
        f"{line}\n"
    )
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
