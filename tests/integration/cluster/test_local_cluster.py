"""``spark.master=local-cluster[2,1,1024]`` works with no other change.

Spark's local-cluster mode starts two executor JVMs on this machine: code is shipped and lease
control goes over the network as on a real cluster (only the interpreter is this machine's).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.worker_process import PLUGINS_DIR, Driver, wait_for, write_properties

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

STRING = "org.apache.kafka.connect.storage.StringConverter"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def driver(kafka_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    root = tmp_path_factory.mktemp("local-cluster")
    props = write_properties(
        root / "worker.properties",
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "listeners": f"http://127.0.0.1:{free_port()}",
            "key.converter": STRING,
            "value.converter": STRING,
            "offset.storage.file.filename": str(root / "offsets"),
            "max.batch.ms": "2000",
            "plugin.path": str(PLUGINS_DIR),
            "spark.master": "local-cluster[2,1,1024]",
            "spark.executor.memory": "512m",
        },
    )
    worker = Driver(props, root / "driver.log", root)
    try:
        worker.start()
        wait_for(lambda: worker.status_code("/connectors") == 200, 240, "REST", 0.25, worker)
        yield worker
    finally:
        worker.cleanup()


def test_local_cluster_copies_and_pauses_within_a_second(driver: Driver) -> None:
    events = driver.cwd / "events.log"
    source, sink, topic = driver.cwd / "in.txt", driver.cwd / "out.txt", unique("lc")
    source.write_text("".join(f"line {i}\n" for i in range(50)))
    driver.create("lc-src", {"connector.class": "FileStreamSource", "file": str(source),
                             "topic": topic})  # fmt: skip
    driver.create("lc-sink", {"connector.class": "FileStreamSink", "file": str(sink),
                              "topics": topic})  # fmt: skip
    driver.create("lc-rec", {
        "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
        "topic": unique("lc-rec"), "events.file": str(events), "max.batch.ms": "60000",
    })  # fmt: skip
    wait_for(lambda: len(lines_of(sink)) >= 50, 240, "the lines in the sink", 0.2, driver)
    wait_for(lambda: any(line.endswith(" poll") for line in lines_of(events)), 60, "polls")

    paused = time.monotonic()
    driver.put("/connectors/lc-rec/pause")
    wait_for(lambda: any(line.endswith(" stop") for line in lines_of(events)), 10, "stop")

    assert time.monotonic() - paused < 1.0
    assert lines_of(sink) == [f"line {i}" for i in range(50)]
    assert "local-cluster" in driver.log_text()
