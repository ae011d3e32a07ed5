"""Fixtures of the control-plane tests: an in-memory engine double and a herder on it.

The shipped data plane is Spark (``sparkcat.engine.SparkEngine``); these tests exercise the
herder's decisions, so the engine here only records the calls it gets and lets a test play
the engine's part by calling the listener.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig


@dataclass
class RecordingEngine:
    """Implements the Engine protocol; remembers plans and calls."""

    plans: dict[str, ConnectorPlan] = field(default_factory=dict)
    listeners: dict[str, EngineListener] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    paused: set[str] = field(default_factory=set)
    closed: bool = False

    def start_connector(self, plan: ConnectorPlan, listener: EngineListener) -> None:
        self.calls.append(("start", plan.name))
        self.plans[plan.name] = plan
        self.listeners[plan.name] = listener
        if plan.paused:
            self.paused.add(plan.name)
        else:
            self.paused.discard(plan.name)

    def pause_connector(self, name: str) -> None:
        self.calls.append(("pause", name))
        self.paused.add(name)

    def resume_connector(self, name: str) -> None:
        self.calls.append(("resume", name))
        self.paused.discard(name)

    def restart_task(self, name: str, task: int) -> None:
        self.calls.append(("restart_task", (name, task)))

    def stop_connector(self, name: str) -> None:
        self.calls.append(("stop", name))
        self.plans.pop(name, None)

    def close(self) -> None:
        self.closed = True


WORKER_PROPS = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.file.filename": "/tmp/unused.offsets",
    "bootstrap.servers": "localhost:9092",
}


@pytest.fixture
def engine() -> RecordingEngine:
    return RecordingEngine()


@pytest.fixture
def offset_store() -> Iterator[MemoryOffsetStore]:
    store = MemoryOffsetStore()
    yield store
    store.close()


@pytest.fixture
def worker_config() -> WorkerConfig:
    return WorkerConfig(WORKER_PROPS)


@pytest.fixture
def herder(
    worker_config: WorkerConfig, engine: RecordingEngine, offset_store: MemoryOffsetStore
) -> StandaloneHerder:
    return StandaloneHerder(worker_config, engine, offset_store, PluginRegistry(), "test:8083")
