"""Per-task error-handling metrics (Kafka's ``ErrorHandlingMetrics``, group
``task-error-metrics``).

One instance counts what one lease saw; :meth:`ErrorHandlingMetrics.snapshot` is that lease's
contribution, which the worker adds up per task (counters summed, ``last-error-timestamp``
the latest). Updates take a lock: producer delivery callbacks may run on another lease's
thread when a producer is shared.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

__all__ = ["METRIC_NAMES", "ErrorHandlingMetrics", "merge_metrics"]

FAILURES = "total-record-failures"
ERRORS = "total-record-errors"
SKIPPED = "total-records-skipped"
RETRIES = "total-retries"
LOGGED = "total-errors-logged"
DLQ_REQUESTS = "deadletterqueue-produce-requests"
DLQ_FAILURES = "deadletterqueue-produce-failures"
LAST_ERROR = "last-error-timestamp"

METRIC_NAMES = (FAILURES, ERRORS, SKIPPED, RETRIES, LOGGED, DLQ_REQUESTS, DLQ_FAILURES, LAST_ERROR)
"""Kafka's metric names, in Kafka's order."""


class ErrorHandlingMetrics:
    """Cumulative counters of one task (one lease); ``wall_ms`` stamps the last error."""

    def __init__(self, wall_ms: Callable[[], int] | None = None) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(METRIC_NAMES, 0)
        self._wall_ms = wall_ms or (lambda: int(time.time() * 1000))

    def _add(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def record_failure(self) -> None:
        self._add(FAILURES)

    def record_error(self) -> None:
        self._add(ERRORS)

    def record_skipped(self) -> None:
        self._add(SKIPPED)

    def record_retry(self) -> None:
        self._add(RETRIES)

    def record_error_logged(self) -> None:
        self._add(LOGGED)

    def record_dlq_produce_request(self) -> None:
        self._add(DLQ_REQUESTS)

    def record_dlq_produce_failed(self) -> None:
        self._add(DLQ_FAILURES)

    def record_error_timestamp(self) -> None:
        now = self._wall_ms()
        with self._lock:
            self._counts[LAST_ERROR] = now

    def get(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def snapshot(self) -> dict[str, float]:
        """Every metric, or ``{}`` when nothing happened (the common, cheap case)."""
        with self._lock:
            if not any(self._counts.values()):
                return {}
            return {name: float(value) for name, value in self._counts.items()}


def merge_metrics(total: Mapping[str, float], delta: Mapping[str, float]) -> dict[str, float]:
    """``total`` plus one lease's ``delta``: counters add up, the error timestamp is the
    latest. Every name of :data:`METRIC_NAMES` is present in the result."""
    merged = {name: float(total.get(name, 0.0)) for name in METRIC_NAMES}
    for name, value in delta.items():
        if name == LAST_ERROR:
            merged[name] = max(merged[name], float(value))
        elif name in merged:
            merged[name] += float(value)
    return merged
