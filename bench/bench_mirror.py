"""MirrorMaker 2: records/s mirrored A -> B, and replication lag at a steady rate.

    python bench/bench_mirror.py [--records 500000] [--partitions 2] [--rate 5000]
                                 [--lag-seconds 30] [--no-append]

Two embedded brokers, A and B. ``--records`` records (key ~8 B, value 100 B, one header,
the producer's timestamp) are produced to a topic of ``--partitions`` partitions on A before
any clock starts. Then, in the same run, each copies them to a fresh topic on B, timed from
its start until a counting consumer on B has seen every record:

* hand-written: one confluent-kafka consumer (``assign``, ``consume(10000)``,
  ``fetch.queue.backoff.ms=10``) and one producer (``linger.ms=5``, ``produce`` with key,
  value, headers, timestamp and partition, ``poll(0)`` per batch), flushed at the end;
* leases: one MirrorSourceTask lease in this process (``run_lease``, no Spark) each: the
  shipped task (``SourceRecordBatch`` columns from ``poll``, offset syncs in
  ``commit_batch``); the same task with ``commit_batch`` left as ``SourceTask``'s (no
  delivery reports, no offset syncs); and the per-record path the task took before
  (``SourceRecord`` objects from ``poll``, offset syncs in ``commit_record``);
* connector: MirrorSourceConnector (``tasks.max`` = partitions) on a SparkEngine over a
  ``local[4]`` SparkSession built before the clock, ByteArrayConverter as in dedicated mode:
  first on the new engine (its clock includes starting the worker's task hosts, the Spark
  job whose Python workers run leases), then a second such connector (alias ``W``, to a
  topic of its own) on the same engine, whose task hosts are then up, as on a running
  worker.

Lag: with the connector running, a producer writes ``--rate`` records/s to A for
``--lag-seconds``, each value carrying its send time; a consumer on B reports, per record,
arrival time minus send time (p50, p99, max).

Prints the table and the load average; appends to ``bench/RESULTS.md`` (section
``## MirrorMaker 2``) unless ``--no-append``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import struct
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.api.source import SourceTask
from sparkcat.connectors.mirror import MirrorSourceConnector, MirrorSourceTask
from sparkcat.engine import SparkEngine
from sparkcat.engine.session import build_session
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## MirrorMaker 2"
_STAMP = struct.Struct(">d")


class NoCommitBatchTask(MirrorSourceTask):
    """The shipped task without its ``commit_batch``: the runtime's no-callback path."""

    commit_batch = SourceTask.commit_batch


class PerRecordTask(MirrorSourceTask):
    """The per-record path: ``SourceRecord`` objects from ``poll`` and offset syncs from
    ``commit_record`` (a delivery callback per record), as the task worked before."""

    commit_batch = SourceTask.commit_batch

    def poll(self) -> Any:
        batch = super().poll()
        return None if batch is None else batch.records()

    def commit_record(self, record: Any, metadata: Any) -> None:
        writer = self._writer
        if writer is None or metadata is None or metadata.offset < 0:
            return
        partition, offset = record.source_partition, record.source_offset
        writer.maybe_queue((partition["topic"], partition["partition"]), offset["offset"],
                           metadata.offset)  # fmt: skip
        if writer.pending:
            self._fire(writer)


def create(servers: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(servers: str, topic: str, n: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    value = b"x" * 100
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value, b"k%d" % i, i % partitions,
                                 headers=[("h", b"1")])  # fmt: skip
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def consumer(servers: str, name: str) -> Consumer:
    return Consumer({"bootstrap.servers": servers, "group.id": name, "enable.auto.commit": False,
                     "fetch.queue.backoff.ms": 10, "auto.offset.reset": "earliest",
                     "fetch.wait.max.ms": 10})  # fmt: skip


class Counter(threading.Thread):
    """Counts the records of ``topic`` on B; ``done`` once there are ``n``."""

    def __init__(self, servers: str, topic: str, partitions: int, n: int) -> None:
        super().__init__(daemon=True)
        self.servers, self.topic, self.partitions, self.n = servers, topic, partitions, n
        self.done = threading.Event()
        self.stop = threading.Event()
        self.lags: list[float] = []
        self.count = 0
        self.first_at = 0.0  # perf_counter when the first record was seen

    def run(self) -> None:
        reader = consumer(self.servers, "counter")
        while self.topic not in reader.list_topics(timeout=10).topics:
            time.sleep(0.1)
        reader.assign([TopicPartition(self.topic, p, 0) for p in range(self.partitions)])
        while not self.stop.is_set() and self.count < self.n:
            batch = reader.consume(10_000, timeout=0.1)
            now = time.time()
            if batch and not self.first_at:
                self.first_at = time.perf_counter()
            for message in batch:
                if message.error() is None:
                    self.count += 1
                    value = message.value()
                    if value is not None and value.startswith(b"T"):
                        self.lags.append(now - _STAMP.unpack_from(value, 1)[0])
        reader.close()
        self.done.set()


def hand_written(a: str, b: str, topic: str, target: str, parts: int, n: int) -> int:
    source = consumer(a, "hand")
    source.assign([TopicPartition(topic, p, 0) for p in range(parts)])
    producer = Producer({"bootstrap.servers": b, "linger.ms": 5,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    copied = 0
    while copied < n:
        for m in source.consume(10_000, timeout=0.5):
            if m.error() is not None:
                continue
            while True:
                try:
                    producer.produce(target, m.value(), m.key(), m.partition() or 0,
                                     timestamp=m.timestamp()[1], headers=m.headers())  # fmt: skip
                    break
                except BufferError:
                    producer.poll(0.05)
            copied += 1
        producer.poll(0)
    assert producer.flush(120) == 0
    source.close()
    return copied


def mirror_props(a: str, b: str, topic: str, parts: int, extra: dict[str, str]) -> dict[str, str]:
    return {**extra,
        "name": f"mm2-{uuid.uuid4().hex[:6]}",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A", "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a, "target.cluster.bootstrap.servers": b,
        "topics": topic, "tasks.max": str(parts), "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1", "refresh.topics.enabled": "false",
        "key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES,
    }  # fmt: skip


def leased(a: str, b: str, topic: str, n: int, task: type, extra: dict[str, str]) -> int:
    """One lease of ``task`` copying ``topic`` (to ``<random alias>.<topic>``) in this
    process."""
    props = mirror_props(a, b, topic, 1, extra)
    props.update({"source.cluster.alias": "L" + uuid.uuid4().hex[:4]})
    connector = MirrorSourceConnector()
    connector.start(props)
    (config,) = connector.task_configs(1)
    connector.stop()
    spec = LeaseSpec(
        connector=props["name"], task=0, generation=1, kind="source",
        task_config={**config, "task.class": f"{task.__module__}:{task.__qualname__}"},
        connector_config={}, worker_config={"bootstrap.servers": b, "key.converter": BYTES,
                                            "value.converter": BYTES, "header.converter": BYTES},
        max_ms=600_000, max_records=n, control=None,
    )  # fmt: skip
    result = run_lease(spec)
    assert result.trace is None, result.trace
    return int(result.records)


def timed_copy(b: str, target: str, parts: int, n: int, copy: Any) -> tuple[float, float]:
    """Seconds from the start of ``copy`` until B has every record, and from the first
    record on B until then."""
    counter = Counter(b, target, parts, n)
    counter.start()
    started = time.perf_counter()
    copy()
    counter.done.wait(600)
    ended = time.perf_counter()
    assert counter.count >= n, f"{target}: {counter.count} of {n}"
    return ended - started, ended - counter.first_at


class Listener:
    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--lag-seconds", type=int, default=30)
    parser.add_argument("--fetch-wait-ms", type=int, default=None,
                        help="source.consumer.fetch.wait.max.ms of the connector (librdkafka's "
                        "default 500 when unset)")  # fmt: skip
    parser.add_argument("--leases-only", action="store_true",
                        help="only the hand-written loop and the two leases (implies "
                        "--no-append)")  # fmt: skip
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    n, parts = args.records, args.partitions
    extra: dict[str, str] = {}
    if args.fetch_wait_ms is not None:
        extra["source.consumer.fetch.wait.max.ms"] = str(args.fetch_wait_ms)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with EmbeddedBroker() as broker_a, EmbeddedBroker() as broker_b:
        a, b = broker_a.bootstrap_servers, broker_b.bootstrap_servers
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        create(a, topic, parts)
        produce(a, topic, n, parts)
        # (label, seconds from the start, seconds from the first record on B or 0)
        rows: list[tuple[str, float, float]] = []
        create(b, "hand", parts)
        rows.append(("hand-written consume -> produce", *timed_copy(
            b, "hand", parts, n, lambda: hand_written(a, b, topic, "hand", parts, n))))  # fmt: skip
        leases = (("lease, columnar + commit_batch (shipped)", MirrorSourceTask),
                  ("lease, columnar, no commit_batch", NoCommitBatchTask),
                  ("lease, per record + commit_record (before)", PerRecordTask))  # fmt: skip
        for label, task in leases:
            rows.append((label, lease_time(a, b, topic, n, task, extra), 0.0))
        if args.leases_only:
            args.no_append = True
            report(rows, [], n, parts, args)
            return
        session = build_session({"spark.master": "local[4]", "spark.app.name": "bench-mirror"})
        engine = SparkEngine({"bootstrap.servers": b, "key.converter": BYTES,
                              "value.converter": BYTES, "header.converter": BYTES},
                             MemoryOffsetStore(), session=session)  # fmt: skip
        connector, plan = connector_plan(mirror_props(a, b, topic, parts, extra))
        rows.append((f"MirrorSourceConnector on a new worker, {parts} task(s), local[4]",
                     *timed_copy(b, f"A.{topic}", parts, n,
                                lambda: engine.start_connector(plan, Listener()))))  # fmt: skip
        # A second connector (alias W) on the same worker: its task hosts are already up.
        warm, warm_plan = connector_plan(
            {**mirror_props(a, b, topic, parts, extra), "source.cluster.alias": "W"}
        )
        start_warm = lambda: engine.start_connector(warm_plan, Listener())  # noqa: E731
        rows.append(("the same on a running worker (task hosts up)",
                     *timed_copy(b, f"W.{topic}", parts, n, start_warm)))  # fmt: skip
        engine.stop_connector(warm_plan.name)
        warm.stop()
        lags = steady_lag(a, b, topic, parts, args.rate, args.lag_seconds)
        engine.stop_connector(plan.name)
        connector.stop()
        engine.close()
        session.stop()
    report(rows, lags, n, parts, args)


def connector_plan(props: dict[str, str]) -> tuple[MirrorSourceConnector, ConnectorPlan]:
    """A started MirrorSourceConnector and the plan of its ``tasks.max`` tasks."""
    connector = MirrorSourceConnector()
    connector.start(props)
    task_class = default_registry().class_name(MirrorSourceTask)
    configs = [
        dict(c, **{"task.class": task_class})
        for c in connector.task_configs(int(props["tasks.max"]))
    ]
    return connector, ConnectorPlan(props["name"], "source", props, configs)


def lease_time(a: str, b: str, topic: str, n: int, task: type, extra: dict[str, str]) -> float:
    started = time.perf_counter()
    copied = leased(a, b, topic, n, task, extra)
    elapsed = time.perf_counter() - started
    assert copied == n, f"{copied} of {n}"
    return elapsed


def steady_lag(a: str, b: str, topic: str, parts: int, rate: int, seconds: int) -> list[float]:
    total = rate * seconds
    counter = Counter(b, f"A.{topic}", parts, total)
    counter.n = 10**12  # counts until stopped
    counter.start()
    producer = Producer({"bootstrap.servers": a, "linger.ms": 1})
    tick = 0.01
    per_tick = max(1, int(rate * tick))
    started = time.perf_counter()
    sent = 0
    while sent < total:
        for _ in range(per_tick):
            producer.produce(topic, b"T" + _STAMP.pack(time.time()) + b"y" * 91, None, sent % parts)
            sent += 1
        producer.poll(0)
        time.sleep(max(0.0, started + sent / rate - time.perf_counter()))
    producer.flush(30)
    deadline = time.monotonic() + 60
    while len(counter.lags) < total and time.monotonic() < deadline:
        time.sleep(0.2)
    counter.stop.set()
    counter.join(10)
    return sorted(counter.lags)


def report(
    rows: list[tuple[str, float, float]], lags: list[float], n: int, parts: int, args: Any
) -> None:
    load = os.getloadavg()
    base, base_warm = rows[0][1], rows[0][2]
    lines = ["| how | records/s | ratio | from the first record on B: records/s | ratio |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for label, s, warm in rows:
        after = f"{n / warm:,.0f} | {base_warm / warm:.2f}" if warm else " | "
        lines.append(f"| {label} | {n / s:,.0f} | {base / s:.2f} | {after} |")
    if lags:
        q = [lags[min(len(lags) - 1, int(len(lags) * f))] * 1000 for f in (0.5, 0.99)]
        lag = (f"Lag at {args.rate:,} records/s for {args.lag_seconds} s ({len(lags):,} records "
               f"seen on B): p50 {q[0]:,.0f} ms, p99 {q[1]:,.0f} ms, "
               f"max {lags[-1] * 1000:,.0f} ms")  # fmt: skip
    else:
        lag = "Lag: no record seen on B"
    text = "\n".join(lines) + "\n\n" + lag + "\n"
    print(text)
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.no_append:
        return
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    results = RESULTS.read_text(encoding="utf-8")
    if SECTION not in results:
        results += (f"\n{SECTION}\n\n`python bench/bench_mirror.py` (see its docstring): "
                    "MirrorSourceTask vs a hand-written consume -> produce loop between two "
                    "embedded brokers, same run; ratio = hand-written time / its "
                    "time.\n")  # fmt: skip
    entry = (
        f"\n### {now} — {n:,} records of 100 B, {parts} partitions, Python "
        f"{platform.python_version()}, 2 cores shared with other work, load {load[0]:.1f}, "
        f"{load[1]:.1f}, {load[2]:.1f}"
        + (
            f", source.consumer.fetch.wait.max.ms={args.fetch_wait_ms}"
            if args.fetch_wait_ms is not None
            else ""
        )
        + f"\n\n{text}"
    )
    # At the end of this section, before the next one.
    start = results.index(SECTION) + len(SECTION)
    end = results.find("\n## ", start)
    end = len(results) if end < 0 else end + 1
    results = results[:end].rstrip("\n") + "\n" + entry + "\n" + results[end:]
    RESULTS.write_text(results.rstrip("\n") + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
