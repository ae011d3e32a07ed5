"""``sparkcat.Connect`` in one process, on the test session's SparkSession and broker: a
member inside a session whose own query keeps running, and a rejected connector config.
KIP-26's example end to end (FileStreamSource -> topic -> read_stream, value * 2 and a
filter -> write_stream -> FileStreamSink -> exactly the expected lines; Struct values as
typed columns) is docs/embedded.md, run by test_walkthrough.py."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.support.embedded import app_config, create_topics, new_app_id
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.waiting import wait_for

import sparkcat
from sparkcat.embedded import ConnectorConfigError

pytestmark = [pytest.mark.spark, pytest.mark.broker]

TIMEOUT_S = 180.0  # generous: the machine running the suite may be busy


def test_inside_a_session_with_a_running_user_query(
    spark: Any, kafka_broker: Any, tmp_path: Path
) -> None:
    """Connect joins the active session (spark=None); the application's query and the
    connectors both progress; close() leaves the application's query and session running."""
    name = f"user_rate_{uuid.uuid4().hex[:8]}"
    user_query = (
        spark.readStream.format("rate").option("rowsPerSecond", 20).load()
        .writeStream.format("memory").queryName(name).start()
    )  # fmt: skip
    try:
        wait_for(lambda: spark.table(name).count() > 0, TIMEOUT_S, "the user's query", interval=0.2)
        topic = f"copy-{uuid.uuid4().hex[:8]}"
        create_topics(kafka_broker.bootstrap_servers, topic)
        source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
        source_file.write_text("".join(f"line {i}\n" for i in range(50)))
        connect = sparkcat.Connect(
            new_app_id("session"), app_config(kafka_broker.bootstrap_servers)
        )
        try:
            assert connect.spark.sparkContext.applicationId == spark.sparkContext.applicationId
            connect.add_connector("in", {"connector.class": "FileStreamSource",
                                         "file": str(source_file), "topic": topic})  # fmt: skip
            connect.add_connector("out", {"connector.class": "FileStreamSink",
                                          "file": str(sink_file), "topics": topic})  # fmt: skip
            before = spark.table(name).count()
            wait_for(
                lambda: len(lines_of(sink_file)) >= 50, TIMEOUT_S, "the copied lines", interval=0.2
            )
            assert lines_of(sink_file) == [f"line {i}" for i in range(50)]
            assert spark.table(name).count() > before
        finally:
            connect.close()
        connect.close()  # idempotent
        assert user_query.isActive
        after = spark.table(name).count()
        wait_for(
            lambda: spark.table(name).count() > after, TIMEOUT_S, "more user rows", interval=0.2
        )
        assert spark.range(5).count() == 5
    finally:
        user_query.stop()


def test_a_bad_config_raises_kafkas_messages_and_creates_nothing(
    spark: Any, kafka_broker: Any
) -> None:
    """Also: ``rest=True`` serves Kafka's REST API from the application."""
    listener = f"http://127.0.0.1:{free_port()}"
    config = app_config(kafka_broker.bootstrap_servers, listeners=listener)
    connect = sparkcat.Connect(new_app_id("bad"), config, spark=spark, rest=True)
    try:
        assert connect.rest_url.rstrip("/") == listener
        with urllib.request.urlopen(f"{listener}/connector-plugins", timeout=30) as answer:
            plugins = {p["class"] for p in json.loads(answer.read())}
        assert "org.apache.kafka.connect.file.FileStreamSinkConnector" in plugins
        with pytest.raises(ConnectorConfigError) as raised:
            connect.add_connector("broken", {"connector.class": "FileStreamSink",
                                             "tasks.max": "0"})  # fmt: skip
        assert str(raised.value).startswith(
            "Connector configuration is invalid and contains the following "
            f"{len(raised.value.messages)} error(s):"
        )
        assert "Invalid value 0 for configuration tasks.max: Value must be at least 1" in (
            raised.value.messages
        )
        assert "Must configure one of topics or topics.regex" in raised.value.messages
        with pytest.raises(ConnectorConfigError, match="Failed to find any class"):
            connect.add_connector("nope", {"connector.class": "NoSuchConnector"})
        assert connect.connectors() == []
        with urllib.request.urlopen(f"{listener}/connectors", timeout=30) as answer:
            assert json.loads(answer.read()) == []
    finally:
        connect.close()
    connect.close()
    assert connect.closed
