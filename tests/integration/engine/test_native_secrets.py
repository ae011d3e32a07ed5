"""Config-provider variables in Spark-native connectors, run by a standalone herder on the
session's SparkSession, driven over REST: ``${file:...}`` in ``spark.option.*`` (the JDBC
URL and password of the machine's PostgreSQL), in ``spark.path`` and in an SMT's config are
resolved where they are used (the driver hands Spark the real values, the executors build
the record pipeline from them), while REST, the offsets and sparkcat's logs only ever hold
the ``${...}`` form."""

from __future__ import annotations

import logging
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from tests.support.orders import produce_orders
from tests.support.spark_jdbc import DB_NAME, jdbc_database
from tests.support.topics import TopicReader
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.worker_config import WorkerConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

pytestmark = [pytest.mark.spark, pytest.mark.broker]

KAFKA = "org.apache.kafka.common.config.provider."


@dataclass
class Worker:
    client: TestClient
    servers: str
    secrets: Path
    values: dict[str, str]

    def placeholder(self, key: str) -> str:
        return f"${{file:{self.secrets}:{key}}}"


@pytest.fixture
def worker(spark: Any, kafka_broker: Any, tmp_path: Path) -> Iterator[Worker]:
    vault = tmp_path / "vault"
    vault.mkdir()
    marker = uuid.uuid4().hex[:10]
    values = {
        # ApplicationName makes the URL unique, so the test can look for it in the logs.
        "url": f"jdbc:postgresql://127.0.0.1:5432/{DB_NAME}?ApplicationName=sec{marker}",
        "password": f"pw-{marker}",
        "path": str(tmp_path / f"out-{marker}"),
        "origin": f"origin-{marker}",
    }
    secrets = vault / "spark.properties"
    secrets.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    props = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": str(tmp_path / "unused.offsets"),
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(vault),
    }
    store = MemoryOffsetStore()
    engine = SparkEngine(props, store, session=spark)
    herder = StandaloneHerder(WorkerConfig(props), engine, store, default_registry(), "w:1")
    herder.mark_ready()
    try:
        with TestClient(create_app(herder), raise_server_exceptions=False) as client:
            yield Worker(client, kafka_broker.bootstrap_servers, secrets, values)
    finally:
        for name in herder.connectors():
            herder.delete_connector(name)
        engine.close()
        client_cache.close_all()


def _create(worker: Worker, name: str, config: dict[str, str]) -> None:
    answer = worker.client.post("/connectors", json={"name": name, "config": config})
    assert answer.status_code == 201, answer.text


def _shown(worker: Worker, name: str) -> list[dict[str, str]]:
    """The connector config as every REST view shows it."""
    client = worker.client
    config = client.get(f"/connectors/{name}/config").json()
    tasks = client.get(f"/connectors/{name}/tasks").json()
    info = client.get(f"/connectors/{name}").json()["config"]
    return [config, info, *(t["config"] for t in tasks)]


def _not_logged(caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    """No line of sparkcat's own loggers (at DEBUG) holds a secret. (py4j's DEBUG log echoes
    every command sent to the JVM, options included; the CLI keeps py4j at WARNING.)"""
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("sparkcat")]
    assert lines, "nothing was logged"
    for secret in secrets:
        assert not [line for line in lines if secret in line], secret


def _running(worker: Worker, name: str) -> bool:
    status = worker.client.get(f"/connectors/{name}/status").json()
    failed = [t for t in status.get("tasks", []) if t["state"] == "FAILED"]
    assert not failed, failed[0].get("trace")
    return status.get("connector", {}).get("state") == "RUNNING"


def test_jdbc_url_and_password_from_a_file_read_postgresql_rows(
    worker: Worker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkcat")
    database = jdbc_database("postgresql")
    table = f"secret_rows_{uuid.uuid4().hex[:8]}"
    database.execute(f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, label VARCHAR(40))")
    try:
        database.execute(f"INSERT INTO {table} VALUES (%s, %s)",
                         [(i, f"row-{i}") for i in range(40)])  # fmt: skip
        topic = f"secret-rows-{uuid.uuid4().hex[:8]}"
        name = f"jdbc-secret-{uuid.uuid4().hex[:6]}"
        placeholders = {
            "spark.option.url": worker.placeholder("url"),
            "spark.option.password": worker.placeholder("password"),
        }
        _create(worker, name, {
            "connector.class": "SparkSourceConnector", "spark.format": "jdbc",
            "spark.option.user": "postgres", "spark.option.driver": "org.postgresql.Driver",
            "spark.option.dbtable": table, "spark.incrementing.column": "id",
            "topic": topic, "poll.interval.ms": "200", **placeholders,
        })  # fmt: skip
        reader = TopicReader(worker.servers, topic)
        wait_for(lambda: _running(worker, name) and reader.at_least(40), 180, "the 40 rows")
        assert sorted(r["payload"]["id"] for r in reader.values) == list(range(40))

        for shown in _shown(worker, name):
            assert {k: shown[k] for k in placeholders} == placeholders
        offsets = worker.client.get(f"/connectors/{name}/offsets").json()
        assert offsets == {"offsets": [{"partition": {"spark.option.dbtable": table},
                                        "offset": {"spark.incrementing.column": 39}}]}  # fmt: skip
        assert worker.client.delete(f"/connectors/{name}").status_code == 204
    finally:
        database.execute(f"DROP TABLE {table}")
        database.engine.dispose()
    _not_logged(caplog, worker.values["url"], worker.values["password"])


def test_parquet_path_and_an_smt_value_from_a_file(
    worker: Worker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkcat")
    topic = produce_orders(worker.servers, 2, 500)
    name = f"parquet-secret-{uuid.uuid4().hex[:6]}"
    placeholders = {
        "spark.path": worker.placeholder("path"),
        "transforms.origin.static.value": worker.placeholder("origin"),
    }
    _create(worker, name, {
        "connector.class": "SparkSinkConnector", "topics": topic, "tasks.max": "2",
        "flush.size": "1000", "transforms": "origin",
        "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.origin.static.field": "origin", **placeholders,
    })  # fmt: skip
    out = Path(worker.values["path"])

    def written() -> bool:
        _running(worker, name)  # fails the wait on a FAILED task, with its trace
        files = [f for f in out.rglob("part-*.parquet") if "_sparkcat" not in str(f)]
        return sum(pq.read_metadata(f).num_rows for f in files) >= 1000

    wait_for(written, 180, "the 1000 records in the resolved directory")
    for shown in _shown(worker, name):
        assert {k: shown[k] for k in placeholders} == placeholders
    assert worker.client.delete(f"/connectors/{name}").status_code == 204
    table = pq.ParquetDataset(str(out), ignore_prefixes=["_", "."]).read()
    assert table.num_rows == 1000
    assert set(table.column("origin").to_pylist()) == {worker.values["origin"]}  # executors
    _not_logged(caplog, worker.values["path"], worker.values["origin"])
