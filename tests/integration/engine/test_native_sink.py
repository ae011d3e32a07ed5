"""SparkSinkConnector on the real broker and the session's SparkSession: Kafka -> a
partitioned Parquet directory, a catalog table, PostgreSQL and MariaDB through Spark's JDBC
writer, and a value schema the writer cannot take (task FAILED naming the field, or the
DLQ)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from tests.support.engine import RecordingListener
from tests.support.orders import SCHEMA, order, produce_orders
from tests.support.spark_jdbc import jdbc_database
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.engine.native_connectors import SparkSinkConnector
from sparkcat.kafka import admin as kafka_admin
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker]


@pytest.fixture
def engine(spark: Any, kafka_broker: Any, tmp_path: Path) -> Iterator[SparkEngine]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    engine = SparkEngine(worker, MemoryOffsetStore(), session=spark)
    yield engine
    engine.close()


def sink_plan(name: str, tasks: int = 1, **config: str) -> ConnectorPlan:
    """The plan the herder makes: the connector's own task configs, with task.class."""
    props = {"name": name, "connector.class": "SparkSinkConnector", **config}
    connector = SparkSinkConnector()
    assert not [v for v in connector.validate(props) if v.error_messages]
    connector.start(props)
    task_class = default_registry().class_name(connector.task_class())
    configs = [dict(c, **{"task.class": task_class}) for c in connector.task_configs(tasks)]
    return ConnectorPlan(name, "sink", props, configs)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def copied(listener: RecordingListener, name: str, count: int) -> Callable[[], bool]:
    def done() -> bool:
        if any(k[0] == name for k in listener.traces) or name in listener.connector_failures:
            raise AssertionError(f"{name} failed: {listener.traces} {listener.connector_failures}")
        return listener.records.get(name, 0) >= count

    return done


def expected_rows(count: int) -> set[tuple[Any, ...]]:
    return {tuple(order(i).values()) for i in range(count)}


def test_kafka_to_a_parquet_directory_partitioned_by_a_field(
    engine: SparkEngine, spark: Any, kafka_broker: Any, tmp_path: Path
) -> None:
    per_partition = 10_000
    topic = produce_orders(kafka_broker.bootstrap_servers, 2, per_partition)
    out = tmp_path / "orders"
    name = unique("parquet")
    listener = RecordingListener()
    plan = sink_plan(name, tasks=2, topics=topic, **{
        "spark.path": str(out), "spark.partition.by": "region", "flush.size": "10000",
        "spark.option.compression": "zstd",
    })  # fmt: skip
    engine.start_connector(plan, listener)
    wait_for(copied(listener, name, 2 * per_partition), 240, "the sink to copy the topic")
    engine.stop_connector(name)

    frame = spark.read.parquet(str(out))
    rows = {(r.id, r.name, r.region, r.amount) for r in frame.collect()}
    assert frame.count() == 2 * per_partition
    assert rows == {(o["id"], o["name"], o["region"], o["amount"])
                    for o in map(order, range(2 * per_partition))}  # fmt: skip
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("_")) == [
        "region=ap", "region=eu", "region=us",
    ]  # fmt: skip
    assert all(f.name.endswith(".zstd.parquet") for f in out.rglob("part-*"))
    assert list((out / "_sparkcat_commits").rglob("*.json"))  # the commit log
    assert not any((out / "_sparkcat_staging").rglob("part-*"))  # nothing left staged
    assert listener.states[(name, 0)] == "RUNNING"


def test_kafka_to_a_catalog_table(
    engine: SparkEngine, spark: Any, kafka_broker: Any, tmp_path: Path
) -> None:
    topic = produce_orders(kafka_broker.bootstrap_servers, 1, 2000)
    database = f"native_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {database} LOCATION '{tmp_path / 'warehouse'}'")
    table = f"{database}.orders"
    name = unique("table")
    listener = RecordingListener()
    engine.start_connector(sink_plan(name, topics=topic, **{"spark.table": table}), listener)
    wait_for(copied(listener, name, 2000), 90, "the sink to copy the topic")
    engine.stop_connector(name)
    frame = spark.table(table)
    assert frame.count() == 2000
    assert {r.id for r in frame.select("id").collect()} == set(range(2000))
    spark.sql(f"DROP DATABASE {database} CASCADE")


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_kafka_to_a_database_through_spark_jdbc(
    engine: SparkEngine, kafka_broker: Any, kind: str
) -> None:
    database = jdbc_database(kind)
    table = f"orders_{uuid.uuid4().hex[:8]}"
    topic = produce_orders(kafka_broker.bootstrap_servers, 2, 1500)
    name = unique("jdbc")
    listener = RecordingListener()
    plan = sink_plan(name, tasks=2, topics=topic, **database.config(table))
    engine.start_connector(plan, listener)
    try:
        wait_for(copied(listener, name, 3000), 90, "the sink to copy the topic")
    finally:
        engine.stop_connector(name)
    try:
        rows = database.rows(f"SELECT id, name, region, amount FROM {table}")
        database.execute(f"DROP TABLE {table}")
    finally:
        database.engine.dispose()
    assert len(rows) == 3000
    assert rows == {(o["id"], o["name"], o["region"], o["amount"])
                    for o in map(order, range(3000))}  # fmt: skip


STRUCT_KEYED = {
    "type": "struct",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "lookup", "type": "map", "optional": False,
         "keys": {"type": "struct", "optional": False,
                  "fields": [{"field": "x", "type": "int32", "optional": False}]},
         "values": {"type": "string", "optional": False}},
    ],
}  # fmt: skip


def produce_mixed(servers: str) -> str:
    """Records 0-9 and 20-29 are orders; 10-19 have a map with struct keys."""
    topic = unique("mixed")
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the result
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers})
    for i in range(30):
        if 10 <= i < 20:
            payload = {"id": i, "lookup": [[{"x": i}, "v"]]}
            value = orjson.dumps({"schema": STRUCT_KEYED, "payload": payload})
        else:
            value = orjson.dumps({"schema": SCHEMA, "payload": order(i)})
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    return topic


def dlq_count(servers: str, topic: str) -> int:
    """Records in the DLQ topic (0 until it exists); ends read from fetches (tansu)."""
    admin = AdminClient({"bootstrap.servers": servers})
    if topic not in admin.list_topics(timeout=10).topics:
        return 0
    ends = kafka_admin.end_offsets({"bootstrap.servers": servers}, [(topic, 0)])
    return sum(ends.values())


def test_a_schema_the_writer_cannot_take_fails_the_task_or_goes_to_the_dlq(
    engine: SparkEngine, spark: Any, kafka_broker: Any, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = produce_mixed(servers)
    strict, tolerant, dlq = unique("strict"), unique("tolerant"), unique("dlq")
    listener = RecordingListener()
    engine.start_connector(
        sink_plan(strict, topics=topic, **{"spark.path": str(tmp_path / "strict")}), listener
    )
    tolerant_config = {
        "spark.path": str(tmp_path / "tolerant"),
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
    }
    engine.start_connector(sink_plan(tolerant, topics=topic, **tolerant_config), listener)
    wait_for(lambda: listener.states.get((strict, 0)) == "FAILED", 90, "the strict task to fail")
    assert "field 'lookup' is a map with struct keys" in listener.traces[(strict, 0)]
    wait_for(lambda: listener.records.get(tolerant, 0) >= 30, 90, "the tolerant sink")
    wait_for(lambda: dlq_count(servers, dlq) == 10, 30, "ten records in the DLQ")
    engine.stop_connector(tolerant)
    ids = {r.id for r in spark.read.parquet(str(tmp_path / "tolerant")).collect()}
    assert ids == set(range(10)) | set(range(20, 30))
