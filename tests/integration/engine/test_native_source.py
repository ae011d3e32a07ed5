"""SparkSourceConnector on the real broker and the session's SparkSession: a Parquet
directory -> Kafka, files added while it runs picked up, an SMT applied on the way, offsets
in Connect's offset store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from tests.integration.engine.test_native_sink import Listener, wait_for

from sparkcat.connectors.spark import SparkSourceConnector
from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker]


@pytest.fixture
def store() -> MemoryOffsetStore:
    return MemoryOffsetStore()


@pytest.fixture
def engine(
    spark: Any, kafka_broker: Any, tmp_path: Path, store: MemoryOffsetStore
) -> Iterator[SparkEngine]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }
    engine = SparkEngine(worker, store, session=spark, state_dir=str(tmp_path / "plans"))
    yield engine
    engine.close()


def source_plan(name: str, **config: str) -> ConnectorPlan:
    props = {"name": name, "connector.class": "SparkSourceConnector", **config}
    connector = SparkSourceConnector()
    assert not [v for v in connector.validate(props) if v.error_messages]
    connector.start(props)
    task_class = default_registry().class_name(connector.task_class())
    configs = [dict(c, **{"task.class": task_class}) for c in connector.task_configs(4)]
    return ConnectorPlan(name, "source", props, configs)


def write_parquet(directory: Path, name: str, ids: range) -> Path:
    """A Parquet file, written under a hidden name and renamed (readers never see half)."""
    directory.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": pa.array(list(ids), pa.int64()),
                      "label": [f"row-{i}" for i in ids]})  # fmt: skip
    hidden = directory / f".{name}.tmp"
    pq.write_table(table, hidden)
    return hidden.rename(directory / name)


class TopicReader:
    """Reads the topic from its beginning once the connector created it (assign: no group,
    and no subscription to a topic that does not exist yet)."""

    def __init__(self, servers: str, topic: str) -> None:
        self.topic = topic
        self.consumer = Consumer({"bootstrap.servers": servers, "group.id": f"r-{topic}"})
        self.assigned = False
        self.values: list[dict[str, Any]] = []

    def at_least(self, count: int) -> bool:
        if not self.assigned:
            topics = self.consumer.list_topics(timeout=10).topics
            if self.topic not in topics or topics[self.topic].error is not None:
                return False
            partitions = topics[self.topic].partitions
            self.consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING)
                                  for p in partitions])  # fmt: skip
            self.assigned = True
        for msg in self.consumer.consume(1000, 0.2):
            if msg.error() is None:
                self.values.append(orjson.loads(msg.value()))
        return len(self.values) >= count


def test_parquet_files_to_kafka_with_new_files_and_an_smt(
    engine: SparkEngine, kafka_broker: Any, tmp_path: Path, store: MemoryOffsetStore
) -> None:
    directory = tmp_path / "in"
    write_parquet(directory, "a.parquet", range(0, 300))
    write_parquet(directory, "b.parquet", range(300, 500))
    topic = f"from-spark-{uuid.uuid4().hex[:8]}"
    name = f"spark-source-{uuid.uuid4().hex[:8]}"
    listener = Listener()
    plan = source_plan(name, topic=topic, **{
        "spark.path": str(directory), "poll.interval.ms": "200",
        "transforms": "origin",
        "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.origin.static.field": "origin",
        "transforms.origin.static.value": "spark",
    })  # fmt: skip
    assert len(plan.task_configs) == 1
    engine.start_connector(plan, listener)
    reader = TopicReader(kafka_broker.bootstrap_servers, topic)

    def read(count: int) -> bool:
        assert not listener.traces, listener.traces
        return reader.at_least(count)

    try:
        wait_for(lambda: read(500), 120, "the first two files")
        newest = write_parquet(directory, "c.parquet", range(500, 650))
        wait_for(lambda: read(650), 60, "the file added while running")
        wait_for(lambda: store.get(name, {"spark.path": str(directory)}), 10, "offsets")
    finally:
        reader.consumer.close()
        engine.stop_connector(name)
    assert sorted(v["id"] for v in reader.values) == list(range(650))
    assert all(v["origin"] == "spark" and v["label"] == f"row-{v['id']}" for v in reader.values)
    offset = store.get(name, {"spark.path": str(directory)})
    assert offset is not None and offset["file"].endswith(newest.name)
    assert listener.traces == {}
