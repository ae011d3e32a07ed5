"""The Spark side of the embedded API (:mod:`sparkcat.embedded`): which SparkSession the
connectors run on, and the application's streams to and from Connect topics over
:mod:`sparkcat.engine.connect_kafka`.

``read_stream`` learns the columns from the first record of the topics: a Struct value's
fields become typed columns (:mod:`sparkcat.engine.connect_types`), any other value one
``value`` column; the key, topic, partition, offset, timestamp and headers come beside them.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.readwriter import DataStreamWriter

from sparkcat.api.data import Type
from sparkcat.api.errors import ConnectError
from sparkcat.engine import connect_kafka, connect_types

log = logging.getLogger(__name__)

READ_GROUP = "sparkcat-embedded-streams"
# Sessions the data source is registered on; weakly, so a new session never passes for a
# collected one that had the same id().
_registered: weakref.WeakSet[SparkSession] = weakref.WeakSet()
_register_lock = threading.Lock()
_start_lock = threading.Lock()
START_WAIT_S = 60.0
START_ATTEMPTS = 3


@dataclass(frozen=True)
class StreamSettings:
    """The worker config and the converters a stream uses (``None``: the worker's)."""

    worker: Mapping[str, str]
    converter: str | None = None
    key_converter: str | None = None
    converter_config: Mapping[str, Any] = field(default_factory=dict)

    def converters_option(self) -> str:
        from sparkcat.runtime.tasks.pipeline import converter_settings

        # Kafka's rule for a connector's converters: given ones with their own props, else
        # the worker's with the worker's props.
        given: dict[str, str] = {}
        for kind, name in (("key", self.key_converter), ("value", self.converter)):
            if name:
                given[f"{kind}.converter"] = name
                given.update({f"{kind}.converter.{k}": str(v)
                              for k, v in self.converter_config.items()})  # fmt: skip
        doc: dict[str, Any] = {
            kind: list(converter_settings(given, self.worker, kind)) for kind in ("key", "value")
        }
        path = self.worker.get("plugin.path", "")
        doc["plugin_path"] = [p.strip() for p in path.split(",") if p.strip()]
        return orjson.dumps(doc).decode()

    def consumer(self) -> dict[str, str]:
        from sparkcat.kafka.clients import consumer_config

        return consumer_config(self.worker, group_id=READ_GROUP)

    def producer(self) -> dict[str, str]:
        from sparkcat.kafka.clients import producer_config

        return producer_config(self.worker)


# -- the session --------------------------------------------------------------------------
def active_session() -> SparkSession | None:
    """The application's SparkSession, if it has one."""
    session = SparkSession.getActiveSession()
    if session is None and SparkContext._active_spark_context is not None:
        session = SparkSession.builder.getOrCreate()  # the running context's session
    return session


def session_of(engine: Any) -> SparkSession:
    """The SparkSession of a :class:`~sparkcat.engine.SparkEngine` (waits while it builds)."""
    session = engine.session
    return session if isinstance(session, SparkSession) else session.get()


def check_scheduler(session: SparkSession) -> None:
    """Connectors get a pool of their own only under FAIR scheduling: say so otherwise."""
    mode = session.sparkContext.getConf().get("spark.scheduler.mode", "FIFO") or "FIFO"
    if mode.upper() != "FAIR":
        log.warning("spark.scheduler.mode is %s: connector queries share the scheduler with "
                    "the application's in FIFO order (set spark.scheduler.mode=FAIR to give "
                    "them their own pool)", mode)  # fmt: skip


def check_python(session: SparkSession) -> None:
    """On a local master, Spark's Python workers run the connectors' tasks: say so when they
    run an interpreter of another environment (``python3`` from ``PATH`` when the application
    set no ``PYSPARK_PYTHON``), which lacks sparkcat unless both have it installed."""
    context = session.sparkContext
    if not str(context.master).startswith("local"):
        return  # executors elsewhere have their own environment (docs/cluster.md)
    executable = str(context.pythonExec)
    found = shutil.which(executable) or executable
    here = os.path.dirname(os.path.abspath(sys.executable))
    if os.path.dirname(os.path.abspath(found)) != here:
        log.warning("Spark's Python workers run %s, not this interpreter (%s): connectors fail "
                    "unless sparkcat is installed there too (set PYSPARK_PYTHON=%s before "
                    "the SparkSession starts)", found, sys.executable,
                    sys.executable)  # fmt: skip


def _register(session: SparkSession) -> None:
    with _register_lock:
        if session not in _registered:
            session.dataSource.register(connect_kafka.ConnectKafkaDataSource)
            _registered.add(session)


@contextmanager
def _active(session: SparkSession) -> Iterator[None]:
    """``session`` as the calling thread's active session in the JVM, for the block.

    Starting a streaming query, Spark finds a Python data source by name in the calling
    thread's active session only (a JVM thread-local). A session built on another thread —
    ``Connect`` builds its own on a background thread — is not active in the application's
    threads, so without this ``write_stream`` failed with DATA_SOURCE_NOT_FOUND. The thread's
    own active session, if any, is put back afterwards."""
    jvm_session = session._jvm.SparkSession  # type: ignore[union-attr]
    previous = jvm_session.getActiveSession()
    jvm_session.setActiveSession(session._jsparkSession)
    try:
        yield
    finally:
        if previous.isDefined():
            jvm_session.setActiveSession(previous.get())
        else:
            jvm_session.clearActiveSession()


# -- reading ------------------------------------------------------------------------------
def read_stream(
    session: SparkSession,
    topics: Sequence[str],
    settings: StreamSettings,
    starting_offsets: str = "earliest",
    timeout_s: float = 60.0,
) -> DataFrame:
    """A streaming DataFrame of ``topics`` (see the module docstring)."""
    if starting_offsets not in ("earliest", "latest"):
        raise ConnectError(f"starting_offsets must be earliest or latest, not {starting_offsets}")
    if not topics:
        raise ConnectError("read_stream needs at least one topic")
    spec = settings.converters_option()
    consumer = settings.consumer()
    schema, flatten = infer_schema(consumer, list(topics), spec, timeout_s)
    _register(session)
    options = {
        "topics": orjson.dumps(list(topics)).decode(),
        "consumer": orjson.dumps(consumer).decode(),
        "converters": spec,
        "schema": schema.json(),
        "flatten": "true" if flatten else "false",
        "starting": starting_offsets,
    }
    with _active(session):
        reader = session.readStream.format(connect_kafka.FORMAT).schema(schema)
        return reader.options(**options).load()


def infer_schema(
    consumer: Mapping[str, str], topics: list[str], spec: str, timeout_s: float
) -> tuple[T.StructType, bool]:
    """The columns of ``topics``' records, from the first one; ``(schema, flatten)``."""
    message = _first_record(consumer, topics, timeout_s)
    key_converter, value_converter = connect_kafka.converters(spec)
    key = key_converter.to_connect_data(message.topic(), message.key())
    value = value_converter.to_connect_data(message.topic(), message.value())
    fields = [T.StructField("key", connect_types.spark_type(key.schema))]
    value_type = connect_types.spark_type(value.schema)
    flatten = value.schema is not None and value.schema.type is Type.STRUCT
    if flatten:
        assert isinstance(value_type, T.StructType)
        clashes = [f.name for f in value_type.fields if f.name in connect_kafka.RESERVED]
        if clashes:
            raise ConnectError(f"Value fields {clashes} clash with read_stream's columns "
                               f"{list(connect_kafka.RESERVED)}")  # fmt: skip
        fields.extend(value_type.fields)
    else:
        fields.append(T.StructField("value", value_type))
    fields.extend(T.StructField(name, dtype) for name, dtype in connect_kafka.META_COLUMNS)
    return T.StructType(fields), flatten


def _first_record(consumer_config: Mapping[str, str], topics: list[str], timeout_s: float) -> Any:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(dict(consumer_config))
    deadline = time.monotonic() + timeout_s
    assigned: set[tuple[str, int]] = set()
    try:
        while time.monotonic() < deadline:
            metadata = consumer.list_topics(timeout=10)  # all topics: naming one creates it
            wanted = {(t, p) for t in topics if t in metadata.topics
                      for p in metadata.topics[t].partitions}  # fmt: skip
            if wanted != assigned:
                consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in wanted])
                assigned = wanted
            message = consumer.poll(0.5 if assigned else 0.0) if assigned else None
            if message is not None and message.error() is None and message.value() is not None:
                return message
            if not assigned:
                time.sleep(0.2)
    finally:
        consumer.close()
    raise TimeoutError(f"No record in {topics} within {timeout_s:g} s to learn the columns from")


# -- writing ------------------------------------------------------------------------------
def write_stream(
    df: DataFrame,
    topic: str,
    settings: StreamSettings,
    checkpoint_location: str | None = None,
    trigger: Mapping[str, Any] | None = None,
) -> StreamingQuery:
    """Start writing the streaming ``df`` to ``topic`` (see ``Connect.write_stream``)."""
    if not df.isStreaming:
        raise ConnectError("write_stream needs a streaming DataFrame")
    connect_kafka.WritePlan(df.schema)  # a column Connect has no schema for fails here
    session = df.sparkSession
    _register(session)
    writer = (
        df.writeStream.format(connect_kafka.FORMAT)
        .option("topic", topic)
        .option("producer", orjson.dumps(settings.producer()).decode())
        .option("converters", settings.converters_option())
        .option("checkpointLocation",
                checkpoint_location or tempfile.mkdtemp(prefix="sparkcat-write-"))
    )  # fmt: skip
    if trigger:
        writer = writer.trigger(**trigger)
    with _active(session):
        return _start(writer)


def _start(writer: DataStreamWriter) -> StreamingQuery:
    """Start queries one at a time, and again when one died starting: Spark gives a starting
    Python process 10 s to connect back, which several starting at once on a busy machine
    miss (see ``ConnectorQuery.wait_started``). Nothing was read when that happens."""
    with _start_lock:
        for attempt in range(1, START_ATTEMPTS + 1):
            query = writer.start()
            deadline = time.monotonic() + START_WAIT_S
            while query.isActive and time.monotonic() < deadline:
                if query.status.get("message") != "Initializing sources":
                    return query
                time.sleep(0.05)
            if query.isActive or "connect back" not in str(query.exception()):
                return query
            log.warning("A write_stream query died starting (attempt %d): %s", attempt,
                        query.exception())  # fmt: skip
        return query


__all__ = [
    "StreamSettings",
    "active_session",
    "check_python",
    "check_scheduler",
    "infer_schema",
    "read_stream",
    "session_of",
    "write_stream",
]
