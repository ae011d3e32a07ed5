"""Scaling on a real Spark standalone cluster: 1 executor vs 2 executors of 1 core each.

    python bench/bench_cluster.py [--window 45]

Starts one embedded broker and a Spark standalone cluster of two 1-core workers on loopback
(``tests/integration/cluster/spark_cluster.py``), then, for ``spark.cores.max`` = 1 and = 2
(one and two executors), a ``sparkcat standalone`` worker with ``spark.master=spark://...``:

- a 4-task source (``GenSourceTask``: CPU-bound, no sleeps) into a 4-partition topic; records/s
  from the topic's high watermarks over ``--window`` seconds once it produces;
- then a 4-task sink (``CountSinkTask``) over the same topic (4 partitions, one per task);
  records/s from group ``connect-<name>``'s committed offsets over the same window.

Reports records/s, records/s per executor and the 2-executor / 1-executor ratio (the baseline
is the 1-executor run of the same session). A lease holds its executor's only core for its
whole length, so with 4 tasks each executor runs one lease at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka.broker import EmbeddedBroker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.integration.cluster.spark_cluster import (  # noqa: E402
    SparkCluster,
    descendants,
    free_port,
)

SPARKCAT = str(Path(sys.executable).parent / "sparkcat")
PLUGINS = ROOT / "bench" / "cluster_plugins"
PARTITIONS = 4
CLK_TCK = os.sysconf("SC_CLK_TCK")


def rest(port: int, method: str, path: str, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method=method,
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def wait_rest(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            rest(port, "GET", "/connectors")
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the worker's REST API did not come up")


def high_watermarks(servers: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "bench-watermarks"})
    try:
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        )
    finally:
        consumer.close()


def committed(servers: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    try:
        parts = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], 10)
        return sum(max(tp.offset, 0) for tp in parts)
    finally:
        consumer.close()


def executor_cpu_s(cluster: SparkCluster) -> list[float]:
    """CPU seconds used so far by each worker's executors (JVM + its Python workers)."""
    per_worker = []
    for index in range(len(cluster.workers)):
        total = 0
        for executor in cluster.executors(index):
            for pid in [executor, *descendants(executor)]:
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
                except OSError:
                    continue
                total += int(fields[11]) + int(fields[12])  # utime + stime
        per_worker.append(total / CLK_TCK)
    return per_worker


def rate_over(
    measure: object, cluster: SparkCluster, window: float, start_timeout: float = 240.0
) -> tuple[float, list[float]]:
    """records/s of ``measure()`` over ``window`` s, starting once it first moved, and the
    executor CPU seconds per worker over the same window."""
    deadline = time.monotonic() + start_timeout
    first = measure()  # type: ignore[operator]
    while measure() == first:  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit("nothing moved")
        time.sleep(0.5)
    cpu0, begin, t0 = executor_cpu_s(cluster), measure(), time.monotonic()  # type: ignore[operator]
    time.sleep(window)
    end, t1, cpu1 = measure(), time.monotonic(), executor_cpu_s(cluster)  # type: ignore[operator]
    return (end - begin) / (t1 - t0), [round(b - a, 1) for a, b in zip(cpu0, cpu1, strict=True)]


def run(cluster: SparkCluster, servers: str, executors: int, window: float, work: Path) -> dict:
    port = free_port()
    props = work / f"worker-{executors}.properties"
    props.write_text(
        "".join(
            f"{k}={v}\n"
            for k, v in {
                "bootstrap.servers": servers,
                "listeners": f"http://127.0.0.1:{port}",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                "offset.storage.file.filename": str(work / f"offsets-{executors}"),
                "plugin.path": str(PLUGINS),
                "max.batch.ms": "5000",
                "spark.master": cluster.url,
                "spark.pyspark.python": sys.executable,
                "spark.executor.memory": "512m",
                "spark.executor.cores": "1",
                "spark.cores.max": str(executors),
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
            }.items()
        )
    )
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    with (work / f"worker-{executors}.log").open("ab") as log:
        worker = subprocess.Popen(
            [SPARKCAT, "standalone", str(props)], stdout=log, stderr=log, cwd=work
        )
    try:
        wait_rest(port, 240)
        rest(port, "PUT", "/connectors/gen/config", {
            "connector.class": "sparkcat_bench_plugins.GenSourceConnector",
            "tasks.max": "4", "topic": topic, "partitions": str(PARTITIONS),
        })  # fmt: skip
        load0 = os.getloadavg()[0]
        source, source_cpu = rate_over(lambda: high_watermarks(servers, topic), cluster, window)
        rest(port, "DELETE", "/connectors/gen")
        rest(port, "PUT", "/connectors/count/config", {
            "connector.class": "sparkcat_bench_plugins.CountSinkConnector",
            "tasks.max": "4", "topics": topic,
        })  # fmt: skip
        sink, sink_cpu = rate_over(
            lambda: committed(servers, "connect-count", topic), cluster, window
        )
        load1 = os.getloadavg()[0]
        rest(port, "DELETE", "/connectors/count")
    finally:
        worker.terminate()
        worker.wait(120)
    return {
        "executors": executors,
        "source": source,
        "sink": sink,
        "source_cpu_s": source_cpu,
        "sink_cpu_s": sink_cpu,
        "window_s": window,
        "load": (load0, load1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=float, default=45.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    cluster = SparkCluster(work / "spark", [], workers=2, cores=1)
    results = []
    try:
        with EmbeddedBroker() as broker:
            cluster.start()
            for executors in (1, 2):
                results.append(run(cluster, broker.bootstrap_servers, executors, args.window, work))
                print(json.dumps(results[-1]), flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    one, two = results
    print("\n| | 1 executor | 2 executors | ratio |\n|---|---:|---:|---:|")
    for kind in ("source", "sink"):
        print(
            f"| {kind} records/s (per executor) | {one[kind]:,.0f} ({one[kind]:,.0f}) | "
            f"{two[kind]:,.0f} ({two[kind] / 2:,.0f}) | **{two[kind] / one[kind]:.2f}x** |"
        )
    for kind in ("source", "sink"):
        cpu1, cpu2 = sum(one[f"{kind}_cpu_s"]), sum(two[f"{kind}_cpu_s"])
        eff1, eff2 = one[kind] * args.window / cpu1, two[kind] * args.window / cpu2
        print(
            f"| {kind} executor CPU-s per worker | {one[f'{kind}_cpu_s']} | "
            f"{two[f'{kind}_cpu_s']} | {cpu2 / cpu1:.2f}x |\n"
            f"| {kind} records per executor CPU-s | {eff1:,.0f} | {eff2:,.0f} | "
            f"{eff2 / eff1:.2f}x |"
        )
    print(f"load average during the runs: {one['load']} / {two['load']}")


if __name__ == "__main__":
    main()
