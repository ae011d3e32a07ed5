"""The reading side of every write of a Spark-native sink: fixed Kafka offset ranges, one
Spark partition per Connect task, read on the executors.

The driver (:mod:`sparkcat.engine.native_sink`) decides each write's ranges
``[start, end)`` per topic-partition before the write starts, so a write reads the same
records however often Spark runs or retries its tasks. A write's frame is
``spark.range(n, numPartitions=n).mapInArrow(read_tasks)``: partition ``i`` holds the one row
``i`` and reads task ``i``'s ranges. (``mapInArrow`` runs in the executors' pooled Python
workers; a Python data source would also start planner Python processes on the driver, each
importing sparkcat, on the first write of every worker.) :func:`read_tasks` / :class:`RangeRun`
consume the ranges (``assign``, never a group), runs the connector's converters and SMTs
(the record pipeline of every sink lease), and yields Arrow record batches in the write's
schema. A record whose value does not fit that schema (another schema, or one the writer
cannot take) goes through ``errors.tolerance``: the task fails naming the field, or the
record is skipped and reported (log, DLQ).
"""

from __future__ import annotations

import base64
import pickle
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pyarrow as pa
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from pyspark.sql.types import StructType

from sparkcat.api import Schema
from sparkcat.api.batch import SinkRecordBatch
from sparkcat.api.errors import ConnectError, DataError
from sparkcat.kafka import clients
from sparkcat.runtime.config_provider import resolve as resolve_config
from sparkcat.runtime.config_provider import resolve_worker
from sparkcat.runtime.errors.errant import SINK_TASK_CLASS
from sparkcat.runtime.errors.operator import ProcessingContext, Stage
from sparkcat.runtime.errors.task import TaskErrorHandling
from sparkcat.runtime.tasks.lease import resolver_for
from sparkcat.runtime.tasks.pipeline import pipeline_for

_BATCH = 10_000
# A range that makes no progress for this long fails the write (a broker gone, a deleted
# topic): the driver reports the task FAILED with this text.
_STALL_S = 120.0


class RangeRun:
    """Consumes one task's ranges and turns them into Arrow batches (see module docs)."""

    def __init__(self, spec: dict[str, Any], target: pa.Schema) -> None:
        from sparkcat.engine import native_schema

        self.schema_of = native_schema
        self.spec = spec
        self.target = target
        self.connector: str = spec["connector"]
        self.task: int = int(spec["task"])
        # Shipped unresolved; resolved here on the executor, as a task lease does.
        raw_worker: dict[str, str] = spec["worker_config"]
        connector_config = resolve_config(raw_worker, spec["connector_config"])
        worker_config = resolve_worker(raw_worker)
        resolve = resolver_for(worker_config)
        self.pipeline = pipeline_for(
            self.connector, int(spec["generation"]), connector_config, worker_config, resolve
        )
        self.errors = TaskErrorHandling.for_task(
            self.connector, self.task, connector_config, worker_config, sink=True
        )
        self.planned: Schema | None = None
        if spec.get("schema") is not None:
            self.planned = self._schema_from(spec["schema"])
        self.fmt: str = spec["format"]
        self.declared = bool(spec.get("declared"))
        self.ok_schemas: set[Schema] = set()
        self.config = clients.consumer_config(
            worker_config,
            connector_config,
            clients.consumer_client_id(self.connector, self.task),
            clients.consumer_group_id(self.connector),
        )

    @staticmethod
    def _schema_from(doc: str) -> Schema:
        schema: Schema = pickle.loads(base64.b64decode(doc))  # our own driver wrote it
        return schema

    def batches(self) -> Iterator[pa.RecordBatch]:
        ends = {(t, int(p)): int(e) for t, p, s, e in self.spec["ranges"] if int(e) > int(s)}
        if not ends:
            return
        nexts = {(t, int(p)): int(s) for t, p, s, e in self.spec["ranges"] if int(e) > int(s)}
        consumer = Consumer(self.config)
        try:
            consumer.assign(
                [KafkaTopicPartition(t, int(p), int(s)) for t, p, s, e in self.spec["ranges"]
                 if int(e) > int(s)]
            )  # fmt: skip
            yield from self._consume(consumer, ends, nexts)
            self.errors.await_reports()
        finally:
            consumer.close()
            self.errors.close()

    def _consume(
        self,
        consumer: Consumer,
        ends: dict[tuple[str, int], int],
        nexts: dict[tuple[str, int], int],
    ) -> Iterator[Any]:
        last_progress = time.monotonic()
        while ends:
            # consume() returns early only once it has the number asked for: ask for no more
            # than the ranges still hold, or a one-record write waits out the whole timeout.
            left = sum(max(end - nexts[key], 0) for key, end in ends.items())
            messages = consumer.consume(max(1, min(_BATCH, left)), 0.5)
            keep = []
            for msg in messages:
                if msg.error() is not None:
                    keep.append(msg)  # the pipeline reports it
                    continue
                key = (str(msg.topic()), int(msg.partition() or 0))
                end = ends.get(key)
                offset = int(msg.offset() or 0)
                if end is None or offset >= end:
                    continue
                nexts[key] = max(nexts[key], offset + 1)
                keep.append(msg)
            if keep:
                last_progress = time.monotonic()
                batch = self._convert(keep)
                if batch is not None and batch.num_rows:
                    yield batch
            self._drop_finished(consumer, ends)
            if ends and time.monotonic() - last_progress > _STALL_S:
                raise ConnectError(
                    f"{self.connector}-{self.task}: no records for {_STALL_S:.0f} s before the "
                    f"end of the planned ranges {sorted(ends.items())}"
                )

    @staticmethod
    def _drop_finished(consumer: Consumer, ends: dict[tuple[str, int], int]) -> None:
        """Forget partitions whose position reached the range end (control records and
        compaction leave offsets without a message, so positions, not messages, decide)."""
        positions = consumer.position([KafkaTopicPartition(t, p) for t, p in ends])
        for tp in positions:
            if tp.offset >= 0 and tp.offset >= ends[(tp.topic, tp.partition)]:
                del ends[(tp.topic, tp.partition)]

    def _convert(self, messages: list[Any]) -> pa.RecordBatch | None:
        offsets: dict[tuple[str, int], int] = {}
        records = self.pipeline.to_sink_records(messages, offsets, self.errors.operator)
        planned = self.planned
        if isinstance(records, SinkRecordBatch) and planned is not None:
            # The columnar path: one schema object for the whole batch is the common case
            # (list.count compares by identity first), checked against the plan once.
            schemas, column = records.value_schemas(), records.values()
            first = schemas[0] if schemas else None
            if (
                first is not None
                and schemas.count(first) == len(schemas)
                and (first in self.ok_schemas or self._problem(first, None) is None)
                and None not in column
            ):
                self.ok_schemas.add(first)
                return self.schema_of.to_record_batch(planned, column, self.target)
        values = []
        bad: list[tuple[Any, str]] = []
        for record in records:
            value = record.value
            if value is None:
                continue  # a tombstone: a row of nulls would be a lie
            schema = record.value_schema
            if schema is planned or (schema is not None and schema in self.ok_schemas):
                values.append(value)
                continue
            problem = self._problem(schema, value)
            if problem is None:
                assert schema is not None
                self.ok_schemas.add(schema)
                values.append(value)
            else:
                bad.append((record, problem))
        if bad:
            self._report(messages, bad)
        if not values:
            return None
        return self.schema_of.to_record_batch(planned, values, self.target)

    def _problem(self, schema: Schema | None, value: Any) -> str | None:
        planned = self.planned
        if schema is None:
            if planned is None and self.declared and isinstance(value, dict):
                return None  # schemaless under spark.value.schema
            return "the value has no schema (set spark.value.schema, or use a converter " \
                   "with schemas)"  # fmt: skip
        problem = self.schema_of.unwritable(schema, self.fmt)
        if problem:
            return problem
        if planned is None or schema != planned:
            return f"its value schema differs from the schema of this write ({planned})"
        return None

    def _report(self, messages: list[Any], bad: list[tuple[Any, str]]) -> None:
        by_position = {(m.topic(), m.partition(), m.offset()): m for m in messages}
        for record, problem in bad:
            original = by_position.get(
                (record.original_topic, record.original_kafka_partition,
                 record.original_kafka_offset)
            )  # fmt: skip
            where = f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"
            error = DataError(f"Record {where} cannot be written: {problem}")
            context = ProcessingContext(original if original is not None else record)
            try:
                self.errors.operator.execute_failed(context, Stage.TASK_PUT, SINK_TASK_CLASS, error)
            except ConnectError as exc:
                # Spark shows the Python worker's last exception only: say what failed in it.
                raise ConnectError(f"{exc}: {error}") from error


def task_specs(plan: dict[str, Any]) -> list[bytes]:
    """One JSON spec per task of a write's plan (its ranges with the write's common keys)."""
    common = {k: v for k, v in plan.items() if k != "tasks"}
    return [orjson.dumps({**common, **task}) for task in plan["tasks"]]


def read_tasks(
    specs: list[bytes], schema: StructType, rows: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function, on an executor: the Arrow batches of the tasks whose indexes
    are the input rows (one per partition)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    target = to_arrow_schema(schema, timezone="UTC")
    for batch in rows:
        for index in batch.column(0).to_pylist():
            yield from RangeRun(orjson.loads(specs[index]), target).batches()
