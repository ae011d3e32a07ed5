"""Soak: two distributed workers under a steady load, with restarts, for half an hour.

    python bench/bench_soak.py [--minutes 30] [--rate 5000] [--no-append]

Two ``sparkcat distributed`` workers (local Spark each, exactly-once source support enabled)
on an embedded broker carry ``--rate`` records/s in all:
- an exactly-once 2-task sequence source (``tests/integration/plugins/sparkcat_eos_plugins.py``,
  half the rate), each task writing its own partition;
- a FileStreamSource -> FileStreamSink pair, its source file fed the other half by this
  script (100 ms chunks).
Every minute one connector is restarted (``POST /connectors/<c>/restart?includeTasks=true``,
in turn); every 10 minutes worker 0 is restarted (SIGTERM, then started again; worker 1 runs
throughout, so its memory trend covers the last 20 minutes). ``--restart-every`` and
``--worker-restart-every`` make the faults denser.
Every 10 s the resident memory of each worker's process tree (driver, JVM, Python workers) is
sampled. At the end the feed stops, and once everything arrived:
- the sequence topic, read through the committed reader, must hold every record exactly once
  and in order per partition;
- the sink file must hold every fed line (at least once: a restarted sink may repeat a lease);
- each worker's RSS growth over the last 20 minutes of the load (from 5 minutes after its
  last (re)start at the soonest), with the span.
Appends to ``bench/RESULTS.md`` (``## Soak``).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import uuid
from pathlib import Path
from typing import Any

from bench_exactly_once import Worker, _append, _until, create_topic
from bench_pipeline import tree_rss_mb
from confluent_kafka import Consumer, TopicPartition

from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.tasks.exactly_once.committed_reader import (
    CommittedRecord,
    TopicView,
    read_topic,
)

SECTION = "## Soak"
DEFAULT_LEASES = {"max.batch.ms": "5000"}


class Feeder(threading.Thread):
    """Appends ``rate`` numbered lines per second to ``path`` in 100 ms chunks."""

    def __init__(self, path: Path, rate: int) -> None:
        super().__init__(daemon=True)
        self.path, self.rate, self.fed = path, rate, 0
        self.done = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        with self.path.open("a") as out:
            while not self.done.wait(0.1):
                due = int((time.monotonic() - started) * self.rate)
                out.writelines(f"line-{n:010d}\n" for n in range(self.fed, due))
                out.flush()
                self.fed = due


def _rest_any(workers: list[Worker], method: str, path: str) -> Any:
    """``method path`` on the first running worker that answers (a worker restarted a
    moment ago may not listen yet)."""
    failure: Exception | None = None
    for w in workers:
        if w.proc is None or w.proc.poll() is not None:
            continue
        try:
            return w.rest(method, path)
        except urllib.error.URLError as exc:
            failure = exc
    raise RuntimeError(f"no worker answered {method} {path}: {failure}")


def _rejoined(worker: Worker) -> None:
    """Wait until a restarted worker answers its REST API (it is back in the group then); a
    worker that exits instead fails the run with its log's tail."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if worker.proc is None or worker.proc.poll() is not None:
            tail = worker.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"worker {worker.worker_id} exited after its restart:\n{tail}")
        try:
            worker.rest("GET", "/connectors")
            return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"worker {worker.worker_id} did not answer after its restart")


def _sample(workers: list[Worker], rss: dict[int, list[tuple[float, float]]]) -> None:
    for i, w in enumerate(workers):
        if w.proc is not None and w.proc.poll() is None:
            rss[i].append((time.monotonic(), tree_rss_mb(w.proc.pid)))


def _progress(servers: str, topic: str, feeder: Feeder, sink: Path) -> str:
    """One line of progress: the sequence partitions' end offsets (records plus transaction
    markers: cheap, unlike reading the topic), lines fed and lines in the sink file."""
    # read_uncommitted: the end offset, not the last stable offset (the embedded broker
    # answers a committed reader's ListOffsets with 0 at times while a transaction is open).
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "soak-progress",
                         "isolation.level": "read_uncommitted"})  # fmt: skip
    try:
        ends = [consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1] for p in (0, 1)]
    finally:
        consumer.close()
    lines = sink.stat().st_size // 16 if sink.exists() else 0  # "line-%010d\n"
    return f"sequence end offsets {ends[0]:,}/{ends[1]:,}, fed {feeder.fed:,}, sink {lines:,}"


def _connectors(topic: str, source: Path, sink: Path, rate: int, seconds: int) -> dict[str, dict]:
    per_task = rate // 4  # records/s of each of the two sequence tasks
    return {
        "seq": {
            "connector.class": "sparkcat_eos_plugins:SequenceSourceConnector", "tasks.max": "2",
            "topic": topic, "records.total": str(per_task * seconds),
            "batch.size": str(max(per_task // 10, 1)), "poll.sleep.ms": "100",
            "records.per.second": str(per_task), "rate.epoch.ms": str(int(time.time() * 1000)),
            "partition.per.task": "true", "exactly.once.support": "required",
        },
        "file-src": {"connector.class": "FileStreamSource", "file": str(source),
                     "topic": f"{topic}-file"},
        "file-sink": {"connector.class": "FileStreamSink", "file": str(sink),
                      "topics": f"{topic}-file"},
    }  # fmt: skip


def _differences(view: TopicView, partition: int, count: int) -> str:
    """What differs between the partition's committed values and ``<p>:0 .. <p>:count-1``
    ("" if nothing): duplicates and gaps, with the offsets and producers of the first few."""
    records = [r for r in view.records if r.partition == partition]
    values = [r.value for r in records]
    expected = [f"{partition}:{n}".encode() for n in range(count)]
    if values == expected:
        return ""
    seen: dict[bytes | None, list[CommittedRecord]] = collections.defaultdict(list)
    for r in records:
        seen[r.value].append(r)
    twice = [copies for copies in seen.values() if len(copies) > 1]
    missing = [v for v in expected if v not in seen]
    out = [f"partition {partition}: {len(values):,} committed of {count:,} expected, "
           f"{len(twice):,} values more than once, {len(missing):,} missing, "
           f"{sum(r.partition == partition for r in view.aborted):,} aborted and "
           f"{sum(r.partition == partition for r in view.open):,} open records, "
           f"markers: {view.commit_markers:,} commit / {view.abort_markers:,} abort"]  # fmt: skip
    for copies in twice[:5]:
        where = ", ".join(f"offset {r.offset} producer {r.producer_id}" for r in copies)
        out.append(f"  {copies[0].value!r}: {where}")
    if missing:
        out.append(f"  missing from {missing[0]!r} to {missing[-1]!r}")
    first = next(i for i, (a, b) in enumerate(zip(values, expected, strict=False)) if a != b)
    out.append(f"  first difference at index {first:,}: {values[first]!r}")
    return "\n".join(out)


def soak(
    minutes: float, rate: int, append: bool, restart_every: float = 60, worker_every: int = 10
) -> None:
    seconds = int(minutes * 60)
    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory() as tmp:
        work, servers = Path(tmp), broker.bootstrap_servers
        prefix = f"soak-{uuid.uuid4().hex[:6]}"
        topic = f"{prefix}-seq"
        create_topic(servers, topic, 2)
        create_topic(servers, f"{topic}-file", 1)
        source, sink = work / "in.txt", work / "out.txt"
        source.write_text("")
        # Leases of the default length (the kill bench's 1 s leases fail over faster but
        # pay a lease's start-up five times as often).
        workers = [Worker(work, servers, prefix, i, **DEFAULT_LEASES).start() for i in range(2)]
        started_at = [time.monotonic()] * 2
        rss: dict[int, list[tuple[float, float]]] = collections.defaultdict(list)
        events: list[str] = []
        feeder = Feeder(source, rate // 2)
        try:
            for w in workers:
                _until(lambda w=w: w.rest("GET", "/connectors") == [], 300, "a worker")
            connectors = _connectors(topic, source, sink, rate, seconds)
            for name, config in connectors.items():
                body = {"name": name, "config": config}
                _until(lambda b=body: workers[0].rest("POST", "/connectors", b), 120, name)
            feeder.start()
            t0 = time.monotonic()
            names = list(connectors)
            rounds = int(seconds // restart_every)
            for n in range(1, rounds + 1):
                while time.monotonic() < t0 + n * restart_every:
                    _sample(workers, rss)
                    time.sleep(min(10.0, restart_every / 2))
                at = f"{n * restart_every / 60:g} min"
                name = names[n % len(names)]
                _rest_any(workers, "POST", f"/connectors/{name}/restart?includeTasks=true")
                events.append(f"{at}: restarted connector {name}")
                if n % worker_every == 0 and n < rounds:
                    i = 0  # worker 1 runs throughout: its memory trend spans the whole run
                    workers[i].stop()
                    workers[i].start()
                    started_at[i] = time.monotonic()
                    _rejoined(workers[i])
                    events.append(f"{at}: restarted worker {i}")
                progress = _progress(servers, topic, feeder, sink)
                print(f"{events[-1]}; {progress}", file=sys.stderr, flush=True)
            feeder.done.set()
            feeder.join()
            expected_seq = 2 * (rate // 4) * seconds
            _until(lambda: len(read_topic(servers, topic).records) >= expected_seq, 900,
                   "every sequence record")  # fmt: skip
            wanted = {f"line-{n:010d}" for n in range(feeder.fed)}
            _until(lambda: wanted <= set(sink.read_text().split()), 900, "every fed line")
            view = read_topic(servers, topic)
            problems = [_differences(view, p, expected_seq // 2) for p in (0, 1)]
            if any(problems):
                kept = Path(tempfile.mkdtemp(prefix="soak-logs-"))
                for log in work.glob("worker-*.log"):
                    shutil.copy(log, kept)
                raise AssertionError("\n".join(filter(None, problems)) + f"\nlogs: {kept}")
            counts = collections.Counter(sink.read_text().split())
            duplicated = sum(c - 1 for c in counts.values() if c > 1)
        finally:
            feeder.done.set()
            for w in workers:
                w.stop()
    lines = [
        f"{minutes:g} min at {rate:,} records/s ({expected_seq:,} exactly-once sequence records, "
        f"{feeder.fed:,} file lines), {sum('connector' in e for e in events)} connector "
        "restarts, "
        f"{sum('worker' in e for e in events)} worker restarts: every sequence record exactly "
        f"once and in order per partition; every file line delivered ({duplicated:,} "
        "delivered twice by restarted sink leases)."
    ]
    for i in range(2):
        # The last 20 minutes of the load, from 5 minutes after the worker's last (re)start
        # at the soonest (samples are taken while the load runs).
        ended = max((t for t, _ in rss[i]), default=0.0)
        since = [(t, mb) for t, mb in rss[i] if t >= max(started_at[i] + 300, ended - 1200)]
        if len(since) < 2:
            lines.append(f"worker {i}: too few samples after its last start for a trend "
                         f"({len(rss[i])} in all, {len(since)} in the window)")  # fmt: skip
            continue
        first = statistics.median(mb for _, mb in since[:3])
        last = statistics.median(mb for _, mb in since[-3:])
        span = (since[-1][0] - since[0][0]) / 60
        lines.append(f"worker {i}: RSS {first:,.0f} -> {last:,.0f} MB over {span:.0f} min "
                     f"({(last - first) / first:+.1%})")  # fmt: skip
    print("\n".join(lines))
    if append:
        _append(f"soak, {minutes:g} min, 2 distributed workers", lines, SECTION, "bench_soak.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=int, default=5000, help="records/s in all")
    parser.add_argument("--restart-every", type=float, default=60,
                        help="seconds between connector restarts")  # fmt: skip
    parser.add_argument("--worker-restart-every", type=int, default=10,
                        help="connector restarts between worker restarts")  # fmt: skip
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    soak(args.minutes, args.rate, not args.no_append, args.restart_every,
         args.worker_restart_every)  # fmt: skip


if __name__ == "__main__":
    main()
