"""Many connectors of mixed kinds on one `sparkcat standalone` worker: does every pipeline
keep flowing when FileStream, JDBC and Spark-native connectors share it?

    python bench/bench_many_mix.py [--pipelines 20,50] [--rounds 2] [--timeout 240]

For each N in ``--pipelines``: one worker (the default configuration, StringConverter) on an
embedded broker and the local PostgreSQL runs N pipelines of two connectors each, a topic
each, the kinds taking turns:

- ``file``: FileStreamSource -> FileStreamSink;
- ``jdbc``: JdbcSourceConnector (``mode=incrementing`` on a table of its own,
  ``poll.interval.ms=1000``) -> FileStreamSink;
- ``spark-sink``: FileStreamSource -> SparkSinkConnector (``spark.format=json`` into a
  directory of its own);
- ``spark-source``: SparkSourceConnector (``spark.format=text`` on a directory of its own,
  new files) -> FileStreamSink.

Measured as in ``bench_many_connectors.py``: seconds until REST says every connector and task
RUNNING; the cores the worker's process tree burns over 30 s with nothing arriving; then
rounds: one new record put into every pipeline's source at once (a line, a row or a file),
the time until it is at the pipeline's end, per kind and overall; the worker's PSS.
The JDBC pipelines' delay includes their poll interval (up to 1 s).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from bench_many_connectors import _quantile
from bench_pipeline import (
    EXTRA_WORKER_PROPS,
    cpu_between,
    start_worker,
    stop,
    tree_cpu,
    tree_pss_mb,
    wait_running,
    write_connector,
)

from sparkcat.kafka.broker import EmbeddedBroker

DB = "sparkcat_many_mix_bench"
KINDS = ("file", "jdbc", "spark-sink", "spark-source")


class Pipeline:
    """One pipeline: its connector files, how a tagged record goes in, how to see it out."""

    def __init__(self, kind: str, files: list[Path], put: Callable[[str], None],
                 seen: Callable[[str], bool]) -> None:  # fmt: skip
        self.kind, self.files, self.put, self.seen = kind, files, put, seen


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    return data[-4096:].decode(errors="replace")


def _in_dir(directory: Path, tag: str) -> bool:
    """Whether a committed file of the sink's directory holds ``tag`` (staged files of a write
    under way come and go: not counted, and may vanish while read)."""
    for root, dirs, files in os.walk(directory):  # errors (a vanished directory) are skipped
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for name in files:
            if not name.endswith(".json"):
                continue
            try:
                if tag in (Path(root) / name).read_text(errors="replace"):
                    return True
            except FileNotFoundError:
                continue
    return False


def database() -> tuple[sa.Engine, str]:
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                             isolation_level="AUTOCOMMIT")  # fmt: skip
    with admin.connect() as conn:
        conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {DB}")
        conn.exec_driver_sql(f"CREATE DATABASE {DB}")
    admin.dispose()
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB}")
    return engine, f"jdbc:postgresql://127.0.0.1:5432/{DB}?user=postgres"


def _file_sink(work: Path, name: str, topic: str) -> tuple[Path, Path]:
    out = work / f"{name}.out"
    return out, write_connector(work, f"{name}-sink", **{
        "connector.class": "FileStreamSink", "file": str(out), "topics": topic})  # fmt: skip


def _file_source(work: Path, name: str, topic: str) -> tuple[Path, Path]:
    src = work / f"{name}.txt"
    src.write_text("")
    return src, write_connector(work, f"{name}-src", **{
        "connector.class": "FileStreamSource", "file": str(src), "topic": topic})  # fmt: skip


def _append(path: Path) -> Callable[[str], None]:
    def put(tag: str) -> None:
        with path.open("a") as f:
            f.write(f"{tag}\n")

    return put


def pipeline(work: Path, i: int, engine: sa.Engine, url: str) -> Pipeline:
    kind, name, topic = KINDS[i % len(KINDS)], f"m{i}", f"mix-{i}-{time.time_ns()}"
    if kind == "file":
        (src, a), (out, b) = _file_source(work, name, topic), _file_sink(work, name, topic)
        return Pipeline(kind, [a, b], _append(src), lambda tag: tag in _tail(out))
    if kind == "jdbc":
        table = f"t{i}"
        with engine.begin() as conn:
            conn.exec_driver_sql(f"CREATE TABLE {table} (id SERIAL PRIMARY KEY, tag TEXT)")
        src = write_connector(work, f"{name}-src", **{
            "connector.class": "JdbcSourceConnector", "connection.url": url,
            "mode": "incrementing", "incrementing.column.name": "id",
            "table.whitelist": table, "topic.prefix": f"{topic}-",
            "poll.interval.ms": "1000"})  # fmt: skip
        out, b = _file_sink(work, name, f"{topic}-{table}")

        def insert(tag: str) -> None:
            with engine.begin() as conn:
                conn.exec_driver_sql(f"INSERT INTO {table} (tag) VALUES (%s)", (tag,))

        return Pipeline(kind, [src, b], insert, lambda tag: tag in _tail(out))
    if kind == "spark-sink":
        src, a = _file_source(work, name, topic)
        target = work / f"{name}-lake"
        b = write_connector(work, f"{name}-sink", **{
            "connector.class": "SparkSinkConnector", "topics": topic, "spark.format": "json",
            "spark.path": str(target)})  # fmt: skip
        return Pipeline(kind, [a, b], _append(src), lambda tag: _in_dir(target, tag))
    landing = work / f"{name}-landing"
    landing.mkdir()
    a = write_connector(work, f"{name}-src", **{
        "connector.class": "SparkSourceConnector", "topic": topic, "spark.format": "text",
        "spark.path": str(landing), "poll.interval.ms": "1000"})  # fmt: skip
    out, b = _file_sink(work, name, topic)

    def drop_file(tag: str) -> None:
        staged = work / f"{name}-{tag}.tmp"
        staged.write_text(f"{tag}\n")
        staged.rename(landing / f"{tag}.txt")  # whole files only: a reader never sees half

    return Pipeline(kind, [a, b], drop_file, lambda tag: tag in _tail(out))


def one_round(pipes: list[Pipeline], tag: str, timeout: float) -> dict[int, float]:
    started = time.monotonic()
    for p in pipes:
        p.put(tag)
    delays: dict[int, float] = {}
    while len(delays) < len(pipes) and time.monotonic() - started < timeout:
        for i, p in enumerate(pipes):
            if i not in delays and p.seen(tag):
                delays[i] = time.monotonic() - started
        time.sleep(0.1)
    return delays


def _stats(values: list[float]) -> str:
    if not values:
        return "-"
    return (f"{statistics.median(values):.1f} / {_quantile(values, 0.9):.1f} / "
            f"{_quantile(values, 0.99):.1f} / {max(values):.1f}")  # fmt: skip


def measure(servers: str, n: int, rounds: int, timeout: float, work: Path) -> list[str]:
    engine, url = database()
    pipes = [pipeline(work, i, engine, url) for i in range(n)]
    files = [f for p in pipes for f in p.files]
    port = 21000 + (os.getpid() % 1000)
    started = time.monotonic()
    worker = start_worker(work, servers, port, files, f"worker-mix-{n}.log")
    try:
        wait_running(port, [f.stem for f in files], 900)
        start_s = time.monotonic() - started
        time.sleep(20)
        cpu0, t0 = tree_cpu(worker.pid), time.monotonic()
        time.sleep(30)
        idle = cpu_between(cpu0, tree_cpu(worker.pid)) / (time.monotonic() - t0)
        by_kind: dict[str, list[float]] = collections.defaultdict(list)
        delivered = 0
        for r in range(rounds):
            got = one_round(pipes, f"round{r}x{time.time_ns()}", timeout)
            delivered += len(got)
            for i, d in got.items():
                by_kind[pipes[i].kind].append(d)
            print(f"  {n} pipelines, round {r}: {len(got)} of {n} delivered", file=sys.stderr)
        pss, procs, _ = tree_pss_mb(worker.pid)
    finally:
        stop(worker)
        engine.dispose()
    every = [d for values in by_kind.values() for d in values]
    rows = [f"{2 * n} | {start_s:.0f} | {idle:.2f} | all | {delivered} of {n * rounds} | "
            f"{_stats(every)} | {pss:.0f} ({procs})"]  # fmt: skip
    for kind in KINDS:
        count = sum(1 for p in pipes if p.kind == kind)
        rows.append(f"{2 * n} | | | {kind} | {len(by_kind[kind])} of {count * rounds} | "
                    f"{_stats(by_kind[kind])} | ")  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", default="20,50", help="comma-separated counts")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=240.0, help="per round, seconds")
    parser.add_argument("--worker-prop", action="append", default=[], help="key=value")
    args = parser.parse_args()
    EXTRA_WORKER_PROPS.extend(args.worker_prop)
    rows: list[str] = []
    with EmbeddedBroker() as broker:
        for n in (int(p) for p in args.pipelines.split(",")):
            with tempfile.TemporaryDirectory(prefix="bench-mix-") as tmp:
                rows += measure(broker.bootstrap_servers, n, args.rounds, args.timeout, Path(tmp))
            print("\n".join(rows[-5:]), file=sys.stderr)
    print("connectors | start s | idle cores | pipelines | delivered | median / p90 / p99 / "
          "max s | worker PSS MB (processes)")  # fmt: skip
    print("\n".join(rows))


if __name__ == "__main__":
    main()
