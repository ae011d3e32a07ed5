"""Exactly-once source delivery (KIP-618): its cost, and delivery through ``kill -9``.

    python bench/bench_exactly_once.py [--records 500000] [--no-append]
    python bench/bench_exactly_once.py --kills 3 --records 200000 [--no-append]

Throughput (default): one FileStreamSource lease (``run_lease``, no Spark) copies a file of
``--records`` lines (~100 B, StringConverter) to a fresh topic on the embedded broker, with
exactly-once off, with ``transaction.boundary=poll`` (one transaction per poll batch of 2,000
lines) and with ``interval`` (1 s); best of two alternating rounds; ratios against off.
Delivery is checked through the committed reader for every exactly-once run.

Kills (``--kills K``): two ``sparkcat distributed`` workers (local Spark each) with
``exactly.once.source.support=enabled`` run a 2-task sequence source
(``tests/integration/plugins/sparkcat_eos_plugins.py``) of ``--records`` records; K times,
once more records have committed, the worker running task 0 is killed with ``kill -9`` (its
process group: driver, JVM, Python workers) and started again. Then every record must be in
the topic exactly once and in order per partition, read through the committed reader, and the
offsets topic must agree. Appends to ``bench/RESULTS.md`` (``## Exactly-once source``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "tests" / "integration" / "plugins"
STRING = "org.apache.kafka.connect.storage.StringConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## Exactly-once source"
SPARKCAT = Path(sys.executable).parent / "sparkcat"


def create_topic(servers: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()


# -- throughput -------------------------------------------------------------------------------
def lease(servers: str, path: Path, n: int, mode: str) -> tuple[float, str]:
    topic = f"eos-bench-{uuid.uuid4().hex[:8]}"
    create_topic(servers, topic)
    worker = {"bootstrap.servers": servers, "key.converter": STRING, "value.converter": STRING}
    connector: dict[str, str] = {}
    if mode != "off":
        worker.update({"group.id": "bench", "exactly.once.source.support": "enabled",
                       "offset.storage.topic": f"{topic}-offsets",
                       "offset.storage.partitions": "5"})  # fmt: skip
        connector = {"transaction.boundary": mode, "transaction.boundary.interval.ms": "1000"}
    spec = LeaseSpec(
        connector=topic, task=0, generation=1, kind="source",
        task_config={"task.class": "org.apache.kafka.connect.file.FileStreamSourceTask",
                     "file": str(path), "topic": topic},
        connector_config=connector, worker_config=worker, max_ms=600_000, max_records=n,
        control=None,
    )  # fmt: skip
    started = time.perf_counter()
    result = run_lease(spec)
    elapsed = time.perf_counter() - started
    assert result.trace is None, result.trace
    assert result.records == n, result.records
    check = ""
    if mode != "off":
        view = read_topic(servers, topic)
        assert len(view.records) == n and not view.aborted and not view.open
        check = f"{view.commit_markers} transactions"
    return n / elapsed, check


def throughput(records: int, append: bool) -> None:
    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory() as tmp:
        servers = broker.bootstrap_servers
        path = Path(tmp) / "in.txt"
        pad = "x" * 84
        path.write_text("".join(f"line-{i:09d} {pad}\n" for i in range(records)))
        best: dict[str, float] = {}
        notes: dict[str, str] = {}
        for _ in range(2):
            for mode in ("off", "poll", "interval"):
                rate, note = lease(servers, path, records, mode)
                best[mode] = max(best.get(mode, 0.0), rate)
                notes[mode] = note
                print(f"{mode:9s} {rate:12,.0f} rec/s {note}", flush=True)
        client_cache.close_all()
    rows = [
        f"| {mode} | {best[mode]:,.0f} | {best[mode] / best['off']:.2f} | {notes[mode]} |"
        for mode in ("off", "poll", "interval")
    ]
    table = ["| exactly-once | records/s | / off | per run |", "|---|---:|---:|---|", *rows]
    print("\n".join(table))
    if append:
        _append(f"{records:,} lines of ~100 B, FileStreamSource lease, StringConverter", table)


# -- kills ------------------------------------------------------------------------------------
class Worker:
    def __init__(
        self, directory: Path, servers: str, prefix: str, index: int, **overrides: str
    ) -> None:
        self.port = _free_port()
        self.log = directory / f"worker-{index}.log"
        self.props = directory / f"worker-{index}.properties"
        settings = {
            "bootstrap.servers": servers, "group.id": f"{prefix}-group",
            "config.storage.topic": f"{prefix}-configs",
            "offset.storage.topic": f"{prefix}-offsets",
            "status.storage.topic": f"{prefix}-status", "offset.storage.partitions": "5",
            "status.storage.partitions": "2", "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
            "listeners": f"http://127.0.0.1:{self.port}", "rest.advertised.host.name": "127.0.0.1",
            "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "1000", "key.converter": STRING,
            "value.converter": STRING, "plugin.path": str(PLUGINS),
            "exactly.once.source.support": "enabled", "spark.master": "local[2,2]",
            "spark.driver.memory": "512m", "max.batch.ms": "1000",
        }  # fmt: skip
        settings.update(overrides)
        self.props.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Worker:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "distributed", str(self.props)], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
        return self

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def rest(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")


def _free_port() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.support.ports import free_port

    return free_port()


def _until(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except OSError:
            value = None
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"timed out waiting for {what}")


def kills(records: int, count: int, append: bool) -> None:
    per_task = records // 2
    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory() as tmp:
        servers = broker.bootstrap_servers
        prefix = f"eosk-{uuid.uuid4().hex[:6]}"
        topic = f"{prefix}-data"
        create_topic(servers, topic, 2)
        workers = [Worker(Path(tmp), servers, prefix, i).start() for i in range(2)]
        try:
            for w in workers:
                _until(lambda w=w: w.rest("GET", "/connectors") == [], 300, "a worker")
            config = {
                "connector.class": "sparkcat_eos_plugins:SequenceSourceConnector",
                "tasks.max": "2", "topic": topic, "records.total": str(per_task),
                "batch.size": "100", "poll.sleep.ms": "20", "partition.per.task": "true",
                "exactly.once.support": "required",
            }  # fmt: skip
            body = {"name": "seq", "config": config}
            _until(lambda: workers[0].rest("POST", "/connectors", body), 120, "the connector")
            started = time.monotonic()
            for kill in range(count):
                target = records * (kill + 1) // (count + 2)
                _until(lambda t=target: len(read_topic(servers, topic).records) >= t, 600,
                       f"{target} committed records")  # fmt: skip

                def owner() -> str | None:
                    status = workers[0 if workers[0].proc.poll() is None else 1].rest(  # type: ignore[union-attr]
                        "GET", "/connectors/seq/status"
                    )
                    task = next((t for t in status["tasks"] if t["id"] == 0), None)
                    return task["worker_id"] if task and task["state"] == "RUNNING" else None

                victim = next(w for w in workers if w.worker_id == _until(owner, 300, "task 0"))
                victim.kill()
                print(f"kill -9 #{kill + 1} of {victim.worker_id} at >= {target} records",
                      flush=True)  # fmt: skip
                victim.start()
            _until(lambda: len(read_topic(servers, topic).records) >= records, 900, "all records")
            elapsed = time.monotonic() - started
            view = read_topic(servers, topic)
            for partition in (0, 1):
                expected = [f"{partition}:{n}".encode() for n in range(per_task)]
                assert view.values(partition) == expected, f"partition {partition} differs"
            offsets: dict[bytes, Any] = {}
            for record in read_topic(servers, f"{prefix}-offsets").records:
                offsets[record.key or b""] = record.value and orjson.loads(record.value)
            for task in ("0", "1"):
                assert offsets[orjson.dumps(["seq", {"task": task}])] == {"n": per_task}
        finally:
            for w in workers:
                w.stop()
    line = (f"{records:,} records, {count} x kill -9: every record exactly once and in order "
            f"per partition, offsets topic agrees; {len(view.aborted):,} aborted records left "
            f"by the killed workers; {elapsed:.0f} s from create to the last record")  # fmt: skip
    print(line)
    if append:
        _append(f"kill -9 x {count}, 2 distributed workers", [line])


def _append(
    title: str, lines: list[str], section: str = SECTION, script: str = "bench_exactly_once.py"
) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    block = [f"### {stamp} — {title}, Python {platform.python_version()}, load {load}", "",
             *lines, ""]  # fmt: skip
    text = RESULTS.read_text(encoding="utf-8")
    if section not in text:
        text = (
            text.rstrip("\n") + f"\n\n{section}\n\n`python bench/{script}` (see its docstring).\n"
        )
    RESULTS.write_text(text.rstrip("\n") + "\n\n" + "\n".join(block), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--kills", type=int, default=0)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    if args.kills:
        kills(args.records, args.kills, not args.no_append)
    else:
        throughput(args.records, not args.no_append)


if __name__ == "__main__":
    main()
