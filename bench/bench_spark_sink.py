"""Kafka -> Parquet: SparkSinkConnector (Spark's own Parquet writer) vs a hand-written loop.

    python bench/bench_spark_sink.py [--records N] [--flush-size N] [--tasks N] [--no-warmup]
                                     [--executors N] [--no-append]

One topic of N JsonConverter envelopes (schemas.enable=true; a struct of id/name/region/
amount, ~250 B), as bench_storage_sink.py produces them. Connector: a SparkEngine on a
``local[4]`` SparkSession (built before the clock starts), one SparkSinkConnector with
``spark.path`` (snappy Parquet, the commit log, ``flush.size`` records per write), timed from
``start_connector`` until the engine reported all N records written and committed.
Hand-written: bench_storage_sink.py's loop (confluent-kafka ``consume``, ``orjson.loads`` of
each payload into column lists, ``pyarrow.parquet.write_table`` every ``flush.size``
records). Same run, same broker; files on a local temporary directory.

``--executors N``: instead of ``local[4]``, a Spark standalone cluster of N 1-core workers on
loopback (``tests/integration/cluster/spark_cluster.py``, as ``bench/bench_cluster.py``
starts it), ``spark.cores.max=N``: N executors of one core. The connector then has N tasks
(one Spark task per executor) and reads a copy of the records in an N-partition topic; the
hand-written loop, one consumer thread, still reads the 1-partition topic.

Prints records/s and the ratio (hand-written time / connector time) and the load average;
appends to ``bench/RESULTS.md`` (section ``## Spark-native sink``) unless ``--no-append``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow.dataset as ds
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_storage_sink import SCHEMA, hand_written, produce
from tests.integration.cluster.spark_cluster import SparkCluster

from sparkcat.engine import SparkEngine
from sparkcat.engine.native_connectors import SparkSinkConnector
from sparkcat.engine.session import build_session
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

JSON = "org.apache.kafka.connect.json.JsonConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## Spark-native sink"


class Done:
    """The engine's listener: counts written records, remembers a failure."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.trace: str | None = None
        self.event = threading.Event()

    def on_records(self, connector: str, task: int, count: int) -> None:
        self.count += count
        if self.count >= self.n:
            self.event.set()

    def on_task_failed(self, connector: str, task: int, trace: str) -> None:
        self.trace = trace
        self.event.set()

    def on_connector_failed(self, connector: str, trace: str) -> None:
        self.on_task_failed(connector, -1, trace)

    def on_task_running(self, connector: str, task: int) -> None:
        pass

    def on_task_paused(self, connector: str, task: int) -> None:
        pass


def connector(engine: SparkEngine, topic: str, out: Path, n: int, flush: int, tasks: int) -> int:
    name = f"bench-{out.name}"
    props = {
        "name": name,
        "connector.class": "SparkSinkConnector",
        "topics": topic,
        "spark.path": str(out),
        "flush.size": str(flush),
        "rotate.interval.ms": "0",
    }
    sink = SparkSinkConnector()
    sink.start(props)
    task_class = default_registry().class_name(sink.task_class())
    configs = [dict(c, **{"task.class": task_class}) for c in sink.task_configs(tasks)]
    done = Done(n)
    engine.start_connector(ConnectorPlan(name, "sink", props, configs), done)  # type: ignore[arg-type]
    done.event.wait(1800)
    engine.stop_connector(name)
    assert done.trace is None, done.trace
    return done.count


def produce_spread(servers: str, topic: str, n: int, partitions: int) -> None:
    """The records of bench_storage_sink.produce, round-robin over ``partitions``."""
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the result
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    regions = ("eu", "us", "ap")
    for i in range(n):
        payload = {"id": i, "name": f"name-{i}", "region": regions[i % 3], "amount": i / 4}
        while True:
            try:
                producer.produce(topic, orjson.dumps({"schema": SCHEMA, "payload": payload}),
                                 None, i % partitions)  # fmt: skip
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


@contextlib.contextmanager
def spark_master(executors: int, work: Path) -> Iterator[dict[str, str]]:
    """The session settings: ``local[4]``, or a standalone cluster of ``executors`` 1-core
    workers (stopped on exit)."""
    if not executors:
        yield {"spark.master": "local[4]"}
        return
    cluster = SparkCluster(work / "spark-cluster", [], workers=executors, cores=1)
    try:
        cluster.start(timeout_s=600)  # a loaded machine registers workers slowly
        # The executors share this machine: they run this interpreter (an in-process driver
        # does not turn spark.pyspark.python into the PYSPARK_PYTHON PySpark reads).
        os.environ["PYSPARK_PYTHON"] = sys.executable
        yield {
            "spark.master": cluster.url,
            "spark.pyspark.python": sys.executable,
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.cores.max": str(executors),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
        }
    finally:
        cluster.stop()


def timed(fn: Any, *args: Any) -> tuple[int, float]:
    started = time.perf_counter()
    count = fn(*args)
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--flush-size", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=None, help="default: 1, or --executors")
    parser.add_argument("--executors", type=int, default=0, help="0: local[4]")
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--warmup", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    n, flush = args.records, args.flush_size
    tasks = args.tasks or max(1, args.executors)
    with tempfile.TemporaryDirectory() as tmp, spark_master(args.executors, Path(tmp)) as conf:
        session = build_session({**conf, "spark.app.name": "bench-spark-sink"})
        hand_s, conn_s = run(session, Path(tmp), n, flush, tasks, args)
        session.stop()
    load = os.getloadavg()
    where = (f"{args.executors} executor(s) of 1 core (standalone cluster)" if args.executors
             else "local[4]")  # fmt: skip
    line = (
        f"| Kafka→Parquet, JsonConverter, flush.size={flush}, tasks={tasks}, {where}, "
        f"{'warm' if args.warmup else 'cold (first write starts Python workers)'} | {n:,} | "
        f"{n / hand_s:,.0f} | {n / conn_s:,.0f} | {hand_s / conn_s:.2f} |"
    )
    print("| case | records | hand-written rec/s | SparkSinkConnector rec/s | ratio |")
    print(line)
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.no_append:
        return
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = RESULTS.read_text(encoding="utf-8")
    if SECTION not in text:
        text += (
            f"\n{SECTION}\n\n`bench/bench_spark_sink.py`: SparkSinkConnector (Spark's Parquet "
            "writer, commit log) vs the hand-written confluent-kafka + pyarrow loop of "
            "bench_storage_sink.py, same run. Ratio = hand-written time / connector time.\n"
        )
    text += (
        f"\nRun {now}, Python {platform.python_version()}, {where} on the shared 2-core "
        f"machine (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end):\n\n"
        f"| case | records | hand-written rec/s | SparkSinkConnector rec/s | "
        f"ratio |\n|---|---|---|---|---|\n{line}\n"
    )
    RESULTS.write_text(text, encoding="utf-8")


def run(session: Any, tmp: Path, n: int, flush: int, tasks: int, args: Any) -> tuple[float, float]:
    """The hand-written loop's and the connector's times over the same records."""
    with EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        produce(servers, "orders", n)
        topic = "orders"
        if tasks > 1:  # one partition per task, else one task reads everything
            topic = "orders-spread"
            produce_spread(servers, topic, n, tasks)
        worker = {"bootstrap.servers": servers, "key.converter": JSON, "value.converter": JSON}
        engine = SparkEngine(worker, MemoryOffsetStore(), session=session)
        try:
            if args.warmup:
                # Spark's Python workers start (and import sparkcat) on the first write of a
                # session: a one-off ~10-15 s that a long-running worker pays once.
                produce_spread(servers, "warmup", 1000 * tasks, tasks)
                connector(engine, "warmup", tmp / "warm", 1000 * tasks, flush, tasks)
            hand_dir = tmp / "hand"
            hand_dir.mkdir()
            hc, hand_s = timed(hand_written, servers, "orders", hand_dir, n, flush)
            cc, conn_s = timed(connector, engine, topic, tmp / "spark", n, flush, tasks)
        finally:
            engine.close()
    rows = ds.dataset(tmp / "spark", format="parquet").count_rows()
    assert cc == n and rows == n and hc == n - n % flush, (cc, rows, hc)
    return hand_s, conn_s


if __name__ == "__main__":
    main()
