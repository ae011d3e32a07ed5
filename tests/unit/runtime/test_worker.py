"""The Worker: connectors' instances on the driver, their tasks on the engine, the counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import PlanRecordingEngine, RecordingListener

from sparkcat.api.config import ConfigDef
from sparkcat.api.errors import ConnectError
from sparkcat.api.source import SourceConnector, SourceConnectorContext, SourceTask
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.herder.state import ManagedConnector, TargetState
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker import Worker
from sparkcat.runtime.worker_config import WorkerConfig

KAFKA = "org.apache.kafka.common.config.provider."
WORKER_PROPS = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "bootstrap.servers": "localhost:9092",
    "offset.storage.file.filename": "/tmp/unused.offsets",
}


class Task(SourceTask):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> None:
        return None

    def stop(self) -> None:
        pass


class Recorded(SourceConnector):
    """Remembers what it was told; ``tasks`` and ``fail`` steer it."""

    tasks = 2
    fail = False

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.calls.append(("start", dict(props)))
        if self.fail:
            raise RuntimeError("cannot start")

    def stop(self) -> None:
        self.calls.append("stop")

    def task_class(self) -> type[Task]:
        return Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"n": str(i), "secret": "s3cret"} for i in range(self.tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef()


class RestartingEngine(PlanRecordingEngine):
    """An engine that restarts several tasks of a connector in one call."""

    def __init__(self) -> None:
        super().__init__()
        self.restarted: list[tuple[str, list[int]]] = []

    def restart_tasks(self, name: str, tasks: list[int]) -> None:
        self.restarted.append((name, tasks))


class BrokenEngine(PlanRecordingEngine):
    def start_connector(self, plan: ConnectorPlan, listener: Any) -> None:
        raise RuntimeError("no Spark")


def _startups(worker: Worker) -> dict[str, float]:
    return {
        m.name: m.value
        for m in worker.metrics.collect([])
        if "startup" in m.name and "total" in m.name
    }


def _worker(engine: Any = None, **props: str) -> Worker:
    reloads: list[str] = []
    return Worker(
        WorkerConfig({**WORKER_PROPS, **props}),
        engine if engine is not None else PlanRecordingEngine(),
        MemoryOffsetStore(),
        PluginRegistry(),
        reloads.append,
    )


def _managed(config: dict[str, str] | None = None, name: str = "c") -> ManagedConnector:
    config = {"connector.class": "x", "tasks.max": "3", **(config or {})}
    return ManagedConnector(name, config, "source", Recorded, TargetState.STARTED)


def _listener() -> Any:
    return RecordingListener()  # the optional callbacks of EngineListener are left out


def _nothing(*_: Any) -> None:
    pass


def test_start_connector_initializes_once_and_starts_with_resolved_variables(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.properties").write_text("pw=s3cret\n", encoding="utf-8")
    worker = _worker(**{
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
    })  # fmt: skip
    managed = _managed({"secret": f"${{file:{tmp_path / 's.properties'}:pw}}"})
    worker.start_connector(managed, _nothing, _nothing)
    instance = managed.instance
    assert isinstance(instance, Recorded)
    assert isinstance(managed.context, SourceConnectorContext)
    assert managed.started
    assert instance.calls[0][1]["secret"] == "s3cret"
    worker.stop_connector(managed)
    worker.start_connector(managed, _nothing, _nothing)
    assert managed.instance is instance  # initialised once, started again
    assert [c if isinstance(c, str) else c[0] for c in instance.calls] == ["start", "stop", "start"]
    assert _startups(worker)["connector-startup-success-total"] == 2


def test_a_failed_start_raises_and_is_counted() -> None:
    worker = _worker()
    managed = _managed()
    Recorded.fail = True
    try:
        with pytest.raises(RuntimeError, match="cannot start"):
            worker.start_connector(managed, _nothing, _nothing)
    finally:
        Recorded.fail = False
    assert not managed.started
    assert _startups(worker)["connector-startup-failure-total"] == 1
    worker.stop_connector(managed)  # nothing started: stop() is not called
    assert isinstance(managed.instance, Recorded)
    assert "stop" not in managed.instance.calls


def test_task_configs_carry_the_task_class_and_the_variables_put_back() -> None:
    worker = _worker()
    managed = _managed({"secret": "${env:NOPE}"})
    managed.instance = Recorded()
    configs = worker.connector_task_configs(managed)
    assert [c["n"] for c in configs] == ["0", "1"]
    assert {c["task.class"] for c in configs} == {f"{__name__}:Task"}


def test_more_tasks_than_tasks_max_is_an_error_unless_not_enforced() -> None:
    worker = _worker()
    managed = _managed({"tasks.max": "1"})
    managed.instance = Recorded()
    with pytest.raises(ConnectError, match="has generated 2 tasks"):
        worker.connector_task_configs(managed)
    managed.config["tasks.max.enforce"] = "false"
    assert len(worker.connector_task_configs(managed)) == 2


def test_shut_down_closes_the_context_and_stops_the_instance() -> None:
    worker = _worker()
    managed = _managed()
    worker.start_connector(managed, _nothing, _nothing)
    worker.shut_down_connector(managed)
    assert not managed.started
    assert isinstance(managed.instance, Recorded) and managed.instance.calls[-1] == "stop"
    with pytest.raises(ConnectError, match="was shut down"):
        managed.context.request_task_reconfiguration()


def test_tasks_run_on_the_engine_and_each_start_is_counted() -> None:
    engine = PlanRecordingEngine()
    worker = _worker(engine)
    plan = ConnectorPlan("c", "source", {}, [{}, {}, {}], tasks=(0, 2))
    worker.start_tasks(plan, _listener())
    assert engine.plans["c"] is plan
    worker.start_tasks(plan, _listener(), started=[2])
    assert _startups(worker)["task-startup-success-total"] == 3
    worker.stop_tasks("c")
    assert engine.stopped == ["c"]


def test_a_plan_the_engine_refuses_raises_and_counts_failures() -> None:
    worker = _worker(BrokenEngine())
    with pytest.raises(RuntimeError, match="no Spark"):
        worker.start_tasks(ConnectorPlan("c", "source", {}, [{}, {}]), _listener())
    assert _startups(worker)["task-startup-failure-total"] == 2


def test_restarts_go_to_the_engine_in_one_call_when_it_can() -> None:
    engine = RestartingEngine()
    worker = _worker(engine)
    worker.restart_tasks("c", [0, 1])
    assert engine.restarted == [("c", [0, 1])]
    assert _startups(worker)["task-startup-success-total"] == 2
    one_at_a_time = _worker()
    one_at_a_time.restart_tasks("c", [0])  # the plain Engine protocol: restart_task
    assert _startups(one_at_a_time)["task-startup-success-total"] == 1


def test_stop_closes_the_engine() -> None:
    engine = PlanRecordingEngine()
    worker = _worker(engine)
    worker.start_tasks(ConnectorPlan("c", "source", {}, [{}]), _listener())
    worker.stop()
    assert engine.plans == {}
