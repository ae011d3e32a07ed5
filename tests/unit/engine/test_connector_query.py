"""Lease bounds of a connector's micro-batches (no Spark needed)."""

from __future__ import annotations

from sparkcat.engine.connector_query import batch_max_ms, lease_bounds

BOUNDS = lease_bounds({"max.batch.ms": "500"}, {"offset.flush.interval.ms": "10000"})


def test_idle_leases_stretch_while_every_task_is_idle() -> None:
    assert batch_max_ms(BOUNDS, []) == 500
    assert batch_max_ms(BOUNDS, [0, 0]) == 500
    assert batch_max_ms(BOUNDS, [1, 2]) == 1000
    assert batch_max_ms(BOUNDS, [3, 3]) == 4000
    assert batch_max_ms(BOUNDS, [30, 40]) == 10_000  # offset.flush.interval.ms at most


def test_one_idle_task_does_not_pace_a_busy_one() -> None:
    # Task 1 finished long ago, task 0 (just failed over here) has data: the batch, which
    # ends with its longest lease, keeps the busy cadence.
    assert batch_max_ms(BOUNDS, [0, 25]) == 500
