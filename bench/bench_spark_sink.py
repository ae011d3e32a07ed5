"""Kafka -> Parquet: SparkSinkConnector (Spark's own Parquet writer) vs a hand-written loop.

    python bench/bench_spark_sink.py [--records N] [--flush-size N] [--tasks N] [--no-warmup]
                                     [--no-append]

One topic of N JsonConverter envelopes (schemas.enable=true; a struct of id/name/region/
amount, ~250 B), as bench_storage_sink.py produces them. Connector: a SparkEngine on a
``local[4]`` SparkSession (built before the clock starts), one SparkSinkConnector with
``spark.path`` (snappy Parquet, the commit log, ``flush.size`` records per write), timed from
``start_connector`` until the engine reported all N records written and committed.
Hand-written: bench_storage_sink.py's loop (confluent-kafka ``consume``, ``orjson.loads`` of
each payload into column lists, ``pyarrow.parquet.write_table`` every ``flush.size``
records). Same run, same broker; files on a local temporary directory.

Prints records/s and the ratio (hand-written time / connector time); appends to
``bench/RESULTS.md`` (section ``## Spark-native sink``) unless ``--no-append``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

sys.path.insert(0, str(Path(__file__).parent))
from bench_storage_sink import hand_written, produce

from sparkcat.connectors.spark import SparkSinkConnector
from sparkcat.engine import SparkEngine
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


def timed(fn: Any, *args: Any) -> tuple[int, float]:
    started = time.perf_counter()
    count = fn(*args)
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--flush-size", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--warmup", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    n, flush = args.records, args.flush_size
    session = build_session({"spark.master": "local[4]", "spark.app.name": "bench-spark-sink"})
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        produce(servers, "orders", n)
        worker = {"bootstrap.servers": servers, "key.converter": JSON, "value.converter": JSON}
        engine = SparkEngine(worker, MemoryOffsetStore(), session=session, state_dir=tmp)
        try:
            if args.warmup:
                # Spark's Python workers start (and import sparkcat) on the first write of a
                # session: a one-off ~10-15 s that a long-running worker pays once.
                produce(servers, "warmup", 1000)
                connector(engine, "warmup", Path(tmp) / "warm", 1000, flush, args.tasks)
            hand_dir = Path(tmp) / "hand"
            hand_dir.mkdir()
            hc, hand_s = timed(hand_written, servers, "orders", hand_dir, n, flush)
            cc, conn_s = timed(connector, engine, "orders", Path(tmp) / "spark", n, flush,
                               args.tasks)  # fmt: skip
        finally:
            engine.close()
        rows = ds.dataset(Path(tmp) / "spark", format="parquet").count_rows()
        assert cc == n and rows == n and hc == n - n % flush, (cc, rows, hc)
    session.stop()
    line = (
        f"| Kafka→Parquet, JsonConverter, flush.size={flush}, tasks={args.tasks}, "
        f"{'warm' if args.warmup else 'cold (first write starts Python workers)'} | {n:,} | "
        f"{n / hand_s:,.0f} | {n / conn_s:,.0f} | {hand_s / conn_s:.2f} |"
    )
    print("| case | records | hand-written rec/s | SparkSinkConnector rec/s | ratio |")
    print(line)
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
        f"\nRun {now}, Python {platform.python_version()}, local[4] on the shared 2-core "
        f"machine:\n\n| case | records | hand-written rec/s | SparkSinkConnector rec/s | "
        f"ratio |\n|---|---|---|---|---|\n{line}\n"
    )
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
