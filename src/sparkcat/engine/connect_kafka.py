"""sparkcat's own Kafka data source for Spark (``spark-sql-kafka`` need not be on the
classpath): topics read and written through Connect converters, for the embedded API's
``read_stream``/``write_stream`` (:mod:`sparkcat.engine.streams` builds the options).

Reading (``spark.readStream.format("sparkcat_kafka")``): offsets are
``{"<topic>": {"<partition>": next offset}}``; ``latestOffset`` runs in the driver-side
runner (one reader for the whole run: it keeps its probe consumer) and asks each partition
for its end with :func:`sparkcat.kafka.admin.end_offsets` (correct on the embedded broker
too); ``read`` runs on an executor, assigns one partition at the batch's start offset and
decodes records up to its end. A batch is deterministic for a (start, end), as Spark's
replay needs. Partitions that appear later are read from their start.

Writing (``df.writeStream.format("sparkcat_kafka")``): each Spark task converts its rows
(:mod:`sparkcat.engine.connect_types`) and produces them, waiting for the acks before it
returns: at-least-once, as a Connect source task.

Options (JSON texts): ``topics`` / ``topic``; ``consumer`` / ``producer`` (librdkafka
configs); ``converters`` (``{"key": [class, props], "value": [class, props],
"plugin_path": [...]}``); ``schema`` (the Spark schema); ``flatten`` (the value's fields are
top-level columns); ``starting`` (``earliest``/``latest``).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson
from pyspark.sql import types as T
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)

from sparkcat.api.errors import ConnectError
from sparkcat.engine import connect_types

FORMAT = "sparkcat_kafka"
HEADERS_TYPE = T.ArrayType(
    T.StructType([T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())])
)
# The columns beside the value's; "key" comes first, typed from the key converter's schema.
META_COLUMNS: tuple[tuple[str, T.DataType], ...] = (
    ("topic", T.StringType()),
    ("partition", T.IntegerType()),
    ("offset", T.LongType()),
    ("timestamp", T.TimestampType()),
    ("headers", HEADERS_TYPE),
)
RESERVED = ("key", *(name for name, _ in META_COLUMNS))
# latestOffset is asked ~50 times a second by an idle query: probe the ends at most this often.
PROBE_INTERVAL_S = 0.25
METADATA_REFRESH_S = 5.0
READ_STALL_S = 60.0
_UTC = datetime.UTC

_converters: dict[str, tuple[Any, Any]] = {}


def converters(spec: str) -> tuple[Any, Any]:
    """The (key, value) converters of a ``converters`` option, cached per process."""
    found = _converters.get(spec)
    if found is None:
        from sparkcat.runtime.isolation.plugins import default_registry

        doc = orjson.loads(spec)
        registry = default_registry(doc.get("plugin_path", []))
        pair = []
        for kind in ("key", "value"):
            class_name, props = doc[kind]
            converter = registry.resolve(class_name, "converter")()
            converter.configure(props, kind == "key")
            pair.append(converter)
        found = _converters[spec] = (pair[0], pair[1])
    return found


class KafkaPartition(InputPartition):
    """One topic-partition's share of a batch: offsets ``[start, end)``."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


class ConnectKafkaReader(DataSourceStreamReader):
    """See the module docstring."""

    def __init__(self, options: Mapping[str, str], schema: T.StructType) -> None:
        self.topics: list[str] = orjson.loads(options["topics"])
        self.consumer_config: dict[str, str] = orjson.loads(options["consumer"])
        self.converters = options["converters"]
        self.flatten = options.get("flatten", "false") == "true"
        self.starting = options.get("starting", "earliest")
        self.schema = schema
        self._probe: Any = None
        self._partitions: list[tuple[str, int]] = []
        self._listed_at = 0.0
        self._probed_at = 0.0

    # -- driver side (the runner process) -----------------------------------------------
    def _topic_partitions(self) -> list[tuple[str, int]]:
        now = time.monotonic()
        if self._partitions and now - self._listed_at < METADATA_REFRESH_S:
            return self._partitions
        from confluent_kafka import Consumer

        from sparkcat.kafka.admin import end_offsets_probe_config

        if self._probe is None:
            self._probe = Consumer(end_offsets_probe_config(self.consumer_config))
        # All topics, not the wanted ones by name: naming an unknown topic creates it on
        # brokers that auto-create topics.
        metadata = self._probe.list_topics(timeout=30)
        self._partitions = sorted(
            (topic, p) for topic in self.topics if topic in metadata.topics
            for p in metadata.topics[topic].partitions
        )  # fmt: skip
        self._listed_at = now
        return self._partitions

    def _ends(self) -> dict[str, dict[str, int]]:
        from sparkcat.kafka.admin import end_offsets

        partitions = self._topic_partitions()
        ends = end_offsets(self._probe, partitions) if partitions else {}
        result: dict[str, dict[str, int]] = {}
        for tp, end in ends.items():
            result.setdefault(tp.topic, {})[str(tp.partition)] = int(end)
        return result

    def initialOffset(self) -> dict[str, Any]:
        if self.starting == "latest":
            return self._ends()
        return {}  # every partition from its start (0: see _start_of)

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        wait = self._probed_at + PROBE_INTERVAL_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._probed_at = time.monotonic()
        ends = self._ends()
        merged = {t: dict(ps) for t, ps in start.items()}
        for topic, partitions in ends.items():
            for partition, end in partitions.items():
                current = merged.setdefault(topic, {}).get(partition, 0)
                merged[topic][partition] = max(int(current), end)
        return merged

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        result: list[InputPartition] = []
        for topic, partitions in sorted(end.items()):
            for partition, stop in sorted(partitions.items(), key=lambda kv: int(kv[0])):
                begin = int(start.get(topic, {}).get(partition, 0))
                if int(stop) > begin:
                    result.append(KafkaPartition(topic, int(partition), begin, int(stop)))
        return result

    def commit(self, end: dict[str, Any]) -> None:
        return None

    def stop(self) -> None:
        if self._probe is not None:
            self._probe.close()
            self._probe = None

    # -- executor side --------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, KafkaPartition)
        from confluent_kafka import Consumer, KafkaError
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        key_converter, value_converter = converters(self.converters)
        config = {**self.consumer_config, "enable.partition.eof": "true"}
        consumer = Consumer(config)
        try:
            consumer.assign([KafkaTopicPartition(partition.topic, partition.partition,
                                                 partition.start)])  # fmt: skip
            position, stalled_since = partition.start, time.monotonic()
            while position < partition.end:
                messages = consumer.consume(num_messages=5000, timeout=0.5)
                if not messages and time.monotonic() - stalled_since > READ_STALL_S:
                    raise ConnectError(f"Reading {partition.topic}-{partition.partition} "
                                       f"stalled at offset {position}")  # fmt: skip
                for message in messages:
                    error = message.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            raise ConnectError(f"Error consuming from Kafka: {error}")
                        # At the log's end: offsets up to it were gaps (compaction, markers).
                        position = max(position, int(message.offset() or 0))
                        continue
                    offset = int(message.offset() or 0)
                    position = offset + 1
                    stalled_since = time.monotonic()
                    if offset < partition.end:
                        yield self._row(message, key_converter, value_converter)
        finally:
            consumer.close()

    def _row(self, message: Any, key_converter: Any, value_converter: Any) -> tuple[Any, ...]:
        topic = message.topic()
        fields = self.schema.fields
        key = key_converter.to_connect_data(topic, message.key()).value
        value = value_converter.to_connect_data(topic, message.value()).value
        value_fields = fields[1 : len(fields) - len(META_COLUMNS)]
        if self.flatten:
            values = connect_types.to_spark(value, T.StructType(list(value_fields)))
            values = values if values is not None else (None,) * len(value_fields)
        else:
            values = (connect_types.to_spark(value, value_fields[0].dataType),)
        _, millis = message.timestamp()
        stamp = datetime.datetime.fromtimestamp(millis / 1000.0, _UTC) if millis >= 0 else None
        headers = [(k, v) for k, v in (message.headers() or [])]
        meta = (topic, message.partition(), message.offset(), stamp, headers)
        return (connect_types.to_spark(key, fields[0].dataType), *values, *meta)


class ConnectKafkaWriter(DataSourceStreamWriter):
    """See the module docstring."""

    def __init__(self, options: Mapping[str, str], schema: T.StructType) -> None:
        self.topic = options["topic"]
        self.producer_config: dict[str, str] = orjson.loads(options["producer"])
        self.converters = options["converters"]
        self.schema = schema

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from sparkcat.runtime.tasks.client_cache import get_producer

        key_converter, value_converter = converters(self.converters)
        plan = WritePlan(self.schema)
        producer = get_producer(self.producer_config)
        errors: list[str] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                errors.append(str(error))

        count = 0
        for row in iterator:
            key, value, partition, stamp, headers = plan.record(row)
            key_bytes = key_converter.from_connect_data(self.topic, plan.key_schema, key)
            value_bytes = value_converter.from_connect_data(self.topic, plan.value_schema, value)
            extra: dict[str, Any] = {"on_delivery": delivered}
            if partition is not None:
                extra["partition"] = partition
            if stamp is not None:
                extra["timestamp"] = stamp
            if headers:
                extra["headers"] = headers
            while True:
                try:
                    producer.produce(self.topic, value_bytes, key_bytes, **extra)
                    break
                except BufferError:
                    producer.poll(0.05)
            count += 1
        remaining = producer.flush(60)
        if remaining or errors:
            problem = errors[:3] or f"{remaining} record(s) not acknowledged"
            raise ConnectError(f"Producing to {self.topic} failed: {problem}")
        return _Written(count)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None


class _Written(WriterCommitMessage):
    def __init__(self, records: int) -> None:
        self.records = records


class WritePlan:
    """Where a row's key, value, partition, timestamp and headers are (see
    ``Connect.write_stream``), and the Connect schemas of key and value."""

    def __init__(self, schema: T.StructType) -> None:
        names = [f.name for f in schema.fields]
        self.index = {name: names.index(name) for name in
                      ("key", "partition", "timestamp", "headers") if name in names}  # fmt: skip
        rest = [(i, f) for i, f in enumerate(schema.fields)
                if f.name not in self.index]  # fmt: skip
        self.key_type = schema.fields[self.index["key"]].dataType if "key" in self.index else None
        self.key_schema = None if self.key_type is None else connect_types.connect_schema(
            self.key_type)  # fmt: skip
        # One column named "value" is the value; any other columns form a Struct value.
        self.single = len(rest) == 1 and rest[0][1].name == "value"
        self.value_at: list[int] = [i for i, _ in rest]
        self.value_type: T.DataType = (
            rest[0][1].dataType if self.single else T.StructType([f for _, f in rest])
        )
        self.value_schema = connect_types.connect_schema(self.value_type)

    def record(self, row: Any) -> tuple[Any, Any, int | None, int | None, list[Any]]:
        key = None
        if self.key_type is not None and self.key_schema is not None:
            key = connect_types.to_connect(row[self.index["key"]], self.key_type, self.key_schema)
        raw = row[self.value_at[0]] if self.single else tuple(row[i] for i in self.value_at)
        value = connect_types.to_connect(raw, self.value_type, self.value_schema)
        partition = row[self.index["partition"]] if "partition" in self.index else None
        stamp = None
        if "timestamp" in self.index and row[self.index["timestamp"]] is not None:
            moment = row[self.index["timestamp"]]
            moment = moment.astimezone(_UTC) if moment.tzinfo is None else moment
            stamp = int(moment.timestamp() * 1000)
        headers = [(h[0], h[1]) for h in row[self.index["headers"]] or []] \
            if "headers" in self.index else []  # fmt: skip
        return key, value, partition, stamp, headers


class ConnectKafkaDataSource(DataSource):
    """``format("sparkcat_kafka")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> T.StructType:
        return T.StructType.fromJson(orjson.loads(self.options["schema"]))

    def streamReader(self, schema: T.StructType) -> DataSourceStreamReader:
        return ConnectKafkaReader(self.options, schema)

    def streamWriter(self, schema: T.StructType, overwrite: bool) -> DataSourceStreamWriter:
        return ConnectKafkaWriter(self.options, schema)


__all__ = [
    "FORMAT",
    "META_COLUMNS",
    "RESERVED",
    "ConnectKafkaDataSource",
    "WritePlan",
    "converters",
]
