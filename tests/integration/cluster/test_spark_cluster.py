"""sparkcat on a real Spark standalone cluster: executors share nothing with the driver.

One Master and two Workers (1 core, 1 GB each; see ``spark_cluster.py``) start once for the
module; the driver is a real ``sparkcat standalone`` worker with ``spark.master=spark://...``.
Executors run in their own mount and PID namespaces in which the driver's directory and
sparkcat's sources are empty: sparkcat and the plugins reach them only as the worker ships
them, and early lease ends only over the network. The executors' Python is the venv's
interpreter (``spark.pyspark.python``: the documented pre-installed environment).

Files the FileStream connectors read and write live in ``data/``, which executors can see
(in Kafka Connect too, a FileStream task reads the file on the machine that runs it).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration.cluster.spark_cluster import SparkCluster, unfinished_tasks
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.worker_process import Driver, wait_for, write_properties

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

ROOT = Path(__file__).resolve().parents[3]
TEST_PLUGINS = ROOT / "tests" / "integration" / "plugins"
SPARKCAT = Path(sys.executable).parent / "sparkcat"
STRING = "org.apache.kafka.connect.storage.StringConverter"

# A plugin whose source task reports what it sees on the executor, once per lease.
VERSION_PLUGIN = """
import json, os, sys, time

import vlib
from sparkcat.api import ConfigDef, SourceConnector, SourceTask


class {prefix}VersionSourceConnector(SourceConnector):
    def version(self):
        return "1.0"

    def start(self, props):
        self._props = dict(props)

    def task_class(self):
        return {prefix}VersionSourceTask

    def task_configs(self, max_tasks):
        return [dict(self._props) for _ in range(max_tasks)]

    def config(self):
        return ConfigDef()

    def stop(self):
        pass


def lazy_version():
    import vlib.late  # first imported here, at run time, on the executor

    return vlib.late.VERSION


class {prefix}VersionSourceTask(SourceTask):
    def version(self):
        return "1.0"

    def start(self, props):
        import sparkcat

        line = {{
            "connector": props["name"],
            "vlib": vlib.__version__,
            "lazy_vlib": lazy_version(),
            "pid": os.getpid(),
            "sparkcat": sparkcat.__file__,
            "sees_driver_dir": os.path.exists(props["driver.marker"]),
            "cwd": os.getcwd(),
        }}
        with open(props["report.file"], "a") as report:
            report.write(json.dumps(line) + "\\n")

    def poll(self):
        time.sleep(0.1)
        return None

    def stop(self):
        pass
"""


def version_plugin(entry: Path, prefix: str, version: int) -> Path:
    """A plugin subdirectory of ``entry`` holding ``conn_<prefix>.py`` and its own ``vlib``."""
    root = entry / f"plugin-{prefix.lower()}"
    (root / "vlib").mkdir(parents=True)
    (root / "vlib" / "__init__.py").write_text(f"__version__ = {version}\n")
    (root / "vlib" / "late.py").write_text("from . import __version__ as VERSION\n")
    (root / f"conn_{prefix.lower()}.py").write_text(VERSION_PLUGIN.format(prefix=prefix))
    return root


class Setup:
    def __init__(self, root: Path, cluster: SparkCluster, driver: Driver) -> None:
        self.root = root
        self.data = root / "data"
        self.cluster = cluster
        self.driver = driver
        self.marker = root / "driver" / "marker"


@pytest.fixture(scope="module")
def setup(kafka_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("cluster")
    driver_dir, data = root / "driver", root / "data"
    driver_dir.mkdir()
    data.mkdir()
    (driver_dir / "marker").write_text("only the driver can see this\n")
    # Kafka's layout: one plugin.path entry, one subdirectory per plugin.
    connectors = driver_dir / "connectors"
    version_plugin(connectors, "A", 1)
    version_plugin(connectors, "B", 2)
    # The driver's directory and every copy of sparkcat's sources the driver could import
    # (this checkout's src/, and wherever an editable install points). Not the checkout as a
    # whole: its .venv holds the Spark distribution and the Python the executors run.
    import sparkcat

    sources = Path(sparkcat.__file__).resolve().parents[1]
    hidden = {driver_dir, ROOT / "src", sources}
    cluster = SparkCluster(root / "spark", sorted(p for p in hidden if p.exists()))
    port = free_port()
    props = write_properties(
        driver_dir / "worker.properties",
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "listeners": f"http://127.0.0.1:{port}",
            "key.converter": STRING,
            "value.converter": STRING,
            "offset.storage.file.filename": str(driver_dir / "offsets"),
            "offset.flush.interval.ms": "4000",
            "max.batch.ms": "2000",
            "plugin.path": f"{TEST_PLUGINS},{connectors}",
            "spark.master": cluster.url,
            "spark.pyspark.python": sys.executable,
            "spark.executor.memory": "512m",
            "spark.driver.memory": "768m",
            "spark.cores.max": "2",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
        },
    )
    driver = Driver(props, root / "driver.log", driver_dir)
    try:
        # The driver's start-up (Python, its JVM) overlaps the workers' registration.
        cluster.start(wait=False)
        driver.start()
        cluster.wait_workers(len(cluster.workers), 120)
        wait_for(lambda: driver.status_code("/connectors") == 200, 240, "REST", 0.25, driver)
        yield Setup(root, cluster, driver)
    finally:
        driver.cleanup()
        cluster.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_quickstart_pipeline_runs_on_the_cluster(setup: Setup) -> None:
    source, sink, topic = setup.data / "in.txt", setup.data / "out.txt", unique("quick")
    source.write_text("".join(f"line {i}\n" for i in range(100)))
    setup.driver.create(
        "quick-source",
        {"connector.class": "FileStreamSource", "file": str(source), "topic": topic},
    )
    setup.driver.create(
        "quick-sink", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic}
    )
    setup.driver.wait_running("quick-source", "quick-sink")
    wait_for(lambda: len(lines_of(sink)) >= 100, 120, "the quickstart lines", 0.2, setup.driver)
    with source.open("a") as f:
        f.write("one more\n")
    appended = time.monotonic()
    wait_for(lambda: "one more" in lines_of(sink), 30, "an appended line", 0.05, setup.driver)

    assert lines_of(sink) == [f"line {i}" for i in range(100)] + ["one more"]
    assert time.monotonic() - appended < 10
    assert setup.cluster.executors(), "no executor JVM ran"
    setup.driver.delete("quick-source")
    setup.driver.delete("quick-sink")


def test_two_plugins_each_see_their_own_library_version(setup: Setup) -> None:
    report = setup.data / "versions.jsonl"

    def leases(name: str | None = None) -> list[dict[str, Any]]:
        seen = [json.loads(line) for line in lines_of(report)]
        return [s for s in seen if name is None or s["connector"] == name]

    def run_leases(name: str, plugin: str) -> None:
        setup.driver.create(
            name,
            {
                "connector.class": f"conn_{plugin.lower()}.{plugin}VersionSourceConnector",
                "tasks.max": "1",
                "topic": unique("unused"),
                "report.file": str(report),
                "driver.marker": str(setup.marker),
                "max.batch.ms": "500",
            },
        )
        wait_for(lambda: len(leases(name)) >= 2, 120, f"two leases of {name}", 0.2, setup.driver)
        setup.driver.delete(name)

    # A long lease holds one executor's only core, so A, B and A again all run on the other
    # executor, whose Python worker Spark reuses: the isolation must hold inside one process.
    events = setup.data / "blocker-events.log"
    setup.driver.create(
        "blocker",
        {
            "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
            "topic": unique("blocker"),
            "events.file": str(events),
            "max.batch.ms": "120000",
        },
    )
    wait_for(lambda: lines_of(events), 120, "the blocking lease", 0.2, setup.driver)
    run_leases("version-A", "A")
    run_leases("version-B", "B")
    run_leases("version-A2", "A")
    setup.driver.delete("blocker")

    seen = leases()
    assert {(s["connector"], s["vlib"], s["lazy_vlib"]) for s in seen} == {
        ("version-A", 1, 1),
        ("version-B", 2, 2),
        ("version-A2", 1, 1),
    }
    pids = [{s["pid"] for s in leases(name)} for name in ("version-A", "version-B", "version-A2")]
    assert pids[0] & pids[1] & pids[2], f"no Python worker ran all three: {pids}"
    # Executors had none of the driver's files: sparkcat came from the zip Spark shipped.
    assert not any(s["sees_driver_dir"] for s in seen)
    assert all(".zip/sparkcat/" in s["sparkcat"] for s in seen), seen[0]
    assert not any(s["cwd"].startswith(str(setup.root / "driver")) for s in seen)


def test_pause_reaches_a_running_lease_within_a_second(setup: Setup) -> None:
    events, topic = setup.data / "pause-events.log", unique("pause")
    setup.driver.create(
        "pausing",
        {
            "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
            "topic": topic,
            "events.file": str(events),
            "max.batch.ms": "60000",
            "records.per.poll": "1",
        },
    )

    def polling() -> bool:
        return any(line.endswith(" poll") for line in lines_of(events)[-3:])

    wait_for(polling, 180, "a lease that polls", 0.05, setup.driver)
    paused = time.monotonic()
    setup.driver.put("/connectors/pausing/pause")
    wait_for(lambda: any(line.endswith(" stop") for line in lines_of(events)), 10, "stop")
    lease_ended = time.monotonic() - paused
    setup.driver.delete("pausing")

    # The lease was 60 s long: only the network control channel could end it this soon.
    assert lease_ended < 1.0


def run_until_killed(setup: Setup, label: str, kill: Any) -> None:
    """A source (counting records) and a sink copying them to a file; ``kill`` runs while
    both stream; afterwards the sink file holds every record number without a gap."""
    topic, events = unique(label), setup.data / f"{label}-events.log"
    sink = setup.data / f"{label}-sink.txt"
    setup.driver.create(
        f"{label}-src",
        {
            "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
            "topic": topic,
            "events.file": str(events),
            "records.per.poll": "10",
        },
    )
    setup.driver.create(
        f"{label}-sink", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic}
    )
    wait_for(lambda: len(lines_of(sink)) > 200, 180, "records in the sink", 0.2, setup.driver)
    # Kill where a lease is running right now: it must be cut mid-way and re-run.
    busy = wait_for(
        lambda: [i for i in (0, 1) if setup.cluster.running_tasks(i) > 0],
        60, "a worker running a lease", 0.02,
    )  # fmt: skip
    logs = setup.cluster.executor_logs(busy[0])
    kill(busy[0])
    killed_at = len(lines_of(sink))
    wait_for(
        lambda: len(lines_of(sink)) > killed_at + 1500, 180, "copying after the kill", 0.5,
        setup.driver,
    )  # fmt: skip
    setup.driver.delete(f"{label}-src")
    setup.driver.delete(f"{label}-sink")

    numbers = {int(line.split("-")[1]) for line in lines_of(sink)}
    assert numbers == set(range(max(numbers) + 1)), "a record was lost"
    # The killed executor died in the middle of a lease (its log never saw the task end).
    assert any(unfinished_tasks(log) > 0 for log in logs)


def test_kill_9_of_an_executor_mid_stream_loses_no_record(setup: Setup) -> None:
    def kill_an_executor(worker: int) -> None:
        (executor,) = setup.cluster.executors(worker)
        os.kill(executor, signal.SIGKILL)

    run_until_killed(setup, "exec-kill", kill_an_executor)


def test_kill_9_of_a_spark_worker_mid_stream_loses_no_record(setup: Setup) -> None:
    killed: list[int] = []

    def kill_a_worker(worker: int) -> None:
        setup.cluster.kill_worker(worker)
        killed.append(worker)

    run_until_killed(setup, "worker-kill", kill_a_worker)
    setup.cluster.start_worker(killed[0])
