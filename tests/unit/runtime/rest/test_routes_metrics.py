"""``GET /metrics``, ``/ui`` and ``/ui/metrics.json`` over a herder on the engine double."""

from __future__ import annotations

import warnings
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from sparkcat.runtime.metrics.counters import LeaseCounters

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_follow_leases_and_states(client: TestClient, engine: Any) -> None:
    assert client.post("/connectors", json={"name": "src", "config": SOURCE}).status_code == 201
    listener = engine.listeners["src"]
    report = LeaseCounters().report(False, 10_000, 10_000, 2.0, {"commit": 1.0})
    listener.on_lease_metrics("src", 0, report)
    listener.on_task_running("src", 0)
    listener.on_task_metrics("src", 0, {"total-record-failures": 1.0, "total-record-errors": 1.0})

    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    parsed = samples(response.text)
    task = (("connector", "src"), ("task", "0"))
    assert parsed[("kafka_connect_source_task_metrics_source_record_write_total", task)] == 10_000
    assert parsed[("kafka_connect_task_error_metrics_total_record_errors", task)] == 1
    assert parsed[("kafka_connect_connect_worker_metrics_task_startup_success_total", ())] == 1
    assert parsed[("kafka_connect_connect_worker_metrics_connector_startup_success_total", ())] == 1
    status = (("connector", "src"), ("status", "running"))
    assert parsed[("kafka_connect_connector_metrics_status", status)] == 1

    assert client.put("/connectors/src/pause").status_code == 202
    parsed = samples(client.get("/metrics").text)
    paused = (("connector", "src"), ("status", "paused"), ("task", "0"))
    assert parsed[("kafka_connect_connector_task_metrics_status", paused)] == 1

    summary = client.get("/ui/metrics.json").json()
    entry = summary["connectors"]["src"]
    assert entry["tasks"]["0"]["source-task-metrics"]["source-record-write-total"] == 10_000
    assert entry["rate"] > 0
    assert summary["worker"]["connect-worker-metrics"]["connector-count"] == 1

    assert client.delete("/connectors/src").status_code == 204
    assert 'connector="src"' not in client.get("/metrics").text


def test_ui_page_and_assets(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.status_code == 200 and "/ui/app.js" in page.text
    assert client.get("/ui/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/ui/app.css").status_code == 200
    assert client.get("/ui/nope.js").status_code == 404


def test_task_startups_count_when_the_worker_starts_the_tasks(
    client: TestClient, engine: Any, monkeypatch: Any
) -> None:
    worker: tuple[tuple[str, str], ...] = ()
    prefix = "kafka_connect_connect_worker_metrics_task_startup_"
    sink = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt",
            "tasks.max": "3"}  # fmt: skip
    assert client.post("/connectors", json={"name": "snk", "config": sink}).status_code == 201
    parsed = samples(client.get("/metrics").text)  # no lease has reported anything yet
    assert parsed[(prefix + "success_total", worker)] == 3
    assert parsed[(prefix + "attempts_total", worker)] == 3
    assert client.post("/connectors/snk/tasks/1/restart").status_code == 204
    assert samples(client.get("/metrics").text)[(prefix + "success_total", worker)] == 4

    def refuse(plan: Any, listener: Any) -> None:
        raise RuntimeError("no room on the cluster")

    monkeypatch.setattr(engine, "start_connector", refuse)
    assert client.post("/connectors", json={"name": "src", "config": SOURCE}).status_code == 201
    parsed = samples(client.get("/metrics").text)
    assert parsed[(prefix + "failure_total", worker)] == 1
    assert parsed[(prefix + "attempts_total", worker)] == 5
    assert parsed[(prefix + "failure_percentage", worker)] == 0.2


def test_abandoned_task_instances_are_counted(client: TestClient, engine: Any) -> None:
    assert client.post("/connectors", json={"name": "src", "config": SOURCE}).status_code == 201
    name = "kafka_connect_connect_worker_metrics_task_abandoned_total"
    assert samples(client.get("/metrics").text)[(name, ())] == 0
    engine.listeners["src"].on_tasks_abandoned("src", [0])  # as the engine reports a stuck lease
    assert samples(client.get("/metrics").text)[(name, ())] == 1
