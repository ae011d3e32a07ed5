"""The session sparkcat builds checkpoints its streaming queries with Spark's FileSystem-based
manager (no `readlink`/`chmod` processes per micro-batch), and a query resumes from such a
checkpoint."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sparkcat.engine.session import CHECKPOINT_MANAGER_KEY

pytestmark = pytest.mark.spark


def _run_batches(spark: Any, checkpoint: Path, batches: int) -> list[int]:
    seen: list[int] = []
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 10)
        .load()
        .writeStream.foreachBatch(lambda _, batch_id: seen.append(batch_id))
        .trigger(processingTime="200 milliseconds")
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        deadline = time.monotonic() + 60
        while len(seen) < batches and time.monotonic() < deadline and query.isActive:
            time.sleep(0.05)
    finally:
        query.stop()
    return seen


def test_queries_checkpoint_with_the_file_system_based_manager(spark: Any, tmp_path: Path) -> None:
    assert spark.conf.get(CHECKPOINT_MANAGER_KEY).endswith(".FileSystemBasedCheckpointFileManager")
    first = _run_batches(spark, tmp_path / "checkpoint", 3)
    assert first[:3] == [0, 1, 2]
    # a batch starts once the one before it is committed (the last one may not be yet)
    assert (tmp_path / "checkpoint" / "commits" / str(first[-2])).is_file()
    again = _run_batches(spark, tmp_path / "checkpoint", 1)
    assert again and again[0] >= first[-1]  # resumed, not from batch 0
