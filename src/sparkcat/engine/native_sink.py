"""A Spark-native sink connector (``SparkSinkConnector``): Kafka -> any Spark writer.

Unlike plugin sinks, no task instance runs per lease: the worker's main process runs one
loop per connector that, write after write, (1) decides the Kafka offset ranges of the next
write (at most ``flush.size`` records; fewer once ``rotate.interval.ms`` passed since the
last write), (2) learns the write's schema from its first records (converters and SMTs
applied, as the executors will), (3) has Spark read those ranges on the executors, one input
partition per Connect task (:mod:`sparkcat.engine.native_read`) and write them with the
configured writer, then (4) commits: through the commit log for a path
(:mod:`sparkcat.engine.native_commit`: exactly-once), else offsets after the write
(at-least-once; Delta's idempotent-write options make Delta tables exactly-once). See
``docs/spark-connectors.md``.

Each write is a Spark batch job rather than a streaming micro-batch: its schema comes from
the data (a streaming source's schema is fixed when the query starts) and its ranges are
planned here, where the offsets are committed.
"""

from __future__ import annotations

import base64
import functools
import logging
import pickle
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer

from sparkcat.api import Schema
from sparkcat.api.errors import DataError
from sparkcat.api.records import TopicPartition
from sparkcat.engine import native_config as c
from sparkcat.engine import native_read, native_schema, native_watch
from sparkcat.engine.native_commit import CommitLog, Entry, log_id
from sparkcat.engine.native_loop import NativeLoop
from sparkcat.engine.native_watch import WATCH_CONSUMER, SinkWatch
from sparkcat.engine.sink_positions import SinkPositions
from sparkcat.kafka import admin as kafka_admin
from sparkcat.kafka import clients
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import RetryWithToleranceOperator
from sparkcat.runtime.tasks.lease import resolver_for
from sparkcat.runtime.tasks.pipeline import pipeline_for

log = logging.getLogger(__name__)

Range = tuple[str, int, int, int]  # topic, partition, start, end (exclusive)

# How many leading records of a write are read on the driver to learn its schema.
SAMPLE_RECORDS = 500
IDLE_WAIT_S = 0.2
# How long one cycle waits for records (the loop's stop and pause latency while idle).
WATCH_WAIT_S = 0.5
# A sink that wrote this recently is busy: its waits check for a stop more often.
BUSY_S = 5.0


class NativeSinkQuery(NativeLoop):
    """The data plane of one SparkSinkConnector (the engine's per-connector handle)."""

    kind = "sink"

    def __init__(
        self,
        session: Any,
        plan: ConnectorPlan,
        listener: EngineListener,
        worker_config: Mapping[str, str],
    ) -> None:
        super().__init__(session, plan, listener, worker_config)
        self._positions: SinkPositions | None = None
        self._consumer: Consumer | None = None
        self._watch: SinkWatch | None = None
        self._watched = False
        self._probe: Consumer | None = None
        self._log: CommitLog | None = None
        self._seq = 0
        self._last_write = time.monotonic()
        self._schema: Schema | None = None

    # -- hooks of NativeLoop ----------------------------------------------------------------

    def _idle_wait_s(self) -> float:
        return 0.0 if self._watched else IDLE_WAIT_S  # the watch itself waited

    def _forget(self) -> None:
        self._schema = None
        self._positions_reset()

    def _restarted(self) -> None:
        self._schema = None

    def _stopped(self) -> None:
        with self._lock:
            self._positions_reset()

    # -- internals ---------------------------------------------------------------------------

    def _positions_reset(self) -> None:
        if self._positions is not None:
            self._positions.close()
            self._positions = None
        for consumer in (self._consumer, self._probe):
            if consumer is not None:
                consumer.close()
        self._consumer = self._probe = None
        self._watch = None
        self._log = None

    def _setup(self) -> None:
        """Clients, and recovery from the commit log (path targets)."""
        config = self._config()
        self._positions = SinkPositions(self.name, config, self._worker)
        self._consumer = Consumer({
            **clients.consumer_config(
                self._worker, config, f"connector-consumer-{self.name}-planner",
                clients.consumer_group_id(self.name),
            ),
            **WATCH_CONSUMER,
        })  # fmt: skip
        self._watch = SinkWatch(self._consumer, SAMPLE_RECORDS)
        self._probe = Consumer(kafka_admin.end_offsets_probe_config(
            clients.consumer_config(self._worker, config, f"connector-consumer-{self.name}-ends")
        ))  # fmt: skip
        self._positions.refresh(force=True)
        path = self._config().get(c.PATH_CONFIG)
        if path:
            self._log = CommitLog(self._session, path, log_id(self.name, self._plan.task_ids()))
            entry = self._log.recover()
            self._seq = entry.seq if entry is not None else 0
            if entry is not None:
                current = {(t, p): -1 if o is None else o for t, p, o in self._all_positions()}
                ahead = [(t, p, o) for t, p, o in entry.offsets if o > current.get((t, p), -1)]
                self._positions.commit(ahead)
        if not self._failed:
            self._each_task(self._listener.on_task_running)

    def _all_positions(self) -> list[tuple[str, int, int | None]]:
        assert self._positions is not None
        return [r for rs in self._positions.assignment(1) for r in rs]

    def _cycle(self) -> bool:
        if self._positions is None:
            self._setup()
        positions, watch = self._positions, self._watch
        assert positions is not None and watch is not None
        positions.refresh()
        self._watched = False
        positions_now = {(t, p): o for t, p, o in self._all_positions()}
        busy = time.monotonic() - self._last_write < BUSY_S
        slice_s = native_watch.BUSY_SLICE_S if busy else native_watch.IDLE_SLICE_S
        if not watch.wait(positions_now, WATCH_WAIT_S, self._interrupted, slice_s):
            self._watched = True
            return False
        config = self._config()
        flush = int(config.get(c.FLUSH_SIZE_CONFIG) or 100_000)
        rotate_s = int(config.get(c.ROTATE_INTERVAL_MS_CONFIG) or 1000) / 1000.0
        tasks = self._plan.task_ids()
        per_task = positions.assignment(len(self._plan.task_configs))
        available: dict[int, list[Range]] = {}
        pending = 0
        assert self._probe is not None
        # Not get_watermark_offsets(): ListOffsets(latest) falls short on the embedded broker.
        ends = watch.fresh_ends() or kafka_admin.end_offsets(
            self._probe, [(t, p) for task in tasks for t, p, _ in per_task[task]]
        )
        for task in tasks:
            for topic, partition, start in per_task[task]:
                high = ends[TopicPartition(topic, partition)]
                begin = watch.start(topic, partition) if start is None else start
                if high > begin:
                    available.setdefault(task, []).append((topic, partition, begin, high))
                    pending += high - begin
        if not pending:
            return False
        if pending < flush and time.monotonic() - self._last_write < rotate_s:
            return False
        ranges = _cap(available, flush)
        self._write(ranges)
        return True

    def _write(self, ranges: dict[int, list[Range]]) -> None:
        config = self._config()
        fmt = (config.get(c.FORMAT_CONFIG) or "parquet").strip().lower()
        sampled = time.monotonic()
        schema, spark_schema = self._schema_for(ranges, config, fmt)
        log.debug("%s: schema sampled in %.2f s", self.name, time.monotonic() - sampled)
        plan = {
            "connector": self.name,
            "generation": self._plan.generation,
            # Unresolved: the executors resolve them (native_read), as for task leases.
            "connector_config": self._plan.connector_config,
            "worker_config": self._worker,
            "format": fmt,
            "schema": None if schema is None else base64.b64encode(pickle.dumps(schema)).decode(),
            "declared": schema is None and bool(config.get(c.VALUE_SCHEMA_CONFIG)),
            "tasks": [{"task": t, "ranges": rs} for t, rs in sorted(ranges.items())],
        }
        specs = native_read.task_specs(plan)
        frame = self._session.range(0, len(specs), 1, len(specs)).mapInArrow(
            functools.partial(native_read.read_tasks, specs, spark_schema), spark_schema
        )
        offsets = [(t, p, e) for rs in ranges.values() for t, p, _, e in rs]
        started = time.monotonic()
        has_rows = schema is not None or bool(config.get(c.VALUE_SCHEMA_CONFIG))
        self._save(frame, config, fmt, has_rows, offsets)
        self._last_write = time.monotonic()
        assert self._positions is not None and self._watch is not None
        self._positions.commit(offsets)
        self._watch.written()
        log.debug("%s: wrote %s in %.2f s", self.name, offsets, time.monotonic() - started)
        for task, rs in ranges.items():
            self._listener.on_records(self.name, task, sum(e - s for _, _, s, e in rs))
            self._listener.on_task_running(self.name, task)

    def _save(
        self,
        frame: Any,
        config: dict[str, str],
        fmt: str,
        has_rows: bool,
        offsets: list[tuple[str, int, int]],
    ) -> None:
        if not has_rows:
            frame.count()  # nothing writable: the executors only report the records
            return
        options = c.spark_options(config)
        partition_by = [p.strip() for p in (config.get(c.PARTITION_BY_CONFIG) or "").split(",")
                        if p.strip()]  # fmt: skip
        writer = frame.write.format(fmt).options(**options).mode("append")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        table = config.get(c.TABLE_CONFIG)
        if self._log is not None:
            self._seq += 1
            seq = self._seq
            writer.mode("errorifexists").save(self._log.staging_uri(seq))
            files = self._log.staged_files(seq)
            self._log.commit(seq, offsets, files)
            self._log.publish(Entry(seq, offsets, files))
            self._log.clean(seq)
        elif table:
            if fmt == "delta":  # Delta's idempotent writes: a replayed batch is skipped
                writer = writer.option("txnAppId", f"sparkcat-{self.name}").option(
                    "txnVersion", str(self._version_after(offsets))
                )
            writer.saveAsTable(table)
        else:
            writer.save()

    def _version_after(self, offsets: list[tuple[str, int, int]]) -> int:
        """The sum of every partition's next offset once this write is in: it grows with
        every write and is the same when a write is replayed (Delta's ``txnVersion``)."""
        after = {(t, p): -1 if o is None else o for t, p, o in self._all_positions()}
        after.update({(t, p): o for t, p, o in offsets})
        return sum(max(o, 0) for o in after.values())

    def _schema_for(
        self, ranges: dict[int, list[Range]], config: dict[str, str], fmt: str
    ) -> tuple[Schema | None, Any]:
        """The Connect schema of this write (from its first records, converted and
        transformed as on the executors) and its Spark schema."""
        declared = config.get(c.VALUE_SCHEMA_CONFIG)
        schema = self._sample(ranges, config, fmt)
        if schema is not None:
            return schema, native_schema.spark_schema(schema)
        if declared:
            from pyspark.sql.types import StructType

            parsed = StructType.fromDDL(declared)
            return None, parsed
        from pyspark.sql.types import IntegerType, StructField, StructType

        return None, StructType([StructField("_unused", IntegerType())])

    def _sample(
        self, ranges: dict[int, list[Range]], config: dict[str, str], fmt: str
    ) -> Schema | None:
        watch = self._watch
        assert watch is not None
        resolve = resolver_for(self._worker)
        pipeline = pipeline_for(self.name, self._plan.generation, config, self._worker_config(),
                                resolve)  # fmt: skip
        # Failures here are only peeked at: the executors report them (log, DLQ, tolerance).
        operator = RetryWithToleranceOperator.from_config(
            {"errors.tolerance": "all"}, ErrorHandlingMetrics()
        )
        strict = (config.get("errors.tolerance") or "none").strip().lower() != "all"
        for topic, partition, start, end in [r for rs in ranges.values() for r in rs]:
            messages = watch.messages(topic, partition, start, end)
            for record in pipeline.to_sink_records(messages, {}, operator):
                if record.value is None:
                    continue
                where = f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"
                if record.value_schema is None:
                    if strict and not config.get(c.VALUE_SCHEMA_CONFIG):
                        raise DataError(
                            f"Record {where} has no value schema: set spark.value.schema, or "
                            "use a converter with schemas (JsonConverter schemas.enable=true)"
                        )
                    continue
                problem = native_schema.unwritable(record.value_schema, fmt)
                if problem is None:
                    return record.value_schema
                if strict:
                    raise DataError(f"Record {where} cannot be written: {problem}")
        return None


def _cap(available: dict[int, list[Range]], flush: int) -> dict[int, list[Range]]:
    """At most ``flush`` records over all ranges, shared round-robin across partitions."""
    flat = [(task, r) for task, rs in sorted(available.items()) for r in rs]
    share = max(1, flush // max(1, len(flat)))
    out: dict[int, list[Range]] = {}
    left = flush
    for task, (topic, partition, start, end) in flat:
        take = min(end - start, share, left)
        if take <= 0:
            continue
        out.setdefault(task, []).append((topic, partition, start, start + take))
        left -= take
    return out
