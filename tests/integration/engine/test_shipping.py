"""Plugins laid out as Kafka's plugin.path, run by SparkEngine on local Spark (real broker)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import RecordingListener
from tests.support.plugins import source_connector, source_task, topic_values, versioned_plugin

from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

STRING = "org.apache.kafka.connect.storage.StringConverter"
VERSIONS = {"acme-a": 1, "acme-b": 2}


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """One plugin.path entry holding two plugin subdirectories that bundle ``somelib`` 1 and 2."""
    for plugin, version in VERSIONS.items():
        versioned_plugin(tmp_path / "connectors", plugin, version)
    return tmp_path / "connectors"


@pytest.fixture
def engine(spark: Any, kafka_broker: Any, entry: Path, tmp_path: Path) -> Iterator[SparkEngine]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": STRING,
        "value.converter": STRING,
        "plugin.path": str(entry),
        "max.batch.ms": "1000",
    }
    engine = SparkEngine(worker, MemoryOffsetStore(), session=spark)
    yield engine
    engine.close()


def test_connectors_of_plugin_subdirectories_each_see_their_own_bundled_library(
    engine: SparkEngine, kafka_broker: Any
) -> None:
    listener, topics = RecordingListener(), {}
    for plugin in VERSIONS:
        topics[plugin] = f"{plugin}-{uuid.uuid4().hex[:8]}"
        config = {"name": plugin, "connector.class": source_connector(plugin),
                  "topic": topics[plugin]}  # fmt: skip
        task = dict(config, **{"task.class": source_task(plugin)})
        engine.start_connector(ConnectorPlan(plugin, "source", config, [task]), listener)

    seen = {p: topic_values(kafka_broker.bootstrap_servers, t, 30, 120) for p, t in topics.items()}

    assert not listener.traces and not listener.connector_failures, (
        listener.traces,
        listener.connector_failures,
    )
    for plugin, version in VERSIONS.items():
        assert len(seen[plugin]) >= 30
        assert set(seen[plugin]) == {f"{plugin} import={version} lazy={version}"}
