from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

# A connector whose task count and failures a test controls through module globals.
PLUGIN = textwrap.dedent(
    """
    from sparkcat.api.config import ConfigDef
    from sparkcat.api.source import SourceConnector, SourceTask

    TASKS = 1
    FAIL_START = False
    CALLS = []

    class HerderTestTask(SourceTask):
        def version(self): return "1"
        def start(self, props): pass
        def poll(self): return None
        def stop(self): pass

    class HerderTestConnector(SourceConnector):
        def version(self): return "1"
        def start(self, props):
            CALLS.append("start")
            if FAIL_START:
                raise RuntimeError("cannot start")
        def stop(self): CALLS.append("stop")
        def task_class(self): return HerderTestTask
        def task_configs(self, max_tasks):
            return [{"n": str(i), "of": str(TASKS)} for i in range(TASKS)]
        def config(self): return ConfigDef()
    """
)
SOURCE = {"connector.class": "HerderTest", "topic": "t"}
FILE_SINK = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt"}


@pytest.fixture
def plugin(tmp_path: Path) -> Any:
    (tmp_path / "herder_test_plugin.py").write_text(PLUGIN)
    registry = PluginRegistry([tmp_path])
    # A plugin.path module lives in its plugin's own module table, not under its plain name.
    module = sys.modules[registry.resolve("HerderTest", "source").__module__]
    module.TASKS, module.FAIL_START = 1, False
    module.CALLS.clear()
    module.registry = registry
    return module


@pytest.fixture
def herder_p(worker_config: WorkerConfig, engine: Any, plugin: Any) -> StandaloneHerder:
    return StandaloneHerder(worker_config, engine, MemoryOffsetStore(), plugin.registry, "w:8083")


def states(herder: StandaloneHerder, name: str) -> tuple[str, list[str]]:
    status = herder.connector_status(name).to_json()
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def test_create_runs_connector_and_plans_tasks(herder_p: StandaloneHerder, engine: Any) -> None:
    info = herder_p.create_connector("c", SOURCE)
    assert info.to_json() == {
        "name": "c",
        "config": {**SOURCE, "name": "c"},
        "tasks": [{"connector": "c", "task": 0}],
        "type": "source",
    }
    plan = engine.plans["c"]
    assert (plan.kind, plan.generation, plan.paused) == ("source", 0, False)
    assert plan.task_configs == [
        {"n": "0", "of": "1", "task.class": "herder_test_plugin:HerderTestTask"}
    ]
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])
    assert herder_p.connectors() == ["c"]


def test_sink_task_configs_get_kafka_task_class_and_topics(herder: StandaloneHerder) -> None:
    herder.create_connector("s", FILE_SINK)
    (task,) = herder.task_configs("s")
    assert task.to_json()["id"] == {"connector": "s", "task": 0}
    assert task.config["task.class"] == "org.apache.kafka.connect.file.FileStreamSinkTask"
    assert task.config["topics"] == "t"


def test_create_errors(herder: StandaloneHerder) -> None:
    herder.create_connector("s", FILE_SINK)
    with pytest.raises(AlreadyExistsError, match=r"^Connector s already exists$"):
        herder.create_connector("s", FILE_SINK)
    with pytest.raises(BadRequestError, match="contains the following 2 error"):
        herder.create_connector("t", {"connector.class": "FileStreamSink"})
    with pytest.raises(ConnectError, match="Failed to find any class that implements Connector"):
        herder.create_connector("u", {"connector.class": "Missing"})
    with pytest.raises(BadRequestError, match="Invalid initial state"):
        herder.create_connector("v", FILE_SINK, initial_state="SLEEPING")
    assert herder.connectors() == ["s"]


def test_not_found_messages(herder: StandaloneHerder) -> None:
    cases = [
        (herder.connector_info, "Connector x not found"),
        (herder.connector_config, "Connector x not found"),
        (herder.task_configs, "Connector x not found"),
        (herder.delete_connector, "Connector x not found"),
        (herder.connector_status, "No status found for connector x"),
        (herder.pause_connector, "Unknown connector x"),
        (herder.resume_connector, "Unknown connector x"),
    ]
    for call, message in cases:
        with pytest.raises(NotFoundError, match=f"^{message}$"):
            call("x")
    with pytest.raises(NotFoundError, match=r"^No status found for task x-0$"):
        herder.task_status("x", 0)
    with pytest.raises(ConnectError, match="No connector `x` configured"):
        herder.stop_connector("x")


@pytest.mark.parametrize("state", ["PAUSED", "paused"])
def test_initial_state_paused(herder_p: StandaloneHerder, engine: Any, plugin: Any,
                              state: str) -> None:  # fmt: skip
    herder_p.create_connector("c", SOURCE, initial_state=state)
    assert states(herder_p, "c") == ("PAUSED", [])
    assert "c" not in engine.plans and plugin.CALLS == []
    herder_p.resume_connector("c")
    assert plugin.CALLS == ["start"]
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])
    assert engine.plans["c"].paused is False


def test_initial_state_stopped_then_resume(herder_p: StandaloneHerder, engine: Any) -> None:
    herder_p.create_connector("c", SOURCE, initial_state="STOPPED")
    assert states(herder_p, "c") == ("STOPPED", [])
    assert herder_p.connector_info("c").tasks == []
    herder_p.resume_connector("c")
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])
    assert "c" in engine.plans


def test_pause_resume_stop(herder_p: StandaloneHerder, engine: Any, plugin: Any) -> None:
    herder_p.create_connector("c", SOURCE)
    herder_p.pause_connector("c")
    herder_p.pause_connector("c")  # idempotent
    assert plugin.CALLS == ["start", "stop"]
    assert engine.calls.count(("pause", "c")) == 1
    assert states(herder_p, "c") == ("PAUSED", ["PAUSED"])
    herder_p.resume_connector("c")
    assert plugin.CALLS == ["start", "stop", "start"]
    assert engine.calls[-1] == ("resume", "c")
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])
    herder_p.stop_connector("c")
    assert ("stop", "c") in engine.calls and "c" not in engine.plans
    assert states(herder_p, "c") == ("STOPPED", [])
    assert herder_p.task_configs("c") == []
    herder_p.resume_connector("c")
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])


def test_delete(herder_p: StandaloneHerder, engine: Any) -> None:
    herder_p.create_connector("c", SOURCE)
    herder_p.delete_connector("c")
    assert herder_p.connectors() == [] and "c" not in engine.plans
    with pytest.raises(NotFoundError):
        herder_p.connector_status("c")


def test_tasks_max_is_enforced(herder_p: StandaloneHerder, engine: Any, plugin: Any) -> None:
    plugin.TASKS = 3
    herder_p.create_connector("c", {**SOURCE, "tasks.max": "2"})
    status = herder_p.connector_status("c").to_json()
    assert status["connector"]["state"] == "FAILED"
    assert (
        "The connector c has generated 3 tasks, which is greater than 2, the maximum number of "
        "tasks it is configured to create. This behaviour should be considered a bug"
    ) in status["connector"]["trace"]
    assert "c" not in engine.plans
    herder_p.delete_connector("c")
    herder_p.create_connector("c", {**SOURCE, "tasks.max": "2", "tasks.max.enforce": "false"})
    assert len(engine.plans["c"].task_configs) == 3


def test_connector_start_failure(herder_p: StandaloneHerder, plugin: Any) -> None:
    plugin.FAIL_START = True
    herder_p.create_connector("c", SOURCE)
    status = herder_p.connector_status("c").to_json()
    assert status["connector"]["state"] == "FAILED"
    assert "RuntimeError: cannot start" in status["connector"]["trace"]


def test_request_task_reconfiguration_pushes_new_generation(
    herder_p: StandaloneHerder, engine: Any, plugin: Any
) -> None:
    herder_p.create_connector("c", {**SOURCE, "tasks.max": "4"})
    herder_p.request_task_reconfiguration("c")
    assert engine.plans["c"].generation == 0  # unchanged configs: nothing pushed
    plugin.TASKS = 3
    herder_p.request_task_reconfiguration("c")
    assert engine.plans["c"].generation == 1
    assert len(herder_p.connector_info("c").tasks) == 3
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"] * 3)
    plugin.TASKS = 1
    herder_p.request_task_reconfiguration("c")
    assert states(herder_p, "c") == ("RUNNING", ["RUNNING"])


def test_context_reconfiguration_and_close(herder_p: StandaloneHerder, plugin: Any) -> None:
    herder_p.create_connector("c", {**SOURCE, "tasks.max": "2"})
    context = herder_p._connectors["c"].context
    plugin.TASKS = 2
    context.request_task_reconfiguration()
    assert len(herder_p.task_configs("c")) == 2
    herder_p.delete_connector("c")
    with pytest.raises(ConnectError):
        context.request_task_reconfiguration()


def test_task_failure_status_and_records(herder_p: StandaloneHerder, engine: Any) -> None:
    herder_p.create_connector("c", SOURCE)
    listener = engine.listeners["c"]
    listener.on_records("c", 0, 5)
    listener.on_task_failed("c", 0, "Traceback: boom")
    assert herder_p.task_status("c", 0).to_json() == {
        "id": 0, "state": "FAILED", "worker_id": "w:8083", "trace": "Traceback: boom"
    }  # fmt: skip
    listener.on_task_failed("c", 7, "ignored: no such task")
    assert herder_p.records_copied() == {"c": 5}


def test_restart_plans(herder_p: StandaloneHerder, engine: Any, plugin: Any) -> None:
    plugin.TASKS = 2
    herder_p.create_connector("c", {**SOURCE, "tasks.max": "2"})
    engine.listeners["c"].on_task_failed("c", 1, "trace")
    plan = herder_p.restart_connector("c", include_tasks=True, only_failed=True)
    assert plan is not None
    assert plan.to_json() == {
        "name": "c", "connector": {"state": "RUNNING", "worker_id": "w:8083"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w:8083"},
                  {"id": 1, "state": "RESTARTING", "worker_id": "w:8083"}],
        "type": "source",
    }  # fmt: skip
    assert engine.calls[-1] == ("restart_task", ("c", 1))
    plan = herder_p.restart_connector("c", include_tasks=True)
    assert plan is not None
    assert [t.state for t in plan.tasks] == ["RESTARTING", "RESTARTING"]
    assert plan.connector.state == "RESTARTING"
    assert herder_p.restart_connector("c") is None  # legacy: connector instance only
    assert plugin.CALLS.count("start") == 3
    with pytest.raises(NotFoundError, match=r"^Unknown connector: x$"):
        herder_p.restart_connector("x", include_tasks=True)
    with pytest.raises(NotFoundError, match=r"^Connector x not found$"):
        herder_p.restart_connector("x")


def test_restart_task(herder_p: StandaloneHerder, engine: Any) -> None:
    herder_p.create_connector("c", SOURCE)
    herder_p.restart_task("c", 0)
    assert engine.calls[-1] == ("restart_task", ("c", 0))
    with pytest.raises(NotFoundError, match=r"^Task c-3 not found$"):
        herder_p.restart_task("c", 3)


def test_update_config_replaces_plan(herder_p: StandaloneHerder, engine: Any) -> None:
    created, _ = herder_p.update_connector_config("c", SOURCE)
    assert created is True
    created, info = herder_p.update_connector_config("c", {**SOURCE, "topic": "u"})
    assert created is False and info.config["topic"] == "u"
    assert engine.plans["c"].generation == 1


def test_initial_offsets_for_source(herder: StandaloneHerder, offset_store: Any) -> None:
    config = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
    offsets = {"offsets": [{"partition": {"filename": "in.txt"}, "offset": {"position": 7}}]}
    herder.create_connector("src", config, initial_offsets=offsets)
    assert offset_store.get("src", {"filename": "in.txt"}) == {"position": 7}
    assert herder.connector_offsets("src") == {
        "offsets": [{"partition": {"filename": "in.txt"}, "offset": {"position": 7}}]
    }
    with pytest.raises(BadRequestError, match="Offsets may only contain primitive types"):
        herder.create_connector("src2", config, initial_offsets=[
            {"partition": {"filename": "in.txt"}, "offset": {"position": [1]}}])  # fmt: skip
    assert "src2" not in herder.connectors()


def test_expanded_connectors(herder: StandaloneHerder) -> None:
    herder.create_connector("s", FILE_SINK)
    expanded = herder.expanded_connectors(["status", "info"])
    assert set(expanded["s"]) == {"status", "info"}
    assert herder.expanded_connectors(["bogus"]) == {"s": {}}
