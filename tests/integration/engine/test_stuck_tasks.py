"""Tasks stuck in ``poll()``/``put()`` (an external call that never returns) on the engine:
a restart, a new task generation and a stop complete within
``task.shutdown.graceful.timeout.ms`` + 5 s, as Kafka bounds them: the stuck lease is
abandoned (its Spark task killed, its results discarded), counted, and a new instance runs
meanwhile. Real broker and local Spark."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from tests.support.engine import RecordingListener
from tests.support.plans import recording
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

GRACE_MS = 2000
BOUND_S = GRACE_MS / 1000 + 5  # Kafka's bound for a stuck task to be left behind


class AbandonListener(RecordingListener):
    def __init__(self) -> None:
        super().__init__()
        self.abandoned: list[tuple[str, list[int]]] = []

    def on_tasks_abandoned(self, connector: str, tasks: list[int]) -> None:
        self.abandoned.append((connector, tasks))


@pytest.fixture
def worker(kafka_broker: Any, plugins_dir: Path) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "1000",
        "task.shutdown.graceful.timeout.ms": str(GRACE_MS),
    }


@pytest.fixture
def engine(spark: Any, worker: dict[str, str], tmp_path: Path) -> Iterator[SparkEngine]:
    sys.path.insert(0, worker["plugin.path"])  # the test reads the plugin's event helpers
    engine = SparkEngine(worker, MemoryOffsetStore(), session=spark)
    yield engine
    engine.close()
    sys.path.remove(worker["plugin.path"])


def _events(path: Path) -> dict[str, list[str]]:
    from sparkcat_test_plugins import read_events  # type: ignore[import-not-found]

    return read_events(str(path))  # type: ignore[no-any-return]


def _blocked(events: Path) -> list[str]:
    return [i for i, calls in _events(events).items() if "blocked" in calls]


def _timed(action: Callable[[], None]) -> float:
    started = time.monotonic()
    action()
    return time.monotonic() - started


def _stuck_source(
    engine: SparkEngine, tmp_path: Path, listener: AbandonListener
) -> tuple[ConnectorPlan, Path, Path]:
    """A running source whose task then hangs in poll(); the flag is gone again afterwards,
    so a new instance polls normally."""
    events, flag = tmp_path / "events", tmp_path / "block"
    name, topic = f"stuck-{uuid.uuid4().hex[:6]}", f"stuck-{uuid.uuid4().hex[:6]}"
    plan = recording(name, events, topic, **{"block.file": str(flag)})
    engine.start_connector(plan, listener)
    wait_for(lambda: listener.records.get(name, 0) > 0, 120, "the source to copy records")
    flag.touch()
    wait_for(lambda: _blocked(events), 30, "the task to hang in poll()")
    flag.unlink()
    return plan, events, flag


def test_a_new_generation_abandons_a_task_stuck_in_poll(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = AbandonListener()
    plan, events, _ = _stuck_source(engine, tmp_path, listener)
    (stuck,) = _blocked(events)
    copied = listener.records[plan.name]
    replaced = ConnectorPlan(plan.name, plan.kind, plan.connector_config, plan.task_configs,
                             generation=plan.generation + 1)  # fmt: skip
    took = _timed(lambda: engine.start_connector(replaced, listener))
    assert took < BOUND_S, f"the new generation waited {took:.1f} s for the stuck task"
    assert listener.abandoned == [(plan.name, [0])]
    # The new instance runs and commits while the stuck one is gone without stop()/stopped().
    wait_for(lambda: listener.records[plan.name] > copied, 30, "records of the new instance")
    assert "stopped" not in _events(events)[stuck]
    assert len(_events(events)) >= 2


def test_restarting_a_task_stuck_in_poll_and_stopping_stay_within_the_bound(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = AbandonListener()
    plan, events, flag = _stuck_source(engine, tmp_path, listener)
    copied = listener.records[plan.name]
    took = _timed(lambda: engine.restart_task(plan.name, 0))
    assert took < BOUND_S, f"the restart waited {took:.1f} s for the stuck task"
    assert listener.abandoned == [(plan.name, [0])]
    wait_for(lambda: listener.records[plan.name] > copied, 30, "records of the new instance")
    # Stuck again, then the connector is stopped (delete, rebalance, worker shutdown).
    flag.touch()
    wait_for(lambda: len(_blocked(events)) == 2, 30, "the new instance to hang too")
    took = _timed(lambda: engine.stop_connector(plan.name))
    assert took < BOUND_S, f"the stop waited {took:.1f} s for the stuck task"
    assert [tasks for _, tasks in listener.abandoned] == [[0], [0]]


def test_a_sink_task_stuck_in_put_is_abandoned_and_its_successor_delivers(
    engine: SparkEngine, tmp_path: Path, kafka_broker: Any
) -> None:
    listener = AbandonListener()
    events, flag, out = tmp_path / "events", tmp_path / "block", tmp_path / "out.txt"
    name, topic = f"put-{uuid.uuid4().hex[:6]}", f"put-{uuid.uuid4().hex[:6]}"
    config = {"name": name, "connector.class": "sparkcat_test_plugins:BlockingSinkConnector",
              "topics": topic, "events.file": str(events), "out.file": str(out),
              "block.file": str(flag)}  # fmt: skip
    task = dict(config, **{"task.class": "sparkcat_test_plugins:BlockingSinkTask"})
    plan = ConnectorPlan(name, "sink", config, [task])
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})

    def send(values: range) -> None:
        for n in values:
            producer.produce(topic, str(n).encode())
        assert producer.flush(30) == 0

    send(range(5))
    engine.start_connector(plan, listener)
    wait_for(lambda: out.exists() and len(out.read_text().split()) >= 5, 120, "first records")
    flag.touch()
    send(range(5, 10))
    wait_for(lambda: _blocked(events), 30, "the task to hang in put()")
    flag.unlink()
    replaced = ConnectorPlan(name, "sink", config, [task], generation=1)
    took = _timed(lambda: engine.start_connector(replaced, listener))
    assert took < BOUND_S, f"the new generation waited {took:.1f} s for the stuck put()"
    assert listener.abandoned == [(name, [0])]
    # The abandoned put's offsets were never committed: its records come again.
    wait_for(lambda: {"5", "9"} <= set(out.read_text().split()), 60, "the records put hung on")


def test_a_task_that_hangs_while_paused_is_abandoned_on_resume(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = AbandonListener()
    plan, _, _ = _stuck_source(engine, tmp_path, listener)
    engine.pause_connector(plan.name)  # as in Kafka, a pause does not end a stuck call
    copied = listener.records[plan.name]
    took = _timed(lambda: engine.resume_connector(plan.name))
    assert took < BOUND_S, f"the resume waited {took:.1f} s for the stuck task"
    assert listener.abandoned == [(plan.name, [0])]
    wait_for(lambda: listener.records[plan.name] > copied, 30, "records after the resume")
