"""Many connectors on a distributed cluster: every pipeline flows, and a worker's kill -9 moves
its share without losing a line.

    python bench/bench_many_distributed.py [--workers 3] [--pairs 300] [--rounds 2]
                                           [--timeout 180]

``--workers`` ``sparkcat distributed`` workers (default configuration: ``local[16,2]`` each,
StringConverter) on one embedded broker; ``--pairs`` FileStreamSource -> FileStreamSink pairs
(2 x pairs connectors, a topic each) created through the first worker's REST API. Measured:

- create: seconds from the first ``PUT`` until every connector and task is RUNNING;
- rounds: one line appended to every source at once, the time until it is in its sink file
  (median / p90 / p99 / max), up to ``--timeout``;
- the kill: ``kill -9`` of the worker's process group running the most tasks, one more line
  appended to every source right after; the time until every sink has it (the moved tasks
  resume from committed offsets), and the check that every sink holds every line ever
  appended (duplicates allowed: FileStreamSink is at-least-once);
- RSS of each worker's process tree at the end.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
import urllib.error
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_exactly_once import Worker, _until
from bench_many_connectors import _quantile
from bench_pipeline import tree_rss_mb

from sparkcat.kafka.broker import EmbeddedBroker


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _plain(worker: Worker) -> Worker:
    """The bench workers' settings without exactly-once and with Spark's default master."""
    text = worker.props.read_text()
    keep = [
        line
        for line in text.splitlines()
        if not line.startswith(("exactly.once.source.support=", "spark.master=", "max.batch.ms="))
    ]
    worker.props.write_text("\n".join(keep) + "\n")
    return worker


def one_round(sources: list[Path], sinks: list[Path], tag: str, timeout: float) -> list[float]:
    started = time.monotonic()
    for source in sources:
        with source.open("a") as f:
            f.write(f"{tag}\n")
    delays: dict[int, float] = {}
    while len(delays) < len(sinks) and time.monotonic() - started < timeout:
        for i, sink in enumerate(sinks):
            if i not in delays and tag in _lines(sink)[-3:]:
                delays[i] = time.monotonic() - started
        time.sleep(0.1)
    return list(delays.values())


def summary(label: str, delays: list[float], expected: int) -> str:
    if not delays:
        return f"{label}: 0 of {expected} delivered"
    return (
        f"{label}: {len(delays)} of {expected} delivered, median {statistics.median(delays):.1f}"
        f" / p90 {_quantile(delays, 0.9):.1f} / p99 {_quantile(delays, 0.99):.1f} / max "
        f"{max(delays):.1f} s"
    )


def put_config(worker: Worker, name: str, config: dict[str, str]) -> None:
    """``PUT /connectors/<name>/config``, again while the group rebalances (Kafka's 409)."""
    deadline = time.monotonic() + 600
    while True:
        try:
            worker.rest("PUT", f"/connectors/{name}/config", config)
            return
        except urllib.error.HTTPError as exc:
            if exc.code != 409 or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def all_running(worker: Worker, names: list[str]) -> bool:
    status = worker.rest("GET", "/connectors?expand=status")
    if set(status) != set(names):
        return False
    for entry in status.values():
        s = entry["status"]
        if s["connector"]["state"] != "RUNNING" or not s["tasks"]:
            return False
        if any(t["state"] != "RUNNING" for t in s["tasks"]):
            return False
    return True


def task_owners(worker: Worker) -> collections.Counter[str]:
    status = worker.rest("GET", "/connectors?expand=status")
    return collections.Counter(
        t["worker_id"] for entry in status.values() for t in entry["status"]["tasks"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory(prefix="bench-dist-") as tmp:
        work = Path(tmp)
        prefix = f"many-{uuid.uuid4().hex[:6]}"
        workers = [
            _plain(Worker(work, broker.bootstrap_servers, prefix, i)).start()
            for i in range(args.workers)
        ]
        try:
            for w in workers:
                _until(lambda w=w: w.rest("GET", "/connectors") == [], 180, "REST up")
            sources = [work / f"in-{i}.txt" for i in range(args.pairs)]
            sinks = [work / f"out-{i}.txt" for i in range(args.pairs)]
            for source in sources:
                source.write_text("")
            names: list[str] = []
            configs: list[tuple[str, dict[str, str]]] = []
            for i, (source, sink) in enumerate(zip(sources, sinks, strict=True)):
                topic = f"{prefix}-{i}"
                configs.append(
                    (
                        f"p{i}-src",
                        {
                            "connector.class": "FileStreamSource",
                            "file": str(source),
                            "topic": topic,
                        },
                    )
                )
                configs.append((f"p{i}-sink", {"connector.class": "FileStreamSink",
                                               "file": str(sink), "topics": topic}))  # fmt: skip
            names = [name for name, _ in configs]
            started = time.monotonic()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda c: put_config(workers[0], *c), configs))
            _until(lambda: all_running(workers[0], names), 900, "every connector RUNNING")
            create_s = time.monotonic() - started
            print(f"{len(names)} connectors RUNNING {create_s:.0f} s after the first PUT; "
                  f"tasks per worker {sorted(task_owners(workers[0]).values())}",
                  flush=True)  # fmt: skip
            appended: list[str] = []
            for r in range(args.rounds):
                tag = f"round-{r}"
                delays = one_round(sources, sinks, tag, args.timeout)
                appended.append(tag)
                print(summary(tag, delays, args.pairs), flush=True)
            owners = task_owners(workers[0])
            victim = next(w for w in workers if w.worker_id == owners.most_common(1)[0][0])
            print(f"kill -9 of {victim.worker_id} ({owners[victim.worker_id]} tasks)", flush=True)
            victim.kill()
            killed = time.monotonic()
            delays = one_round(sources, sinks, "after-kill", args.timeout * 2)
            appended.append("after-kill")
            print(summary("after the kill", delays, args.pairs), flush=True)
            survivor = next(w for w in workers if w is not victim)
            _until(lambda: all_running(survivor, names), 300, "every connector RUNNING again")
            print(f"every task RUNNING again {time.monotonic() - killed:.0f} s after the kill",
                  flush=True)  # fmt: skip
            missing = [i for i, sink in enumerate(sinks) if not set(appended) <= set(_lines(sink))]
            print(f"sinks missing a line: {len(missing)} of {args.pairs}", flush=True)
            for w in workers:
                if w is not victim and w.proc is not None:
                    print(f"worker {w.worker_id}: RSS {tree_rss_mb(w.proc.pid):,.0f} MB",
                          flush=True)  # fmt: skip
        finally:
            for w in workers:
                w.stop()
    if missing:
        sys.exit(1)


if __name__ == "__main__":
    main()
