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
from tests.support.files import lines_of
from tests.support.plans import file_sink, file_source, recording
from tests.support.waiting import wait_for

from sparkcat.engine.spark_engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

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


def pair(name: str, source: Path, sink: Path, topic: str) -> tuple[ConnectorPlan, ConnectorPlan]:
    return file_source(f"{name}-src", source, topic), file_sink(f"{name}-sink", sink, topic)


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
    wait_for(
        lambda: all(lines_of(sink) == [f"first-{i}"] for i, (_, sink) in enumerate(files)),
        120,
        "the first line of every pipeline",
        interval=0.05,
    )
    # Once running, every pipeline carries a new line promptly: none waits for a slot.
    for i, (source, _) in enumerate(files):
        with source.open("a") as f:
            f.write(f"second-{i}\n")
    appended = time.monotonic()
    wait_for(
        lambda: all(len(lines_of(sink)) == 2 for _, sink in files),
        30,
        "every second line",
        interval=0.05,
    )
    assert time.monotonic() - appended < 15
    assert [lines_of(sink) for _, sink in files] == [
        [f"first-{i}", f"second-{i}"] for i in range(40)
    ]
    assert listener.traces == {} and listener.connector_failures == {}


def test_a_connector_with_more_tasks_than_slots_runs_every_task(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = RecordingListener()
    name = f"wide-{uuid.uuid4().hex[:8]}"
    engine.start_connector(recording(name, tmp_path / "events", name, tasks=32), listener)
    store = engine.offset_store  # type: ignore[attr-defined]

    def committed() -> set[str]:
        return {p["task"] for p, o in store.get_all(name) if o is not None}

    wait_for(lambda: len(committed()) == 32, 90, "offsets of all 32 tasks", interval=0.05)
    assert committed() == {str(i) for i in range(32)}
    wait_for(
        lambda: all(listener.states.get((name, i)) == "RUNNING" for i in range(32)),
        30,
        "every task RUNNING",
        interval=0.05,
    )
    assert listener.traces == {} and listener.connector_failures == {}
