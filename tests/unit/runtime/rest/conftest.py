"""A REST client over a herder on the engine double (see ``tests/unit/runtime/conftest.py``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

with warnings.catch_warnings():
    # starlette deprecates its httpx-based TestClient in favour of httpx2 (not installed).
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
SINK = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt"}
WORKER_PROPS = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.file.filename": "/tmp/unused.offsets",
    "bootstrap.servers": "localhost:9092",
}


@pytest.fixture
def rest_herder(
    worker_config: WorkerConfig, engine: Any, offset_store: MemoryOffsetStore
) -> StandaloneHerder:
    herder = StandaloneHerder(worker_config, engine, offset_store, PluginRegistry(), "test:8083")
    herder.mark_ready()
    return herder


@pytest.fixture
def client(rest_herder: StandaloneHerder) -> Iterator[TestClient]:
    with TestClient(create_app(rest_herder), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def client_for(
    engine: Any, offset_store: MemoryOffsetStore
) -> Iterator[Callable[[dict[str, str]], TestClient]]:
    """A client over a herder whose worker config has extra properties."""
    clients: list[TestClient] = []

    def make(extra: dict[str, str]) -> TestClient:
        config = WorkerConfig({**WORKER_PROPS, **extra})
        herder = StandaloneHerder(config, engine, offset_store, PluginRegistry(), "test:8083")
        herder.mark_ready()
        test_client = TestClient(create_app(herder), raise_server_exceptions=False)
        clients.append(test_client)
        return test_client

    yield make
    for test_client in clients:
        test_client.close()
