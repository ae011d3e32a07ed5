"""Executors' Python workers on a local master are forked from sparkcat's daemon
(``sparkcat.engine.daemon``), with the lease modules already imported."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_task_workers_start_with_the_lease_modules_imported(spark: Any) -> None:
    def probe(_: Iterator[Any]) -> Iterator[tuple[bool, bool, bool]]:  # runs in the worker
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            parent = f.read().split(b"\0")
        yield (
            b"sparkcat.engine.daemon" in parent,
            "sparkcat.runtime.tasks.lease" in sys.modules,
            "pyarrow" in sys.modules,
        )

    rows = spark.sparkContext.parallelize(range(4), 4).mapPartitions(probe).collect()
    assert rows and all(row == (True, True, True) for row in rows), rows
