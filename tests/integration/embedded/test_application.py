"""The embedded API in an application's own process, as an application runs it: no
SparkSession given (Connect builds one, on a thread of its own), a FileStreamSource, then the
application's ``read_stream`` -> cast, double, filter -> ``write_stream`` to a topic, whose
records the test reads from the broker.

``write_stream`` used to fail there with ``[DATA_SOURCE_NOT_FOUND] ... sparkcat_kafka``: Spark
looks a Python data source up in the calling thread's active session, and the session Connect
built was active only on the thread that built it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.support.embedded import app_config, create_topics, new_app_id
from tests.support.files import lines_of
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.broker]

APPLICATION = Path(__file__).with_name("application.py")
TIMEOUT_S = 240.0  # a cold JVM, a connector and a query on a busy machine


def read_values(servers: str, topic: str, until: int, timeout: float) -> set[int]:
    """The distinct values of ``topic`` (as ints), once there are ``until`` of them."""
    from confluent_kafka import Consumer

    consumer = Consumer({
        "bootstrap.servers": servers, "group.id": f"check-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })  # fmt: skip
    consumer.subscribe([topic])
    values: set[int] = set()
    try:
        wait_for(
            lambda: _poll_into(consumer, values) >= until,
            timeout,
            lambda: f"{values} in {topic}",
            interval=0.2,
        )
    finally:
        consumer.close()
    return values


def _poll_into(consumer: Any, values: set[int]) -> int:
    for message in consumer.consume(100, 0.5):
        if message.error() is None and message.value() is not None:
            values.add(int(message.value()))
    return len(values)


def test_write_stream_in_an_application_without_a_session(
    kafka_broker: Any, plugins_dir: Path, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    topic, out_topic = f"numbers-{uuid.uuid4().hex[:8]}", f"doubled-{uuid.uuid4().hex[:8]}"
    create_topics(servers, topic, out_topic)
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("".join(f"{i}\n" for i in range(1, 11)))
    config = app_config(servers, **{"plugin.path": str(plugins_dir)})
    log = tmp_path / "application.log"
    env = {**os.environ, "LOG_DIR": str(tmp_path)}
    for inherited in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):  # as a fresh shell has
        env.pop(inherited, None)
    args = [json.dumps(config), new_app_id("application"), str(numbers), topic, out_topic]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(APPLICATION), *args],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, start_new_session=True,
        )  # fmt: skip
    try:

        def writing() -> bool:
            exited = proc.poll()
            assert exited is None, f"the application exited ({exited}):\n{log.read_text()[-4000:]}"
            return any(line.startswith("WRITING") for line in lines_of(log))

        wait_for(
            writing, TIMEOUT_S, lambda: f"write_stream:\n{log.read_text()[-3000:]}", interval=0.2
        )
        assert read_values(servers, out_topic, 5, TIMEOUT_S) == {12, 14, 16, 18, 20}
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
