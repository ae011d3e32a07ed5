"""What a lease measures on the executor: a few plain numbers per batch, never per record.

The lease loops call :meth:`LeaseCounters.batch` once per polled/consumed batch and
:meth:`LeaseCounters.call` once per ``poll()``/``put()`` they time with :attr:`clock`; at the
end :meth:`LeaseCounters.report` is the lease's contribution, which travels back to the
worker in :attr:`~sparkcat.runtime.tasks.lease.LeaseResult.task_metrics` and is added up there
(:mod:`sparkcat.runtime.metrics.registry`). Keys of the report are the ``REPORT_*`` names.

:data:`ENABLED` switches the hooks off (``bench/bench_metrics.py`` measures the difference):
then :func:`new_counters` returns :class:`NullCounters`, whose clock and hooks do nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

__all__ = ["ENABLED", "LeaseCounters", "NullCounters", "new_counters"]

ENABLED = True

REPORT_IN = "records.in"  # polled (source) / read from Kafka (sink)
REPORT_OUT = "records.out"  # written to Kafka (source) / sent to put (sink)
REPORT_BATCHES = "batches"
REPORT_BATCH_MAX = "batch.max"
REPORT_CALLS = "calls"  # timed poll() / put() calls
REPORT_CALL_S = "call.s"
REPORT_CALL_MAX_S = "call.max.s"
REPORT_LEASE_S = "lease.s"
REPORT_PARTITIONS = "partitions"
REPORT_LAG_MAX = "lag.max"
REPORT_LAG = "lag"
REPORT_COMMIT = "commit"  # 1: the lease left offsets to commit; 0: nothing to commit
REPORT_COMMIT_S = "commit.s"  # added on the driver: time to commit the offsets
REPORT_KIND = "sink"  # 1 for a sink lease, 0 for a source lease
# Exactly-once source leases only (KIP-618): the transactions they committed, by record count.
REPORT_TX_COUNT = "transactions"
REPORT_TX_SIZE = "transaction.size"  # records in all of them
REPORT_TX_SIZE_MIN = "transaction.size.min"
REPORT_TX_SIZE_MAX = "transaction.size.max"


def _zero() -> float:
    return 0.0


class LeaseCounters:
    """Counters of one lease (one thread: no locking)."""

    __slots__ = ("batch_max", "batches", "call_max_s", "call_s", "calls", "clock")

    def __init__(self) -> None:
        self.clock: Callable[[], float] = time.perf_counter
        self.batches = 0
        self.batch_max = 0
        self.calls = 0
        self.call_s = 0.0
        self.call_max_s = 0.0

    def batch(self, size: int) -> None:
        """One non-empty batch of ``size`` records entered the task loop."""
        self.batches += 1
        if size > self.batch_max:
            self.batch_max = size

    def call(self, started: float) -> None:
        """A timed ``poll()``/``put()`` that began at ``clock()`` = ``started`` returned."""
        spent = self.clock() - started
        self.calls += 1
        self.call_s += spent
        if spent > self.call_max_s:
            self.call_max_s = spent

    def report(
        self,
        sink: bool,
        records_in: int,
        records_out: int,
        lease_s: float,
        extra: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """The lease's numbers for the worker (``extra``: partitions, lag, commit)."""
        report = {
            REPORT_KIND: 1.0 if sink else 0.0,
            REPORT_IN: float(records_in),
            REPORT_OUT: float(records_out),
            REPORT_BATCHES: float(self.batches),
            REPORT_BATCH_MAX: float(self.batch_max),
            REPORT_CALLS: float(self.calls),
            REPORT_CALL_S: self.call_s,
            REPORT_CALL_MAX_S: self.call_max_s,
            REPORT_LEASE_S: lease_s,
        }
        if extra:
            report.update((key, float(value)) for key, value in extra.items())
        return report


class NullCounters(LeaseCounters):
    """Metrics off: the hooks and the clock cost one no-op call each."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__()
        self.clock = _zero

    def batch(self, size: int) -> None:
        return None

    def call(self, started: float) -> None:
        return None

    def report(
        self,
        sink: bool,
        records_in: int,
        records_out: int,
        lease_s: float,
        extra: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        return {}


def new_counters() -> LeaseCounters:
    return LeaseCounters() if ENABLED else NullCounters()
