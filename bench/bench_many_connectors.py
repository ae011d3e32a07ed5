"""Many connectors on one `sparkcat standalone` worker: does every pipeline keep flowing?

    python bench/bench_many_connectors.py [--pairs 10,25] [--rounds 3] [--timeout 240]
                                          [--worker-prop spark.master=local[4,2]]

For each N in ``--pairs``: one worker (the default configuration, StringConverter) on an
embedded broker runs N FileStreamSource -> FileStreamSink pairs (2N connectors, a topic
each). Measured, as a user would see it:
- start: seconds from starting the worker until REST says every connector and task RUNNING;
- idle CPU: cores the worker's whole process tree burns over 30 s with nothing arriving,
  after 60 s of settling;
- rounds: one new line appended to every source file at once; per pair, the time until it is
  in the pair's sink file (polled every 50 ms), up to ``--timeout`` s. Reported: lines
  delivered, and the median, p90, p99 and maximum of those delays;
- PSS of the worker's process tree after the rounds (MB).
Kafka Connect runs each task on a thread of its own, so its answer is "all of them, at once";
the table says how far sparkcat is from that.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_pipeline import (
    EXTRA_WORKER_PROPS,
    cpu_between,
    file_pair,
    start_worker,
    stop,
    tree_cpu,
    tree_pss_mb,
    wait_running,
)

from sparkcat.kafka.broker import EmbeddedBroker


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _last_line(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    return data.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode()


def one_round(sources: list[Path], outs: list[Path], tag: str, timeout: float) -> list[float]:
    """Append line ``tag`` to every source; the delays of the pairs that delivered it."""
    started = time.monotonic()
    for src in sources:
        with src.open("a") as f:
            f.write(f"{tag}\n")
    delays: dict[int, float] = {}
    while len(delays) < len(outs) and time.monotonic() - started < timeout:
        for i, out in enumerate(outs):
            if i not in delays and _last_line(out) == tag:
                delays[i] = time.monotonic() - started
        time.sleep(0.05)
    return list(delays.values())


def measure(servers: str, pairs: int, rounds: int, timeout: float, work: Path) -> dict[str, float]:
    port = 20000 + (os.getpid() % 1000)
    sources = [work / f"p{i}.txt" for i in range(pairs)]
    files: list[Path] = []
    for i, src in enumerate(sources):
        src.write_text("")
        files += file_pair(work, f"p{i}", src, f"many-{pairs}-{i}-{time.time_ns()}")
    outs = [work / f"p{i}.out" for i in range(pairs)]
    started = time.monotonic()
    worker = start_worker(work, servers, port, files, f"worker-{pairs}.log")
    try:
        wait_running(port, [f.stem for f in files], 600)
        start_s = time.monotonic() - started
        time.sleep(60)
        cpu0, t0 = tree_cpu(worker.pid), time.monotonic()
        time.sleep(30)
        idle = cpu_between(cpu0, tree_cpu(worker.pid)) / (time.monotonic() - t0)
        delays: list[float] = []
        delivered = 0
        for r in range(rounds):
            got = one_round(sources, outs, f"round-{r}-{time.time_ns()}", timeout)
            delivered += len(got)
            delays += got
            print(f"  {pairs} pairs, round {r}: {len(got)} of {pairs} delivered", file=sys.stderr)
        pss, procs, _ = tree_pss_mb(worker.pid)
    finally:
        stop(worker)
    return {
        "connectors": 2 * pairs,
        "start_s": start_s,
        "idle_cores": idle,
        "delivered": delivered,
        "expected": pairs * rounds,
        "median_s": statistics.median(delays) if delays else float("nan"),
        "p90_s": _quantile(delays, 0.9) if delays else float("nan"),
        "p99_s": _quantile(delays, 0.99) if delays else float("nan"),
        "max_s": max(delays) if delays else float("nan"),
        "pss_mb": pss,
        "processes": procs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="10,25", help="comma-separated pair counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=240.0, help="per round, seconds")
    parser.add_argument("--worker-prop", action="append", default=[], help="key=value")
    args = parser.parse_args()
    EXTRA_WORKER_PROPS.extend(args.worker_prop)
    header = ("connectors | start s | idle cores | delivered | append->sink median / p90 / p99 "
              "/ max s | worker PSS MB (processes)")  # fmt: skip
    rows = []
    broker = EmbeddedBroker().start()
    try:
        for pairs in (int(p) for p in args.pairs.split(",")):
            with tempfile.TemporaryDirectory(prefix="bench-many-") as tmp:
                r = measure(broker.bootstrap_servers, pairs, args.rounds, args.timeout, Path(tmp))
            rows.append(
                f"{r['connectors']:.0f} | {r['start_s']:.0f} | {r['idle_cores']:.2f} | "
                f"{r['delivered']:.0f} of {r['expected']:.0f} | {r['median_s']:.1f} / "
                f"{r['p90_s']:.1f} / {r['p99_s']:.1f} / {r['max_s']:.1f} | "
                f"{r['pss_mb']:.0f} ({r['processes']:.0f})"
            )
            print(rows[-1], file=sys.stderr)
    finally:
        broker.stop()
    print(header)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
