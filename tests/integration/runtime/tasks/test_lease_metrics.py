"""Task metrics measured by real leases against the session broker (no Spark), added up by
the worker's registry and read back through the Prometheus text."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Literal

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from prometheus_client.parser import text_string_to_metric_families

from sparkcat.runtime.metrics.prometheus import render
from sparkcat.runtime.metrics.registry import ConnectMetrics, ConnectorView
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
TOTAL = 10_000


def lease(
    servers: str,
    kind: Literal["source", "sink"],
    name: str,
    task_config: dict[str, str],
    assignment: tuple[tuple[str, int, int | None], ...] = (),
    connector_config: dict[str, str] | None = None,
    max_records: int = TOTAL,
) -> LeaseResult:
    worker = {"bootstrap.servers": servers, "key.converter": STRING, "value.converter": STRING}
    return run_lease(
        LeaseSpec(
            connector=name, task=0, generation=1, kind=kind, task_config=task_config,
            connector_config=connector_config or {}, worker_config=worker, max_ms=20_000,
            max_records=max_records, control=None, assignment=assignment,
        )
    )  # fmt: skip


def scrape(metrics: ConnectMetrics, views: list[ConnectorView]) -> dict[tuple[str, str], float]:
    """``(prometheus name, connector) -> value`` for task 0 of each connector."""
    text = render(lambda: metrics.collect(views)).decode()
    return {
        (s.name, s.labels["connector"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.labels.get("task") == "0" and "status" not in s.labels
    }


def test_ten_thousand_records_through_a_source_and_a_sink(servers: str, tmp_path: Path) -> None:
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"line-{i}\n" for i in range(TOTAL)))
    topic, source, sink = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("metrics", "src", "snk"))
    metrics = ConnectMetrics()
    file_source = {
        "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask",
        "file": str(source_file),
        "topic": topic,
    }
    result = lease(servers, "source", source, file_source)
    assert result.trace is None and result.records == TOTAL
    metrics.record_lease(source, 0, result.task_metrics)

    file_sink = {
        "task.class": "org.apache.kafka.connect.file.FileStreamSinkTask",
        "file": str(sink_file),
        "topics": topic,
    }
    result = lease(servers, "sink", sink, file_sink, assignment=((topic, 0, None),))
    assert result.trace is None and result.records == TOTAL
    metrics.record_lease(sink, 0, result.task_metrics)

    views = [ConnectorView(source, "source", "FileStreamSource", "RUNNING", {0: "RUNNING"}),
             ConnectorView(sink, "sink", "FileStreamSink", "RUNNING", {0: "RUNNING"})]  # fmt: skip
    values = scrape(metrics, views)
    assert values[("kafka_connect_source_task_metrics_source_record_poll_total", source)] == TOTAL
    assert values[("kafka_connect_source_task_metrics_source_record_write_total", source)] == TOTAL
    assert values[("kafka_connect_source_task_metrics_source_record_write_rate", source)] > 0
    assert values[("kafka_connect_source_task_metrics_poll_batch_max_time_ms", source)] >= 0
    assert values[("kafka_connect_connector_task_metrics_batch_size_max", source)] > 0
    assert values[("kafka_connect_sink_task_metrics_sink_record_read_total", sink)] == TOTAL
    assert values[("kafka_connect_sink_task_metrics_sink_record_send_total", sink)] == TOTAL
    assert values[("kafka_connect_sink_task_metrics_partition_count", sink)] == 1
    assert values[("kafka_connect_sink_task_metrics_sink_record_lag_max", sink)] == 0
    assert values[("kafka_connect_sink_task_metrics_put_batch_max_time_ms", sink)] >= 0
    assert values[("kafka_connect_sink_task_metrics_offset_commit_completion_total", sink)] == 1
    assert metrics.current_lag(sink) == 0


def test_a_failing_record_shows_in_the_error_metrics(servers: str, tmp_path: Path) -> None:
    topic, name = f"bad-{uuid.uuid4().hex[:8]}", f"snk-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers})
    for i in range(100):
        producer.produce(topic, b'{"n": 1, broken' if i == 42 else b'{"n": %d}' % i)
    assert producer.flush(10) == 0
    file_sink = {
        "task.class": "org.apache.kafka.connect.file.FileStreamSinkTask",
        "file": str(tmp_path / "o"),
        "topics": topic,
    }
    connector = {"errors.tolerance": "all", "value.converter": JSON,
                 "value.converter.schemas.enable": "false"}  # fmt: skip
    result = lease(servers, "sink", name, file_sink, assignment=((topic, 0, None),),
                   connector_config=connector, max_records=100)  # fmt: skip
    assert result.trace is None
    metrics = ConnectMetrics()
    metrics.record_lease(name, 0, result.task_metrics)
    metrics.record_errors(name, 0, result.error_metrics)
    values = scrape(metrics, [ConnectorView(name, "sink", "FileStreamSink", "RUNNING",
                                            {0: "RUNNING"})])  # fmt: skip
    assert values[("kafka_connect_sink_task_metrics_sink_record_read_total", name)] == 100
    assert values[("kafka_connect_sink_task_metrics_sink_record_send_total", name)] == 99
    assert values[("kafka_connect_task_error_metrics_total_record_errors", name)] == 1
    assert values[("kafka_connect_task_error_metrics_total_record_failures", name)] == 1
    assert values[("kafka_connect_task_error_metrics_total_records_skipped", name)] == 1
    assert values[("kafka_connect_task_error_metrics_last_error_timestamp", name)] > 0
