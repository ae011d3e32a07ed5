"""A Spark-native source connector (``SparkSourceConnector``): any Spark reader -> Kafka.

One loop per connector in the worker's main process, every ``poll.interval.ms``:

* a path: the files under ``spark.path`` not copied yet, in (modification time, path)
  order, at most ``spark.max.files.per.batch`` per read; the offset of a file's rows is
  ``{"mtime": ms, "file": path}``, so the next read starts after the last file copied;
* a table (``spark.table``, or ``spark.format=jdbc`` with ``spark.option.dbtable``): the
  rows whose ``spark.incrementing.column`` is above the last value copied, in that column's
  order; the offset is ``{"spark.incrementing.column": value}``.

Spark reads the files or rows (on the executors); each row becomes a :class:`SourceRecord`
whose value is a Struct with the Connect schema of the Spark schema, goes through the
connector's SMTs and converters (the lease pipeline) and to the producer; once every record
is acked, the offsets go to Connect's offset store (partition ``{"spark.path": path}``,
``{"spark.table": table}`` or ``{"spark.option.dbtable": table}``), so the offsets REST API
(KIP-875) and ``initial_offsets`` (KIP-995) work on them. Delivery is at-least-once, as
for any source without ``exactly.once.source.support``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Producer

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord
from sparkcat.engine import native_config as c
from sparkcat.engine import native_schema
from sparkcat.engine.native_loop import NativeLoop
from sparkcat.kafka import clients
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.errors.task import TaskErrorHandling
from sparkcat.runtime.stores.offsets import OffsetStore
from sparkcat.runtime.tasks.lease import LeaseSpec, resolver_for
from sparkcat.runtime.tasks.pipeline import pipeline_for
from sparkcat.runtime.tasks.topic_creation import TopicCreator

log = logging.getLogger(__name__)

TASK = 0
FLUSH_TIMEOUT_S = 60.0
# At most this many table rows per read (they pass through the worker's main process).
TABLE_BATCH_ROWS = 100_000


class NativeSourceQuery(NativeLoop):
    """The data plane of one SparkSourceConnector (the engine's per-connector handle)."""

    kind = "source"

    def __init__(
        self,
        session: Any,
        plan: ConnectorPlan,
        listener: EngineListener,
        worker_config: Mapping[str, str],
        offset_store: OffsetStore,
    ) -> None:
        super().__init__(session, plan, listener, worker_config)
        self._offsets = offset_store
        self._producer: Producer | None = None

    # -- hooks of NativeLoop ----------------------------------------------------------------

    def _tasks(self) -> tuple[int, ...]:
        return (TASK,)  # one reader of the whole path or table

    def _started(self) -> None:
        self._listener.on_task_running(self.name, TASK)

    def _idle_wait_s(self) -> float:
        return int(self._plan.connector_config.get(c.POLL_INTERVAL_MS_CONFIG) or 1000) / 1000.0

    def _stopped(self) -> None:
        if self._producer is not None:
            self._producer.flush(5)

    # -- internals ---------------------------------------------------------------------------

    def _cycle(self) -> int:
        config = self._config()
        partition = c.source_partition(self._plan.connector_config)  # stored: unresolved
        if config.get(c.PATH_CONFIG):
            frame, file_offset = self._new_files(config, partition)
        else:
            frame, file_offset = self._new_rows(config, partition), None
        if frame is None:
            return 0
        table = frame.toArrow()
        if table.num_rows == 0:
            if file_offset is not None:  # files without rows: remember them anyway
                self._commit(partition, file_offset)
            return 0
        schema = native_schema.connect_schema(frame.schema)
        values = native_schema.rows_to_structs(schema, table)
        if file_offset is not None:
            # A read of several files is one unit: its rows carry the last file's offset.
            offsets = [file_offset] * len(values)
        else:
            column = config[c.INCREMENTING_COLUMN_CONFIG]
            offsets = [{c.INCREMENTING_COLUMN_CONFIG: _jsonable(v)}
                       for v in table.column(column).to_pylist()]  # fmt: skip
        topic = config[c.TOPIC_CONFIG]
        records = [
            SourceRecord(partition, offset, topic, None, None, None, schema, value)
            for offset, value in zip(offsets, values, strict=True)
        ]
        self._produce(config, records)
        log.debug("%s: %d records produced up to %s", self.name, len(records), offsets[-1])
        self._commit(partition, offsets[-1])
        self._listener.on_records(self.name, TASK, len(records))
        return len(records)

    def _commit(self, partition: dict[str, Any], offset: Any) -> None:
        self._offsets.put_batch(self.name, [(partition, dict(offset))])
        self._offsets.flush()

    def _reader(self, config: dict[str, str]) -> Any:
        reader = self._session.read.format((config.get(c.FORMAT_CONFIG) or "parquet").strip())
        reader = reader.options(**c.spark_options(config))
        declared = config.get(c.SCHEMA_CONFIG)
        return reader.schema(declared) if declared else reader

    # -- paths -------------------------------------------------------------------------------

    def _new_files(
        self, config: dict[str, str], partition: dict[str, Any]
    ) -> tuple[Any, dict[str, Any] | None]:
        """A frame of the next files after the stored offset, and the offset of the last."""
        root = config[c.PATH_CONFIG]
        last = self._offsets.get(self.name, partition) or {}
        mark = (int(last.get("mtime", -1)), str(last.get("file", "")))
        files = sorted(f for f in _list_files(self._session, root) if f > mark)
        files = files[: int(config.get(c.MAX_FILES_CONFIG) or 1000)]
        if not files:
            return None, None
        frame = self._reader(config).option("basePath", root).load([f for _, f in files])
        mtime, name = files[-1]
        return frame, {"mtime": mtime, "file": name}

    # -- tables ------------------------------------------------------------------------------

    def _new_rows(self, config: dict[str, str], partition: dict[str, Any]) -> Any:
        """A frame of (at most TABLE_BATCH_ROWS) rows above the stored column value, in the
        column's order: of a catalog table, or of a JDBC table (Spark pushes the filter, and
        where the dialect can, the ordered limit, down to the database)."""
        from pyspark.sql import functions as f

        column = config[c.INCREMENTING_COLUMN_CONFIG]
        last = (self._offsets.get(self.name, partition) or {}).get(c.INCREMENTING_COLUMN_CONFIG)
        if config.get(c.TABLE_CONFIG):
            options = c.spark_options(config)
            frame = self._session.read.options(**options).table(config[c.TABLE_CONFIG])
        else:
            frame = self._reader(config).load()
        if last is not None:
            frame = frame.where(f.col(column) > f.lit(last))
        return frame.orderBy(column).limit(TABLE_BATCH_ROWS)

    # -- Kafka ---------------------------------------------------------------------------------

    def _produce(self, config: dict[str, str], records: list[SourceRecord]) -> None:
        if self._producer is None:
            self._producer = Producer(
                clients.producer_config(
                    self._worker, config, clients.producer_client_id(self.name, TASK)
                )
            )
        worker = self._worker_config()
        resolve = resolver_for(worker)
        pipeline = pipeline_for(self.name, self._plan.generation, config, worker, resolve)
        errors = TaskErrorHandling.for_task(self.name, TASK, config, worker, sink=False)
        spec = LeaseSpec(self.name, TASK, self._plan.generation, "source", {}, dict(config),
                         dict(worker), 0, 0, None)  # fmt: skip
        creator = TopicCreator(spec)
        known: set[str] = set()

        def ensure_topic(topic: Any) -> None:
            if topic not in creator.known:
                creator.ensure(topic)
            known.add(topic)

        failures: list[Any] = []

        def on_delivery(err: Any, msg: Any) -> None:
            if err is not None:
                failures.append(err)

        try:
            pipeline.produce_records(records, self._producer, on_delivery, ensure_topic, known,
                                     errors=errors.operator)  # fmt: skip
            left = self._producer.flush(FLUSH_TIMEOUT_S)
        finally:
            errors.close()
        if left or failures:
            raise ConnectError(f"{left} record(s) not acked, {len(failures)} failed: "
                               f"{failures[:3]}; offsets not committed")  # fmt: skip


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def _list_files(session: Any, root: str) -> list[tuple[int, str]]:
    """(modification ms, URI) of the data files under ``root``; names starting with ``_``
    or ``.`` (Spark's metadata, files being written) are skipped."""
    sc = session.sparkContext
    path = sc._jvm.org.apache.hadoop.fs.Path(root)
    fs = path.getFileSystem(sc._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return []
    base = str(path.toUri().getPath()).rstrip("/") + "/"
    found = fs.listFiles(path, True)
    out = []
    while found.hasNext():
        status = found.next()
        uri = status.getPath()
        relative = str(uri.toUri().getPath())[len(base) :]
        if any(part.startswith(("_", ".")) for part in relative.split("/")):
            continue
        out.append((int(status.getModificationTime()), str(uri.toString())))
    return out
