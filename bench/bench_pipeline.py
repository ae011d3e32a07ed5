"""File -> Kafka -> file through a real `sparkcat standalone` worker, beside a hand-written loop.

    python bench/bench_pipeline.py [--records 1000000] [--runs 3] [--idle-connectors 10]
                                   [--skip-idle] [--running-pairs 5]

Measures, on one embedded broker (tansu) shared by both runs, whose consumers both wait at most
100 ms for data per fetch (what `sparkcat standalone` sets for its own embedded broker: tansu
answers a waiting fetch only as its wait runs out):
- the baseline: a hand-written confluent-kafka producer process (file -> topic) and consumer
  process (topic -> file) running at once, tuned as the field tunes them;
- sparkcat with StringConverter and with JsonConverter: `sparkcat standalone` as a user runs
  it, FileStreamSource + FileStreamSink; the lines are appended once both connectors run, and
  the clock stops when the sink file holds them all. Reported as records/s and as the ratio
  to the baseline of the same round;
- CPU-seconds per 1M records: the baseline's two processes (start to exit), and the worker's
  whole process tree over the data window (driver JVM, Python runners and workers; the broker
  is in neither);
- with ``--runs N`` the rounds alternate (baseline, string, json, baseline, ...) and the medians
  are printed last: ratios are taken within a round, so a machine whose speed drifts between
  rounds moves them less;
- time from starting the worker to the first record in the sink file;
- peak RSS of the worker's whole process tree (driver JVM + every Python process);
- the CPU an idle worker with N idle connectors burns (cores, over a 30 s window);
- with ``--running-pairs N``: the peak PSS of a worker running N FileStreamSource ->
  FileStreamSink pairs (2N connectors) while lines keep arriving (``--runs 0`` for this and
  the idle figure alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

from sparkcat.kafka.broker import EmbeddedBroker

ROOT = Path(__file__).resolve().parent.parent
SPARKCAT = [str(Path(sys.executable).parent / "sparkcat")]
# The same CLI with every lease's result logged (connector_query's debug lines).
SPARKCAT_LEASE_LOG = [
    sys.executable,
    "-c",
    "import logging, sys; "
    "logging.getLogger('sparkcat.engine.connector_query').setLevel(logging.DEBUG); "
    "from sparkcat.cli import main; sys.exit(main(sys.argv[1:]))",
]
CLK_TCK = os.sysconf("SC_CLK_TCK")
CONVERTERS = {
    "json": "org.apache.kafka.connect.json.JsonConverter",
    "string": "org.apache.kafka.connect.storage.StringConverter",
}


def make_lines(path: Path, records: int) -> None:
    with path.open("w") as f:
        for i in range(records):
            f.write(f"{i:09d} the quick brown fox jumps over the lazy dog {i % 997:05d}\n")


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def wait_lines(path: Path, expected: int, timeout: float) -> float:
    """When ``path`` holds ``expected`` lines. Counts only the bytes appended since the last
    look: re-reading a growing 60 MB file every 50 ms took ~0.4 of a core from the worker
    under test on two cores."""
    deadline = time.monotonic() + timeout
    seen, position = 0, 0
    while time.monotonic() < deadline:
        if path.exists():
            with path.open("rb") as f:
                f.seek(position)
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    seen += chunk.count(b"\n")
                    position += len(chunk)
        if seen >= expected:
            return time.monotonic()
        time.sleep(0.05)
    raise SystemExit(f"timed out: {path} has {count_lines(path)} of {expected} lines")


# -- process tree accounting (/proc) ------------------------------------------------------


def tree_pids(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def tree_rss_mb(root: int) -> float:
    total = 0
    for pid in tree_pids(root):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def tree_cpu(root: int) -> dict[int, tuple[float, float]]:
    """``{pid: (own CPU-s, CPU-s of the children it reaped)}`` of the process tree."""
    out = {}
    for pid in tree_pids(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (
            (int(fields[11]) + int(fields[12])) / CLK_TCK,  # utime + stime
            (int(fields[13]) + int(fields[14])) / CLK_TCK,  # cutime + cstime
        )
    return out


def cpu_between(
    before: dict[int, tuple[float, float]], after: dict[int, tuple[float, float]]
) -> float:
    """CPU-s the tree used between two :func:`tree_cpu` snapshots: what each live process
    used since (all of it for a new one), plus what the children a live process reaped meanwhile
    used (Spark's short-lived Python processes). A process that ended unreaped (a parent that
    ignores SIGCHLD) takes its share with it: never negative, at worst an underestimate."""
    total = 0.0
    for pid, (own, reaped) in after.items():
        own0, reaped0 = before.get(pid, (0.0, 0.0))
        total += max(own - own0, 0.0) + max(reaped - reaped0, 0.0)
    return total


def process_label(pid: int) -> str:
    """A short name of what a process of the worker tree is (JVM, a Spark Python module)."""
    argv = [
        a.decode(errors="replace")
        for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if a
    ]
    if argv and argv[0].endswith("java"):
        return "JVM"
    modules = [a for a in argv if a.startswith("pyspark.")]
    if "-m" in argv and modules:
        return modules[0] + (" (fork)" if "daemon" in modules[0] else "")
    return " ".join(Path(a).name for a in argv[:2])[:40]


def tree_pss_mb(root: int) -> tuple[float, int, dict[str, tuple[int, float]]]:
    """PSS of the whole process tree (shared pages split among their users), its size, and
    ``{label: (processes, MB)}``."""
    total, procs, by_label = 0, 0, {}
    for pid in tree_pids(root):
        try:
            label = process_label(pid)
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    kb = int(line.split()[1])
                    break
            else:
                continue
        except OSError:
            continue
        total += kb
        procs += 1
        n, mb = by_label.get(label, (0, 0.0))
        by_label[label] = (n + 1, mb + kb / 1024)
    return total / 1024, procs, by_label


def tree_cpu_by_process(roots: list[int]) -> dict[int, tuple[str, float]]:
    """CPU-seconds so far of every process under ``roots``, with a short label."""
    out: dict[int, tuple[str, float]] = {}
    for root in roots:
        for pid in tree_pids(root):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            words = [a.decode(errors="replace") for a in argv if a]
            label = " ".join(Path(w).name if i == 0 else w for i, w in enumerate(words[:3]))
            out[pid] = (label[:60], (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return out


def cpu_breakdown(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]], wall: float
) -> str:
    rows = []
    for pid, (label, cpu) in after.items():
        used = cpu - before.get(pid, (label, 0.0))[1]
        if used >= 0.05:
            rows.append((used, f"  {used / wall:5.2f} cores  {pid:>7}  {label}"))
    total = sum(u for u, _ in rows)
    return "\n".join(
        [f"  {total / wall:5.2f} cores in all over {wall:.1f} s"]
        + [r for _, r in sorted(rows, reverse=True)]
    )


class PeakRss(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.peak = max(self.peak, tree_rss_mb(self.pid))


# -- the baseline -------------------------------------------------------------------------

PRODUCER = """
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "linger.ms": 5, "batch.num.messages": 10000,
              "queue.buffering.max.messages": 500000, "acks": "all"})
n = 0
with open(sys.argv[3], "rb") as f:
    for line in f:
        p.produce(sys.argv[2], line.rstrip(b"\\n"))
        n += 1
        if n % 5000 == 0:
            p.poll(0)
p.flush()
"""

CONSUMER = """
import sys
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "bench-baseline",
              "enable.auto.commit": False, "fetch.queue.backoff.ms": 10,
              "fetch.wait.max.ms": 100})
c.assign([TopicPartition(sys.argv[2], 0, OFFSET_BEGINNING)])
want, got = int(sys.argv[4]), 0
with open(sys.argv[3], "wb") as out:
    while got < want:
        msgs = c.consume(num_messages=10000, timeout=1.0)
        out.write(b"".join(m.value() + b"\\n" for m in msgs if m.error() is None))
        got += len(msgs)
        out.flush()
c.close()
"""


def baseline(servers: str, source: Path, records: int, work: Path) -> tuple[float, float]:
    """``(records/s, CPU-s per 1M records)`` of the hand-written pair."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-baseline-{time.time_ns()}"
    # Keep the client referenced until the result is in: a collected AdminClient destroys
    # its handle and fails the pending request with _DESTROY.
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1)])[topic].result()
    sink = work / "baseline.sink.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    consumer = subprocess.Popen(
        [sys.executable, "-c", CONSUMER, servers, topic, str(sink), str(records)]
    )
    subprocess.run([sys.executable, "-c", PRODUCER, servers, topic, str(source)], check=True)
    consumer.wait()
    elapsed = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Both processes, start to exit (the broker not included): compare with the worker tree's
    # "cores in all" x window of --lease-log, minus its broker line.
    print(f"baseline CPU: {cpu:.2f} s for {records:,} records", flush=True)
    return records / elapsed, cpu * 1e6 / records


# -- sparkcat -----------------------------------------------------------------------------


EXTRA_WORKER_PROPS: list[str] = []  # --worker-prop: experiments with worker settings


def write_worker(work: Path, servers: str, converter: str, port: int) -> Path:
    worker = work / f"worker-{converter}.properties"
    conv = CONVERTERS[converter]
    worker.write_text(
        textwrap.dedent(f"""\
        bootstrap.servers={servers}
        key.converter={conv}
        value.converter={conv}
        offset.storage.file.filename={work}/offsets-{converter}-{time.time_ns()}
        offset.flush.interval.ms=10000
        listeners=http://127.0.0.1:{port}
        consumer.fetch.max.wait.ms=100
        """)
        + "".join(f"{prop}\n" for prop in EXTRA_WORKER_PROPS)
    )
    return worker


def write_connector(work: Path, name: str, **config: str) -> Path:
    path = work / f"{name}.json"
    path.write_text(json.dumps({"name": name, "config": config}))
    return path


def connector_state(port: int, name: str) -> str:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/connectors/{name}/status", timeout=2
        ) as r:
            doc = json.load(r)
    except OSError:
        return "NONE"
    tasks = [t["state"] for t in doc.get("tasks", [])]
    return "RUNNING" if tasks and all(s == "RUNNING" for s in tasks) else doc["connector"]["state"]


def wait_running(port: int, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(connector_state(port, n) == "RUNNING" for n in names):
            return
        time.sleep(0.2)
    raise SystemExit(f"connectors {names} not RUNNING after {timeout} s")


def stop(worker: subprocess.Popen[bytes]) -> None:
    worker.terminate()
    try:
        worker.wait(60)
    except subprocess.TimeoutExpired:
        worker.kill()


def sparkcat_run(
    servers: str,
    lines: Path,
    records: int,
    converter: str,
    work: Path,
    lease_log: bool = False,
    broker_pid: int | None = None,
) -> dict[str, float]:
    port = 18000 + (os.getpid() % 1000)
    source, sink = work / f"src-{converter}.txt", work / f"sink-{converter}.txt"
    source.write_text("warm-up\n")
    sink.unlink(missing_ok=True)  # a later round must not count an earlier round's lines
    topic = f"bench-{converter}-{time.time_ns()}"
    conns = [
        write_connector(
            work,
            "bench-source",
            **{
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": topic,
                "batch.size": "20000",
                "topic.creation.default.partitions": "1",
                "topic.creation.default.replication.factor": "1",
            },
        ),
        write_connector(
            work,
            "bench-sink",
            **{"connector.class": "FileStreamSink", "file": str(sink), "topics": topic},
        ),
    ]
    started = time.monotonic()
    worker = subprocess.Popen(
        [
            *(SPARKCAT_LEASE_LOG if lease_log else SPARKCAT),
            "standalone",
            str(write_worker(work, servers, converter, port)),
            *map(str, conns),
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(work / f"worker-{converter}.log", "wb"),  # noqa: SIM115 (worker-owned)
    )
    peak = PeakRss(worker.pid)
    peak.start()
    try:
        first = wait_lines(sink, 1, 180) - started
        wait_running(port, ["bench-source", "bench-sink"], 60)
        roots = [worker.pid] + ([broker_pid] if broker_pid else [])
        cpu0 = tree_cpu_by_process(roots) if lease_log else {}
        tree0 = tree_cpu(worker.pid)
        t0 = time.monotonic()
        with source.open("ab") as out, lines.open("rb") as src:
            out.write(src.read())
        print(f"[{time.strftime('%H:%M:%S')}] {records} lines appended", file=sys.stderr)
        done = wait_lines(sink, records + 1, 600)
        used = cpu_between(tree0, tree_cpu(worker.pid))
        if lease_log:
            print(cpu_breakdown(cpu0, tree_cpu_by_process(roots), done - t0), file=sys.stderr)
        return {
            "records_per_s": records / (done - t0),
            "first_record_s": first,
            "peak_rss_mb": peak.peak,
            "cpu_per_1m": used * 1e6 / records,
        }
    finally:
        peak.done.set()
        stop(worker)


def file_pair(work: Path, name: str, source: Path, topic: str) -> list[Path]:
    """Connector files of a FileStreamSource ``<name>-src`` (``source`` -> ``topic``) and a
    FileStreamSink ``<name>-sink`` (``topic`` -> ``work/<name>.out``)."""
    return [
        write_connector(
            work,
            f"{name}-src",
            **{
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": topic,
            },
        ),
        write_connector(
            work,
            f"{name}-sink",
            **{
                "connector.class": "FileStreamSink",
                "file": str(work / f"{name}.out"),
                "topics": topic,
            },
        ),
    ]


def start_worker(
    work: Path, servers: str, port: int, files: list[Path], log: str
) -> subprocess.Popen[bytes]:
    """``sparkcat standalone`` (StringConverter) with these connector files, logging to
    ``work/log``."""
    return subprocess.Popen(
        [
            *SPARKCAT,
            "standalone",
            str(write_worker(work, servers, "string", port)),
            *map(str, files),
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(work / log, "wb"),  # the worker owns its log file
    )


def idle_cpu(servers: str, connectors: int, work: Path, window: float = 30.0) -> float:
    port = 19000 + (os.getpid() % 1000)
    files: list[Path] = []
    for i in range(0, connectors, 2):  # a source and a sink of its topic, nothing arriving
        files += file_pair(work, f"idle-{i}", work / f"idle-{i}.txt", f"idle-{i}")
    files = files[:connectors]
    worker = start_worker(work, servers, port, files, "worker-idle.log")
    try:
        time.sleep(60)  # startup, first leases, and idle leases growing to their full length
        cpu0, t0 = tree_cpu(worker.pid), time.monotonic()
        time.sleep(window)
        return cpu_between(cpu0, tree_cpu(worker.pid)) / (time.monotonic() - t0)
    finally:
        stop(worker)


def running_pss(servers: str, pairs: int, work: Path, window: float = 30.0) -> tuple[float, int]:
    """Peak PSS (MB) and process count of a worker running ``pairs`` FileStreamSource ->
    FileStreamSink pairs (2 x pairs connectors) while each source gets ~1,000 lines/s."""
    port = 17000 + (os.getpid() % 1000)
    files: list[Path] = []
    sources = [work / f"run-{i}.txt" for i in range(pairs)]
    for i, src in enumerate(sources):
        src.write_text("")
        files += file_pair(work, f"run-{i}", src, f"run-{i}")
    worker = start_worker(work, servers, port, files, "worker-running.log")
    done = threading.Event()

    def feed() -> None:
        n = 0
        while not done.wait(0.1):
            for src in sources:
                with src.open("a") as out:
                    out.writelines(f"{n:09d} {j} the quick brown fox\n" for j in range(100))
            n += 1

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        wait_running(port, [f.stem for f in files], 240)
        first = wait_lines(work / f"run-{pairs - 1}.out", 1, 240)
        time.sleep(max(0.0, 30 - (time.monotonic() - first)))  # every query past its start
        peak, procs, parts = 0.0, 0, {}
        deadline = time.monotonic() + window
        while time.monotonic() < deadline:
            pss, n, by_label = tree_pss_mb(worker.pid)
            if pss > peak:
                peak, procs, parts = pss, n, by_label
            time.sleep(1.0)
        for label, (n, mb) in sorted(parts.items(), key=lambda kv: -kv[1][1]):
            print(f"  {mb:7.0f} MB  {n:3d} x {label}", file=sys.stderr)
        lagging = [i for i in range(pairs) if count_lines(work / f"run-{i}.out") == 0]
        if lagging:
            raise SystemExit(f"sinks {lagging} wrote nothing: the connectors were not running")
        return peak, procs
    finally:
        done.set()
        stop(worker)


def one_round(
    args: argparse.Namespace, broker: EmbeddedBroker, lines: Path, work: Path
) -> dict[str, float]:
    """One baseline run, then one worker run per converter; figures by name."""
    out: dict[str, float] = {}
    base, base_cpu = baseline(broker.bootstrap_servers, lines, args.records, work)
    out["baseline"], out["baseline cpu"] = base, base_cpu
    print(f"baseline (hand-written confluent-kafka loops): {base:,.0f} records/s", flush=True)
    for converter in args.converters.split(","):
        r = sparkcat_run(
            broker.bootstrap_servers,
            lines,
            args.records,
            converter,
            work,
            args.lease_log,
            broker._process.pid if broker._process else None,  # diagnostics only
        )
        out[converter] = r["records_per_s"]
        out[f"{converter} ratio"] = r["records_per_s"] / base
        out[f"{converter} cpu"] = r["cpu_per_1m"]
        out[f"{converter} cpu ratio"] = r["cpu_per_1m"] / base_cpu
        print(
            f"sparkcat {converter:6s}: {r['records_per_s']:,.0f} records/s "
            f"(ratio {r['records_per_s'] / base:.2f}), "
            f"worker CPU {r['cpu_per_1m']:.2f} s per 1M ({r['cpu_per_1m'] / base_cpu:.2f}x the "
            f"baseline's {base_cpu:.2f}), first record {r['first_record_s']:.1f} s after start, "
            f"peak RSS {r['peak_rss_mb']:,.0f} MB",
            flush=True,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds; medians last")
    parser.add_argument("--idle-connectors", type=int, default=10)
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument(
        "--running-pairs",
        type=int,
        default=0,
        help="also measure the PSS of a worker running this many source->sink pairs",
    )
    parser.add_argument("--keep-logs", type=Path, help="copy the workers' logs into this directory")
    parser.add_argument(
        "--lease-log", action="store_true", help="log every lease result in the worker logs"
    )
    parser.add_argument("--converters", default="string,json", help="comma-separated")
    parser.add_argument(
        "--worker-prop", action="append", default=[], help="key=value added to worker configs"
    )
    args = parser.parse_args()
    EXTRA_WORKER_PROPS.extend(args.worker_prop)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="sparkcat-bench-") as tmp, EmbeddedBroker() as broker:
        work = Path(tmp)
        lines = work / "lines.txt"
        make_lines(lines, args.records)
        rounds = []
        for i in range(args.runs):
            print(f"-- round {i + 1} of {args.runs}, load average {os.getloadavg()}", flush=True)
            rounds.append(one_round(args, broker, lines, work))
            if args.keep_logs:
                args.keep_logs.mkdir(parents=True, exist_ok=True)
                for log_file in work.glob("worker-*.log"):
                    shutil.copy(log_file, args.keep_logs / f"{i + 1}-{log_file.name}")
        if rounds:
            print(f"-- median of {args.runs} round(s), load average {os.getloadavg()}")
            for name in rounds[0]:
                print(f"{name:>18}: {statistics.median(r[name] for r in rounds):,.2f}")
        if args.running_pairs:
            pss, procs = running_pss(broker.bootstrap_servers, args.running_pairs, work)
            print(
                f"worker running {2 * args.running_pairs} connectors: peak PSS {pss:,.0f} MB "
                f"over {procs} processes, load average {os.getloadavg()}",
                flush=True,
            )
        if not args.skip_idle:
            cores = idle_cpu(broker.bootstrap_servers, args.idle_connectors, work)
            print(f"idle worker with {args.idle_connectors} idle connectors: {cores:.3f} cores")


if __name__ == "__main__":
    main()
