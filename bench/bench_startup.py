"""Where the seconds to the first record go: Kafka's quickstart through `sparkcat standalone`.

    python bench/bench_startup.py [--runs 3] [--worker-prop key=value ...] [--keep DIR]

The driver JVM maps its classes from the archive `make setup` made (`sparkcat jvm-archive`);
`--env XDG_CACHE_HOME=/tmp/empty` measures a start without it.

Each run starts the CLI exactly as a user does (shipped `config/` files, embedded broker, the
connector files' relative `test.txt`/`test.sink.txt` in a fresh working directory holding
"foo\\nbar"), waits until `test.sink.txt` holds both lines, then stops it with SIGTERM. The
milestones, in seconds after the CLI process started:

- from the worker's own log lines: embedded broker up, REST up, Spark session ready, each
  connector's query started, the sink sees its topic;
- from /proc (polled every 20 ms, each process's own start time): the Spark JVM, the first of
  Spark's Python planner processes (data source lookup, creation, read planning), the first
  driver-side Python runner of a streaming source, the task workers' Python daemon and the
  first task worker it forks;
- the first record in the sink file (polled every 20 ms).

The table gives each milestone's median over the runs (and the min-max).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPARKCAT = str(Path(sys.executable).parent / "sparkcat")
CLK_TCK = os.sysconf("SC_CLK_TCK")

LOG_MILESTONES = {
    "embedded broker up": "Started the embedded Kafka broker",
    "REST server up": "REST server listening",
    "Spark session ready": "session ready",
    "source query started": "Connector local-file-source runs as a streaming query",
    "sink query started": "Connector local-file-sink runs as a streaming query",
    "sink sees its topic": "Sink local-file-sink reads",
}
ORDER = [
    "embedded broker up",
    "REST server up",
    "JVM process started",
    "Spark session ready",
    "1st Python planner process",
    "1st driver-side Python runner",
    "source query started",
    "sink query started",
    "task workers' Python daemon started",
    "1st Python task worker forked",
    "sink sees its topic",
    "first record in the sink file",
]
LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def boot_time() -> float:
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return time.time() - uptime


def proc_table() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent pid, start time as epoch seconds, command line)."""
    booted = boot_time()
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        table[int(entry)] = (int(fields[1]), booted + int(fields[19]) / CLK_TCK, cmd)
    return table


def descendants(root: int, table: dict[int, tuple[int, float, str]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def classify(pid: int, table: dict[int, tuple[int, float, str]]) -> str | None:
    ppid, _, cmd = table[pid]
    if "java" in cmd and "SparkSubmit" in cmd:
        return "JVM process started"
    words = cmd.split()
    module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
    if module.startswith("pyspark.sql.worker.") or (
        module == "pyspark.daemon" and "pyspark.sql.worker." in cmd
    ):
        return "1st Python planner process"
    if module in ("pyspark.daemon", "sparkcat.engine.daemon") and words[-1] == "pyspark.worker":
        parent_cmd = table.get(ppid, (0, 0.0, ""))[2]
        if parent_cmd == cmd:
            return "1st Python task worker forked"
        return "task workers' Python daemon started"
    if module == "pyspark.sql.streaming.python_streaming_source_runner":
        return "1st driver-side Python runner"
    return None


def write_configs(work: Path, props: list[str]) -> list[str]:
    for name in ("connect-standalone", "connect-file-source", "connect-file-sink"):
        shutil.copy(ROOT / "config" / f"{name}.properties", work / f"{name}.properties")
    with (work / "connect-standalone.properties").open("a") as f:
        f.write(f"\noffset.storage.file.filename={work / 'connect.offsets'}\n")
        f.write(f"listeners=http://127.0.0.1:{free_port()}\n")
        f.writelines(f"{p}\n" for p in props)
    (work / "test.txt").write_text("foo\nbar\n")
    return [
        str(work / f"{n}.properties")
        for n in ("connect-standalone", "connect-file-source", "connect-file-sink")
    ]


def one_run(
    props: list[str], env: dict[str, str], keep: Path | None, index: int
) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="sparkcat-startup-"))
    args = write_configs(work, props)
    log_path = work / "worker.log"
    seen: dict[str, float] = {}
    processes: dict[int, str] = {}
    with log_path.open("wb") as log:
        started = time.time()
        worker = subprocess.Popen(
            [SPARKCAT, "standalone", *args],
            cwd=work,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    sink = work / "test.sink.txt"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            table = proc_table()
            for pid in descendants(worker.pid, table):
                if pid in table and pid not in processes:
                    processes[pid] = f"{table[pid][1] - started:6.2f} {table[pid][2][:160]}"
                what = classify(pid, table) if pid in table else None
                if what is not None and what not in seen:
                    seen[what] = table[pid][1] - started
            if sink.exists() and sink.read_text().startswith("foo\nbar\n"):
                seen["first record in the sink file"] = time.time() - started
                break
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited:\n{log_path.read_text()}")
            time.sleep(0.02)
        else:
            raise SystemExit("no first record within 300 s")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(120)
    for line in log_path.read_text().splitlines():
        match = LOG_TIME.match(line)
        if not match:
            continue
        at = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() - started
        for name, text in LOG_MILESTONES.items():
            if text in line and name not in seen:
                seen[name] = at
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(log_path, keep / f"worker-{index}.log")
        if (work / "logs" / "spark.log").exists():
            shutil.copy(work / "logs" / "spark.log", keep / f"spark-{index}.log")
        (keep / f"processes-{index}.txt").write_text("\n".join(sorted(processes.values())))
    shutil.rmtree(work, ignore_errors=True)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--worker-prop", action="append", default=[], help="key=value")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the CLI")
    parser.add_argument("--keep", type=Path, help="copy each run's logs into this directory")
    args = parser.parse_args()
    runs = []
    for i in range(args.runs):
        env = dict(e.split("=", 1) for e in args.env)
        runs.append(one_run(args.worker_prop, env, args.keep, i))
        first = runs[-1]["first record in the sink file"]
        print(f"run {i + 1}: first record {first:.2f} s", flush=True)
    print(
        f"\nload average {os.getloadavg()[0]:.1f}; "
        f"worker props {args.worker_prop or 'shipped'}, env {args.env}"
    )
    print("| milestone | median s | min-max s |\n|---|---:|---:|")
    for name in ORDER:
        values = [r[name] for r in runs if name in r]
        if values:
            print(
                f"| {name} | {statistics.median(values):.2f} | "
                f"{min(values):.2f}-{max(values):.2f} |"
            )


if __name__ == "__main__":
    main()
