"""Kafka Connect's worker metrics as a real worker serves them (``GET /metrics``)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.rest_worker import rest_worker, scrape

WORKER = "kafka_connect_connect_worker_metrics_"


@pytest.fixture
def worker(spark: Any, kafka_broker: Any, plugins_dir: Path, tmp_path: Path) -> Iterator[Any]:
    props = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "120000",  # no lease ends while the test looks
    }
    with rest_worker(spark, props) as client:
        yield client


def started_tasks(events: Path) -> int:
    lines = events.read_text().splitlines() if events.exists() else []
    return sum(1 for line in lines if " start " in f"{line} ")


@pytest.mark.spark
@pytest.mark.broker
def test_task_startups_count_when_the_tasks_start(worker: httpx.Client, tmp_path: Path) -> None:
    events = tmp_path / "events"
    config = {
        "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
        "tasks.max": "3",
        "topic": f"startups-{uuid.uuid4().hex[:8]}",
        "events.file": str(events),
        "records.per.poll": "0",  # every poll returns nothing: the leases just wait
    }
    created = worker.post("/connectors", json={"name": "idle", "config": config})
    assert created.status_code == 201, created.text
    deadline = time.monotonic() + 60
    while started_tasks(events) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert started_tasks(events) == 3, "the three tasks did not start on Spark"
    values = scrape(worker)
    assert values[(WORKER + "task_startup_success_total", "")] == 3
    assert values[(WORKER + "task_startup_attempts_total", "")] == 3
    assert values[(WORKER + "task_startup_failure_total", "")] == 0
    assert values[(WORKER + "task_startup_success_percentage", "")] == 1.0
    assert " stop" not in events.read_text(), "a lease ended: the test proves nothing"
    assert worker.delete("/connectors/idle").status_code == 204
