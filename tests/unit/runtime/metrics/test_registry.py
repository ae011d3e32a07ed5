"""ConnectMetrics: lease reports added up per task into Kafka Connect's metric groups."""

from __future__ import annotations

import math

import pytest

from sparkcat.runtime.metrics.counters import LeaseCounters, NullCounters
from sparkcat.runtime.metrics.prometheus import render
from sparkcat.runtime.metrics.registry import ConnectMetrics, ConnectorView, Metric
from sparkcat.runtime.metrics.stats import MetricConfig


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def values(metrics: list[Metric], group: str, **tags: str) -> dict[str, float]:
    wanted = tuple(tags.items())
    return {m.name: m.value for m in metrics if m.group == group and m.tags == wanted}


def source_report(polled: int, written: int, batches: list[int]) -> dict[str, float]:
    counters = LeaseCounters()
    for size in batches:
        counters.batch(size)
        counters.call(counters.clock())
    return counters.report(False, polled, written, 1.0, {"commit": 1.0})


def test_source_leases_add_up_with_windowed_rates() -> None:
    clock = Clock()
    metrics = ConnectMetrics(MetricConfig(window_ms=1000, samples=2, clock=clock))
    metrics.tasks_started("src", [0])
    metrics.task_state("src", 0, "RUNNING")
    metrics.record_lease("src", 0, source_report(6000, 5990, [4000, 2000]))
    clock.now += 1.0
    metrics.record_lease("src", 0, source_report(4000, 4010, [4000]))
    collected = metrics.collect([ConnectorView("src", "source", "FileStreamSource", "RUNNING",
                                               {0: "RUNNING"})])  # fmt: skip
    task = {"connector": "src", "task": "0"}
    source = values(collected, "source-task-metrics", **task)
    assert source["source-record-poll-total"] == 10_000
    assert source["source-record-write-total"] == 10_000
    assert source["source-record-write-rate"] == pytest.approx(10_000 / 1.0)
    assert source["poll-batch-max-time-ms"] >= 0
    generic = values(collected, "connector-task-metrics", **task)
    assert generic["batch-size-max"] == 4000
    assert generic["batch-size-avg"] == pytest.approx(10_000 / 3)
    assert generic["running-ratio"] == pytest.approx(1.0)
    worker = values(collected, "connect-worker-metrics")
    assert worker["connector-count"] == 1 and worker["task-count"] == 1
    assert worker["task-startup-success-total"] == 1
    assert worker["task-startup-attempts-total"] == 1
    per_connector = values(collected, "connect-worker-metrics", connector="src")
    assert per_connector["connector-running-task-count"] == 1
    status = [m for m in collected if m.group == "connector-task-metrics" and m.name == "status"]
    assert [m.text for m in status] == ["running"]


def test_transaction_sizes_of_exactly_once_source_tasks() -> None:
    clock = Clock()
    metrics = ConnectMetrics(MetricConfig(window_ms=1000, samples=2, clock=clock))
    tx = {"transactions": 3, "transaction.size": 600, "transaction.size.min": 100,
          "transaction.size.max": 300}  # fmt: skip
    metrics.record_lease("eos", 0, LeaseCounters().report(False, 600, 600, 1.0, tx))
    clock.now += 1.0
    one = {"transactions": 1, "transaction.size": 50, "transaction.size.min": 50,
           "transaction.size.max": 50}  # fmt: skip
    metrics.record_lease("eos", 0, LeaseCounters().report(False, 50, 50, 1.0, one))
    metrics.record_lease("plain", 0, source_report(10, 10, [10]))
    views = [ConnectorView(n, "source", "X", "RUNNING", {0: "RUNNING"}) for n in ("eos", "plain")]
    collected = metrics.collect(views)
    source = values(collected, "source-task-metrics", connector="eos", task="0")
    assert source["transaction-size-min"] == 50
    assert source["transaction-size-max"] == 300
    assert source["transaction-size-avg"] == pytest.approx(650 / 4)
    plain = values(collected, "source-task-metrics", connector="plain", task="0")
    assert "transaction-size-avg" not in plain  # only exactly-once tasks have them, as Kafka
    exposed = render(lambda: collected).decode()  # what GET /metrics serves
    line = 'kafka_connect_source_task_metrics_transaction_size_max{connector="eos",task="0"} 300.0'
    assert line in exposed
    clock.now += 10.0  # out of the window: Kafka's NaN
    late = values(metrics.collect(views), "source-task-metrics", connector="eos", task="0")
    assert math.isnan(late["transaction-size-min"]) and math.isnan(late["transaction-size-avg"])


def test_sink_lag_commits_and_errors() -> None:
    metrics = ConnectMetrics()
    extra = {"partitions": 3, "lag.max": 7, "lag": 12, "commit": 1, "commit.s": 0.002}
    report = LeaseCounters().report(True, 100, 90, 0.5, extra)
    metrics.record_lease("snk", 1, report)
    metrics.record_lease("snk", 1, LeaseCounters().report(True, 0, 0, 0.5, {"commit": 0}))
    metrics.record_errors("snk", 1, {"total-record-errors": 2.0, "last-error-timestamp": 5.0})
    collected = metrics.collect([ConnectorView("snk", "sink", "FileStreamSink", "RUNNING",
                                               {1: "FAILED"})])  # fmt: skip
    sink = values(collected, "sink-task-metrics", connector="snk", task="1")
    assert sink["sink-record-read-total"] == 100
    assert sink["sink-record-send-total"] == 90
    assert sink["partition-count"] == 3
    assert sink["sink-record-lag-max"] == 7
    assert sink["offset-commit-completion-total"] == 1
    assert sink["offset-commit-skip-total"] == 1
    assert values(collected, "connector-task-metrics", connector="snk", task="1")[
        "offset-commit-max-time-ms"
    ] == pytest.approx(2.0)
    errors = values(collected, "task-error-metrics", connector="snk", task="1")
    assert errors["total-record-errors"] == 2 and errors["last-error-timestamp"] == 5
    assert errors["total-records-skipped"] == 0
    assert metrics.current_lag("snk") == 12
    assert metrics.current_lag("other") is None


def test_rebalance_metrics_only_once_rebalanced() -> None:
    metrics = ConnectMetrics()
    assert not [m for m in metrics.collect([]) if m.group == "connect-worker-rebalance-metrics"]
    metrics.rebalance_started()
    metrics.rebalance_completed(4)
    rebalance = values(metrics.collect([]), "connect-worker-rebalance-metrics")
    assert rebalance["completed-rebalances-total"] == 1
    assert rebalance["epoch"] == 4 and rebalance["rebalancing"] == 0
    assert not math.isnan(rebalance["rebalance-max-time-ms"])


def test_null_counters_report_nothing() -> None:
    counters = NullCounters()
    counters.batch(5)
    counters.call(counters.clock())
    assert counters.report(False, 5, 5, 1.0) == {}
