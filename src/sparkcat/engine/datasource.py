"""The Spark data source that runs Connect tasks: one input partition per task per lease.

Offsets of this source are lease numbers ``{"lease": n}``, not Connect offsets: the truth
about Connect offsets lives in the offset store and the sink consumer groups, which the main
process reads when it writes the plan (see :mod:`sparkcat.engine.plan`). Spark checkpoints
are per-run scratch.

Where each piece runs: ``latestOffset`` and
``partitions`` run in a driver-side runner process and only read the plan file; ``read``
runs on an executor and runs the whole task loop (:func:`sparkcat.runtime.tasks.lease.run_lease`),
yielding one small result row per task. The rows reach the worker's main process through
``foreachBatch`` (:mod:`sparkcat.engine.connector_query`).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from sparkcat.engine import plan as plan_files

FORMAT = "sparkcat_tasks"

RESULT_SCHEMA = (
    "connector string, task int, generation long, records long, polled long, "
    "source_offsets string, sink_offsets string, trace string, elapsed_ms long, "
    "error_metrics string, topics string, task_metrics string"
)


class LeasePartition(InputPartition):
    """One task's lease: the JSON of its LeaseSpec (kept as bytes: cheap to pickle)."""

    def __init__(self, spec_json: bytes) -> None:
        self.spec_json = spec_json


def _lease_of(offset: Any) -> int:
    return int(offset["lease"]) if offset else 0


class LeaseReader(DataSourceStreamReader):
    """Relays the plan file into partitions; runs leases on executors."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.plan_path = options["plan"]

    def initialOffset(self) -> dict[str, int]:
        return {"lease": 0}

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, int]:
        # Returning ``start`` means "no new data": Spark then runs no batch, so an idle or
        # paused connector costs one file read per trigger, not a micro-batch.
        current = _lease_of(start)
        try:
            issued = int(plan_files.read_plan(self.plan_path)["lease"])
        except FileNotFoundError:
            return {"lease": current}
        return {"lease": max(current, issued)}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        doc = plan_files.read_plan(self.plan_path)
        if doc["state"] != plan_files.RUNNING or _lease_of(end) <= _lease_of(start):
            return []
        return [LeasePartition(orjson.dumps(spec)) for spec in doc["specs"]]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LeasePartition)
        doc = orjson.loads(partition.spec_json)
        try:
            from sparkcat.engine.shipping import activate
            from sparkcat.runtime.tasks.lease import run_lease

            result = run_lease(activate(plan_files.spec_from_json(doc)))
        except BaseException:  # whatever broke, the task's status must say it
            yield (
                doc["connector"],
                doc["task"],
                doc["generation"],
                0,
                0,
                "[]",
                "[]",
                traceback.format_exc(),
                0,
                "{}",
                "[]",
                "{}",
            )
            return
        yield (
            result.connector,
            result.task,
            result.generation,
            result.records,
            result.polled,
            orjson.dumps(result.source_offsets).decode(),
            orjson.dumps(result.sink_offsets).decode(),
            result.trace,
            result.elapsed_ms,
            orjson.dumps(result.error_metrics).decode(),
            orjson.dumps(result.topics).decode(),
            orjson.dumps(result.task_metrics).decode(),
        )

    def commit(self, end: dict[str, Any]) -> None:
        # Offsets are committed by the main process in foreachBatch, not here: Spark calls
        # this a batch late and never for the last batch before a stop.
        return None


class LeaseDataSource(DataSource):
    """``spark.readStream.format("sparkcat_tasks").option("plan", path)``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return RESULT_SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return LeaseReader(self.options)
