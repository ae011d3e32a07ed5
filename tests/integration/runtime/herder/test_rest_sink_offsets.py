"""Sink offsets over REST (KIP-875/995) against the session broker: consumer group
``connect-<name>``."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.engine import NullEngine

from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.broker


@pytest.fixture
def client(kafka_broker: Any) -> Iterator[TestClient]:
    config = WorkerConfig({
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": "/tmp/unused.offsets",
        "bootstrap.servers": kafka_broker.bootstrap_servers,
    })  # fmt: skip
    herder = StandaloneHerder(config, NullEngine(), MemoryOffsetStore(), PluginRegistry(), "w:1")
    herder.mark_ready()
    with TestClient(create_app(herder), raise_server_exceptions=False) as test_client:
        yield test_client


def entry(topic: str, partition: int, offset: int | None) -> dict[str, Any]:
    return {"partition": {"kafka_topic": topic, "kafka_partition": partition},
            "offset": None if offset is None else {"kafka_offset": offset}}  # fmt: skip


def test_sink_offsets_lifecycle(
    client: TestClient, kafka_broker: Any, unique_topic: Callable[[str], str]
) -> None:
    from confluent_kafka.admin import AdminClient

    from sparkcat.kafka.admin import TopicSpec, ensure_topics

    topic = unique_topic("sink")
    ensure_topics(AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers}),
                  [TopicSpec(topic, partitions=2)])  # fmt: skip
    name = f"sink-{uuid.uuid4().hex[:8]}"
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": "/dev/null"}
    created = client.post("/connectors", json={
        "name": name, "config": sink, "initial_state": "STOPPED",
        "initial_offsets": [entry(topic, 0, 5), entry(topic, 1, 7)],
    })  # fmt: skip
    assert created.status_code == 201, created.text
    assert created.json()["offsets_status"] == (
        "The offsets for this connector have been set successfully"
    )
    offsets = client.get(f"/connectors/{name}/offsets").json()
    assert offsets == {"offsets": [entry(topic, 0, 5), entry(topic, 1, 7)]}

    altered = client.patch(f"/connectors/{name}/offsets",
                           json={"offsets": [entry(topic, 0, "12"), entry(topic, 1, None)]})  # type: ignore[arg-type]  # fmt: skip
    assert altered.status_code == 200, altered.text
    assert "have been altered successfully" in altered.json()["message"]
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": [entry(topic, 0, 12)]}

    reset = client.delete(f"/connectors/{name}/offsets")
    assert reset.status_code == 200, reset.text
    assert "have been reset successfully" in reset.json()["message"]
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    assert client.delete(f"/connectors/{name}/offsets").status_code == 200  # idempotent
