"""More tasks than Spark slots: every task of every connector runs (the task hosts).

The shared test session has 12 task slots (``local[12,2]``). Before task hosts, a lease held a
slot for its whole length, so a worker ran at most 12 tasks at once and the rest waited for
slots while reported RUNNING.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import RecordingListener

from sparkcat.engine.spark_engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

FILE_SOURCE = "sparkcat.connectors.file:FileStreamSourceTask"
FILE_SINK = "sparkcat.connectors.file:FileStreamSinkTask"
RECORDING = "sparkcat_test_plugins:RecordingSourceTask"

pytestmark = pytest.mark.slow


@pytest.fixture
def engine(spark: Any, kafka_broker: Any, plugins_dir: Path) -> Iterator[SparkEngine]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "1000",
    }
    sys.path.insert(0, worker["plugin.path"])
    store = MemoryOffsetStore()
    engine = SparkEngine(worker, store, session=spark)
    engine.offset_store = store  # type: ignore[attr-defined]
    yield engine
    engine.close()
    sys.path.remove(worker["plugin.path"])


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def pair(name: str, source: Path, sink: Path, topic: str) -> tuple[ConnectorPlan, ConnectorPlan]:
    src = {"name": f"{name}-src", "connector.class": "FileStreamSource", "file": str(source),
           "topic": topic}  # fmt: skip
    snk = {"name": f"{name}-sink", "connector.class": "FileStreamSink", "file": str(sink),
           "topics": topic}  # fmt: skip
    return (
        ConnectorPlan(src["name"], "source", src, [dict(src, **{"task.class": FILE_SOURCE})]),
        ConnectorPlan(snk["name"], "sink", snk, [dict(snk, **{"task.class": FILE_SINK})]),
    )


def test_forty_pipelines_with_more_tasks_than_slots_each_deliver_every_line(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = RecordingListener()
    run = uuid.uuid4().hex[:8]
    files = [(tmp_path / f"in-{i}.txt", tmp_path / f"out-{i}.txt") for i in range(40)]
    for i, (source, sink) in enumerate(files):
        source.write_text(f"first-{i}\n")
        for plan in pair(f"p{i}-{run}", source, sink, f"many-{run}-{i}"):
            engine.start_connector(plan, listener)  # 80 tasks on 12 slots
    wait_until(
        lambda: all(lines(sink) == [f"first-{i}"] for i, (_, sink) in enumerate(files)),
        120,
        "the first line of every pipeline",
    )
    # Once running, every pipeline carries a new line promptly: none waits for a slot.
    for i, (source, _) in enumerate(files):
        with source.open("a") as f:
            f.write(f"second-{i}\n")
    appended = time.monotonic()
    wait_until(lambda: all(len(lines(sink)) == 2 for _, sink in files), 30, "every second line")
    assert time.monotonic() - appended < 15
    assert [lines(sink) for _, sink in files] == [[f"first-{i}", f"second-{i}"] for i in range(40)]
    assert listener.traces == {} and listener.connector_failures == {}


def test_a_connector_with_more_tasks_than_slots_runs_every_task(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = RecordingListener()
    name = f"wide-{uuid.uuid4().hex[:8]}"
    config = {
        "name": name,
        "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
        "topic": name,
        "events.file": str(tmp_path / "events"),
    }
    tasks = [dict(config, **{"task.class": RECORDING, "task.id": str(i)}) for i in range(32)]
    engine.start_connector(ConnectorPlan(name, "source", config, tasks), listener)
    store = engine.offset_store  # type: ignore[attr-defined]

    def committed() -> set[str]:
        return {p["task"] for p, o in store.get_all(name) if o is not None}

    wait_until(lambda: len(committed()) == 32, 90, "offsets of all 32 tasks")
    assert committed() == {str(i) for i in range(32)}
    wait_until(
        lambda: all(listener.states.get((name, i)) == "RUNNING" for i in range(32)),
        30,
        "every task RUNNING",
    )
    assert listener.traces == {} and listener.connector_failures == {}
