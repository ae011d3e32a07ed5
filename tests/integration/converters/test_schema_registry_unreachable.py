"""A Schema Registry converter whose ``schema.registry.url`` is a closed port fails its task
(``errors.tolerance=none``) within 30 s, with the registry's URL in the trace of
``GET /connectors/<name>/status``, as Confluent's converters do (a network error while
serializing or deserializing, which Connect does not retry) — rather than retrying, hanging,
or dropping the records while the task says RUNNING.

A real worker: an embedded Connect member on the test session's SparkSession and broker,
serving Kafka's REST API."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.embedded import app_config, create_topics, new_app_id
from tests.support.ports import free_port
from tests.support.waiting import wait_for

import sparkcat

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

AVRO = "io.confluent.connect.avro.AvroConverter"
FAIL_WITHIN_S = 30.0
START_TIMEOUT_S = 180.0  # until the task has a status at all: the machine may be busy


@pytest.fixture
def connect(spark: Any, kafka_broker: Any) -> Iterator[Any]:
    listener = f"http://127.0.0.1:{free_port()}"
    config = app_config(kafka_broker.bootstrap_servers, listeners=listener)
    member = sparkcat.Connect(new_app_id("registry"), config, spark=spark, rest=True)
    yield member
    member.close()


def rest_status(connect: Any, name: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{connect.rest_url.rstrip('/')}/connectors/{name}/status") as r:
        return dict(json.load(r))


def task_failed_within(connect: Any, name: str, seconds: float) -> dict[str, Any]:
    """The task's status once FAILED, which must come within ``seconds`` of it first having
    a status (starting the query may take longer on a busy machine: not the converter's)."""

    def task() -> dict[str, Any] | None:
        try:
            tasks = rest_status(connect, name)["tasks"]
        except urllib.error.HTTPError as e:  # 404 until the member has read the new config
            if e.code != 404:
                raise
            return None
        return dict(tasks[0]) if tasks else None

    wait_for(task, START_TIMEOUT_S, f"a task of {name}", interval=0.2)
    started = time.monotonic()
    failed = wait_for(
        lambda: (t := task()) is not None and t["state"] == "FAILED" and t,
        seconds,
        lambda: f"{name}'s task to fail: {rest_status(connect, name)}",
        interval=0.2,
    )
    assert time.monotonic() - started <= seconds
    return dict(failed)


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def test_a_source_fails_naming_the_registry(connect: Any, tmp_path: Path) -> None:
    url = closed_url()
    lines = tmp_path / "lines.txt"
    lines.write_text("a\nb\n")
    connect.add_connector("avro-source", {
        "connector.class": "FileStreamSource", "file": str(lines),
        "topic": f"avro-{uuid.uuid4().hex[:8]}",
        "value.converter": AVRO, "value.converter.schema.registry.url": url,
    })  # fmt: skip
    task = task_failed_within(connect, "avro-source", FAIL_WITHIN_S)
    assert url in task["trace"]
    assert "Failed to serialize Avro data" in task["trace"]


def test_a_sink_fails_naming_the_registry(connect: Any, kafka_broker: Any, tmp_path: Path) -> None:
    from confluent_kafka import Producer

    url, topic = closed_url(), f"avro-{uuid.uuid4().hex[:8]}"
    create_topics(kafka_broker.bootstrap_servers, topic)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    producer.produce(topic, b"\x00\x00\x00\x00\x01\x02a")  # Confluent's wire format, id 1
    assert producer.flush(30) == 0
    connect.add_connector("avro-sink", {
        "connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": topic,
        "value.converter": AVRO, "value.converter.schema.registry.url": url,
    })  # fmt: skip
    task = task_failed_within(connect, "avro-sink", FAIL_WITHIN_S)
    assert url in task["trace"]
    assert f"Failed to deserialize data for topic {topic} to Avro" in task["trace"]
