"""The Prometheus exposition, read back with prometheus-client's own parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from sparkcat.runtime.metrics.counters import LeaseCounters
from sparkcat.runtime.metrics.prometheus import prometheus_name, render
from sparkcat.runtime.metrics.registry import ConnectMetrics, ConnectorView


def test_names_follow_the_jmx_exporter() -> None:
    assert (
        prometheus_name("source-task-metrics", "source-record-poll-rate")
        == "kafka_connect_source_task_metrics_source_record_poll_rate"
    )


def test_render_parses_with_labels_and_status() -> None:
    metrics = ConnectMetrics()
    metrics.record_lease("a b", 0, LeaseCounters().report(False, 10, 10, 1.0))
    views = [ConnectorView("a b", "source", "X", "PAUSED", {0: "PAUSED"})]
    text = render(lambda: metrics.collect(views)).decode()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    key = (
        "kafka_connect_source_task_metrics_source_record_write_total",
        (("connector", "a b"), ("task", "0")),
    )
    assert samples[key] == 10
    status = (
        "kafka_connect_connector_task_metrics_status",
        (("connector", "a b"), ("status", "paused"), ("task", "0")),
    )
    assert samples[status] == 1
    assert samples[("kafka_connect_connect_worker_metrics_connector_count", ())] == 1
    assert "# HELP kafka_connect_source_task_metrics_source_record_write_total" in text
