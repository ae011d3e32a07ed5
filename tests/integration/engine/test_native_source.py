"""SparkSourceConnector on the real broker and the session's SparkSession: a Parquet
directory -> Kafka, files added while it runs picked up, an SMT applied on the way, offsets
in Connect's offset store; the new rows of a table (a catalog table, PostgreSQL and MariaDB
through Spark's JDBC reader) -> Kafka, rows added while it runs picked up, offsets resumed
after a restart."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.support.engine import RecordingListener
from tests.support.spark_jdbc import JdbcDatabase, jdbc_database
from tests.support.topics import TopicReader
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.engine.native_connectors import SparkSourceConnector
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.tasks import client_cache

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
    engine = SparkEngine(worker, store, session=spark)
    yield engine
    engine.close()
    client_cache.close_all()  # the topic-creation admin clients of the sources


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


def test_parquet_files_to_kafka_with_new_files_and_an_smt(
    engine: SparkEngine, kafka_broker: Any, tmp_path: Path, store: MemoryOffsetStore
) -> None:
    directory = tmp_path / "in"
    write_parquet(directory, "a.parquet", range(0, 300))
    write_parquet(directory, "b.parquet", range(300, 500))
    topic = f"from-spark-{uuid.uuid4().hex[:8]}"
    name = f"spark-source-{uuid.uuid4().hex[:8]}"
    listener = RecordingListener()
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
        assert not listener.traces and not listener.connector_failures, (
            listener.traces,
            listener.connector_failures,
        )
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
    assert listener.traces == {} and listener.connector_failures == {}


class SourceTable:
    """A table ``(id BIGINT, label)`` the table source reads: a catalog table of the session,
    or a PostgreSQL or MariaDB table through Spark's JDBC reader."""

    def __init__(self, kind: str, spark: Any, tmp_path: Path) -> None:
        self.kind, self.spark = kind, spark
        self.name = f"rows_{uuid.uuid4().hex[:8]}"
        if kind == "catalog":
            self.database: JdbcDatabase | None = None
            self.schema = f"native_{uuid.uuid4().hex[:8]}"
            spark.sql(f"CREATE DATABASE {self.schema} LOCATION '{tmp_path / 'warehouse'}'")
            self.name = f"{self.schema}.{self.name}"
            spark.sql(f"CREATE TABLE {self.name} (id BIGINT, label STRING) USING parquet")
        else:
            self.database = jdbc_database(kind)
            self.database.execute(f"CREATE TABLE {self.name} (id BIGINT PRIMARY KEY, "
                                  "label VARCHAR(40))")  # fmt: skip

    def config(self) -> dict[str, str]:
        column = {"spark.incrementing.column": "id"}
        if self.database is None:
            return {"spark.table": self.name, **column}
        return {**self.database.config(self.name), **column}

    def partition(self) -> dict[str, str]:
        key = "spark.table" if self.database is None else "spark.option.dbtable"
        return {key: self.name}

    def insert(self, ids: range) -> None:
        rows = [(i, f"row-{i}") for i in ids]
        if self.database is None:
            frame = self.spark.createDataFrame(rows, "id BIGINT, label STRING")
            frame.write.insertInto(self.name)
        else:
            mark = "%s"
            self.database.execute(f"INSERT INTO {self.name} VALUES ({mark}, {mark})", rows)

    def drop(self) -> None:
        if self.database is None:
            self.spark.sql(f"DROP DATABASE {self.schema} CASCADE")
        else:
            self.database.execute(f"DROP TABLE {self.name}")
            self.database.engine.dispose()


@pytest.mark.parametrize("kind", ["catalog", "postgresql", "mariadb"])
def test_new_rows_of_a_table_to_kafka_and_offsets_resume_after_a_restart(
    engine: SparkEngine,
    spark: Any,
    kafka_broker: Any,
    tmp_path: Path,
    store: MemoryOffsetStore,
    kind: str,
) -> None:
    table = SourceTable(kind, spark, tmp_path)
    table.insert(range(0, 300))
    topic = f"from-table-{uuid.uuid4().hex[:8]}"
    name = f"table-source-{uuid.uuid4().hex[:8]}"
    listener = RecordingListener()
    plan = source_plan(name, topic=topic, **{"poll.interval.ms": "100", **table.config()})
    reader = TopicReader(kafka_broker.bootstrap_servers, topic)

    def read(count: int) -> bool:
        assert not listener.traces and not listener.connector_failures, (
            listener.traces,
            listener.connector_failures,
        )
        return reader.at_least(count)

    def offset() -> Any:
        return (store.get(name, table.partition()) or {}).get("spark.incrementing.column")

    try:
        engine.start_connector(plan, listener)
        wait_for(lambda: read(300), 120, "the table's rows")
        table.insert(range(300, 450))  # while the connector runs
        wait_for(lambda: read(450), 60, "the rows added while running")
        wait_for(lambda: offset() == 449, 10, "the offset of the last row")
        engine.stop_connector(name)
        table.insert(range(450, 500))  # while it is stopped
        engine.start_connector(plan, listener)  # resumes after the stored offset
        wait_for(lambda: read(500), 60, "the rows added while stopped")
        wait_for(lambda: offset() == 499, 10, "the offset of the last row")
        reader.at_least(501)  # anything produced twice would show here
    finally:
        engine.stop_connector(name)
        reader.consumer.close()
        table.drop()
    assert sorted(v["id"] for v in reader.values) == list(range(500))
    assert all(v["label"] == f"row-{v['id']}" for v in reader.values)
    assert listener.traces == {} and listener.connector_failures == {}
