"""The columnar record path of leases (see :mod:`sparkcat.api.batch`): whole consumed or
polled batches converted column by column, with no per-record objects.

Used by :class:`~sparkcat.runtime.tasks.pipeline.Pipeline` when no transformation is configured;
every conversion here either handles a batch completely or returns ``None``/raises before any
side effect, so the per-record path can redo the batch and give the same bytes.

Source side: :func:`source_columns` converts a polled batch's value, key and header columns
(topics, schemas, keys, partitions, timestamps and headers may be per record or shared; with
per-record topics or schemas, one converter call per group of equal topic and schema), and
:func:`produce_columns` hands them to the producer in one loop with no object per record.
With ``ByteArrayConverter`` (MirrorMaker 2's converters) bytes and Kafka header tuples pass
through as the task gave them. :class:`BatchDelivery` collects a batch's delivery reports
for ``SourceTask.commit_batch`` (from :mod:`~sparkcat.runtime.tasks.batch_delivery`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, compress, islice, repeat
from operator import itemgetter, methodcaller
from typing import Any, NamedTuple

from sparkcat.api.batch import (
    ConnectDataBatch,
    KafkaHeaders,
    SinkRecordBatch,
    SourceRecordBatch,
    SourceRun,
)
from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA, SchemaAndValue
from sparkcat.api.errors import ConnectError
from sparkcat.runtime.tasks.batch_delivery import BatchDelivery

__all__ = [
    "BatchDelivery",
    "SourceColumns",
    "convert_groups",
    "ensure_topics",
    "produce_columns",
    "record_groups",
    "send_batch",
    "sink_batch",
    "source_columns",
    "to_connect_batch",
]

# confluent-kafka Message accessors as C callables, mapped over a whole consumed batch.
_ERROR, _HEADERS, _TOPIC, _PARTITION, _OFFSET, _KEY, _VALUE, _TIMESTAMP = map(
    methodcaller, ("error", "headers", "topic", "partition", "offset", "key", "value", "timestamp")
)
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_PLAIN = {bytes, type(None)}


def sink_batch(
    messages: list[Any],
    offsets: dict[tuple[str, int], int],
    key_converter: Any,
    value_converter: Any,
    null_key: SchemaAndValue | None,
    single_partition: tuple[str, int] | None = None,
) -> SinkRecordBatch | None:
    """Consumed ``messages`` as a :class:`SinkRecordBatch`, writing the next offset per
    partition into ``offsets``; ``None`` (and ``offsets`` untouched) when the batch needs the
    per-record path: a consumer error, headers, several topics, or a column that did not
    convert. ``null_key`` is the key converter's reading of a null key, when it is known to
    be the same for every topic. ``single_partition``: the only topic-partition the consumer
    is assigned, when it has one; then topic, partition and offset columns are only built
    if a task reads them (each accessor mapped over a million messages costs ~0.1 s)."""
    if any(map(_ERROR, messages)) or any(map(_HEADERS, messages)):
        return None
    size = len(messages)
    if single_partition is not None:
        topic, partition = single_partition
        topics: list[str] | Callable[[], list[str]] = lambda: [topic] * size  # noqa: E731
    else:
        topics = list(map(_TOPIC, messages))
        topic = topics[0]
        if topics.count(topic) != size:
            return None
    raw_keys = list(map(_KEY, messages))
    try:
        if null_key is not None and raw_keys.count(None) == size:
            keys = ConnectDataBatch(null_key[0], [null_key[1]] * size)
        else:
            keys = to_connect_batch(key_converter, topic, raw_keys)
        values = to_connect_batch(value_converter, topic, list(map(_VALUE, messages)))
    except Exception:  # the per-record path reports the record at fault
        return None
    partitions: list[int] | Callable[[], list[int]]
    kafka_offsets: list[int] | Callable[[], list[int]]
    if single_partition is not None:
        # A consumer returns each partition's messages in offset order.
        offsets[single_partition] = messages[-1].offset() + 1
        partitions = lambda: [partition] * size  # noqa: E731
        kafka_offsets = lambda: list(map(_OFFSET, messages))  # noqa: E731
    else:
        partitions = list(map(_PARTITION, messages))
        kafka_offsets = list(map(_OFFSET, messages))
        # The last offset per partition: later pairs overwrite earlier ones, in C.
        for part, offset in dict(zip(partitions, kafka_offsets, strict=True)).items():
            offsets[(topic, part)] = offset + 1
    return SinkRecordBatch(
        topics, partitions, kafka_offsets, keys.schema_column(), keys.values,
        values.schema_column(), values.values, lambda: list(map(_TIMESTAMP, messages)),
    )  # fmt: skip


def to_connect_batch(converter: Any, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
    """``converter.to_connect_data_batch``, or a loop for a converter without it (one that
    does not derive from :class:`~sparkcat.api.converter.Converter`)."""
    convert = getattr(converter, "to_connect_data_batch", None)
    if convert is not None:
        result: ConnectDataBatch = convert(topic, datas)
        return result
    pairs = [converter.to_connect_data(topic, data) for data in datas]
    return ConnectDataBatch(None, [p[1] for p in pairs], [p[0] for p in pairs])


def from_connect_batch(converter: Any, topic: str, schema: Any, values: list[Any]) -> list[Any]:
    """``converter.from_connect_data_batch``, or a loop for a converter without it."""
    convert = getattr(converter, "from_connect_data_batch", None)
    if convert is not None:
        result: list[Any] = convert(topic, schema, values)
        return result
    return [converter.from_connect_data(topic, schema, value) for value in values]


class SourceColumns(NamedTuple):
    """A :class:`~sparkcat.api.batch.SourceRecordBatch` converted for the producer: each
    field a list (one item per record) or, for a field shared by all records, a constant."""

    topic: str | Sequence[str]
    values: list[bytes | None]
    keys: list[bytes | None] | None
    partitions: Sequence[int] | int
    timestamps: Sequence[int | None] | int
    headers: Sequence[Any] | None


def source_columns(pipeline: Any, batch: SourceRecordBatch) -> SourceColumns | None:
    """``batch`` converted column by column with ``pipeline``'s converters; ``None`` when a
    column does not convert (the per-record path then reports the record at fault)."""
    per_record = (batch.topics, batch.key_schemas, batch.value_schemas)
    if per_record != (None, None, None):
        return _mixed_columns(pipeline, batch)
    topic = batch.topic
    assert topic is not None  # a batch without a topics column has a topic
    size = len(batch.values)
    try:
        values = from_connect_batch(pipeline.value_converter, topic, batch.value_schema,
                                    batch.values)  # fmt: skip
        keys: list[Any] | None = None
        if batch.keys is not None or batch.key_schema is not None:
            raw = batch.keys if batch.keys is not None else [None] * size
            keys = from_connect_batch(pipeline.key_converter, topic, batch.key_schema, raw)
        elif not getattr(pipeline.key_converter, "null_pass_through", False):
            keys = [pipeline.key_converter.from_connect_data(topic, None, None)] * size
        headers = None
        if batch.headers is not None:
            headers = headers_out(pipeline.header_converter, topic, batch.headers)
    except Exception:
        return None
    return _with_partitions_and_timestamps(batch, topic, values, keys, headers)


def _mixed_columns(pipeline: Any, batch: SourceRecordBatch) -> SourceColumns | None:
    """:func:`source_columns` for a batch with a topic or schemas per record."""
    topics = batch.topic_column()
    size = len(batch.values)
    key_schemas, value_schemas = batch.key_schema_column(), batch.value_schema_column()
    # One grouping for both converters: a topic's keys and values share their schemas.
    groups = record_groups(topics, key_schemas, value_schemas)
    try:
        values = convert_groups(pipeline.value_converter, topics, value_schemas, batch.values,
                                groups)  # fmt: skip
        keys: list[Any] | None = None
        if batch.keys is not None or batch.key_schema is not None or batch.key_schemas is not None:
            raw = batch.keys if batch.keys is not None else [None] * size
            keys = convert_groups(pipeline.key_converter, topics, key_schemas, raw, groups)
        elif not getattr(pipeline.key_converter, "null_pass_through", False):
            convert = pipeline.key_converter.from_connect_data
            null_keys = {topic: convert(topic, None, None) for topic in dict.fromkeys(topics)}
            keys = list(map(null_keys.__getitem__, topics))
        headers = None
        if batch.headers is not None:
            headers = headers_out(pipeline.header_converter, topics, batch.headers)
    except Exception:
        return None
    return _with_partitions_and_timestamps(batch, topics, values, keys, headers)


_FEW_GROUPS = 8


def record_groups(topics: Sequence[str], *schema_columns: Sequence[Any]) -> list[list[int]]:
    """The positions of the records of each group of equal topic and schemas (schemas by
    identity), groups in order of their first record.

    Why groups rather than runs: the records of a CDC stream of transactions that touch
    several tables alternate topics at nearly every record, so runs of one are the norm;
    groups keep one converter call per table. With a few groups each is found by a pass in C
    (``compress``), cheaper than a Python loop over the records."""
    keys = list(zip(topics, *(map(id, column) for column in schema_columns), strict=True))
    distinct = dict.fromkeys(keys)
    positions = range(len(keys))
    if len(distinct) == 1:
        return [list(positions)]
    if len(distinct) <= _FEW_GROUPS:
        return [list(compress(positions, map(key.__eq__, keys))) for key in distinct]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def convert_groups(
    converter: Any,
    topics: Sequence[str],
    schemas: Sequence[Any],
    datas: list[Any],
    groups: list[list[int]],
) -> list[Any]:
    """``datas`` converted with one :func:`from_connect_batch` call per group of
    :func:`record_groups` (each of one topic and one schema in ``schemas``), in order of the
    groups, and put back in the records' order. A converter that registers schemas on first
    sight (a schema registry's) still registers them in the order the records show them."""
    if len(groups) == 1:
        return from_connect_batch(converter, topics[0], schemas[0], datas)
    out: list[Any] = [None] * len(datas)
    for members in groups:
        first = members[0]
        converted = from_connect_batch(converter, topics[first], schemas[first],
                                       list(map(datas.__getitem__, members)))  # fmt: skip
        if len(converted) != len(members):
            raise ValueError("a converter returned a column of another length")
        deque(map(out.__setitem__, members, converted), maxlen=0)  # the scatter, in C
    return out


def _with_partitions_and_timestamps(
    batch: SourceRecordBatch,
    topic: str | Sequence[str],
    values: list[Any],
    keys: list[Any] | None,
    headers: Sequence[Any] | None,
) -> SourceColumns:
    partitions: Sequence[int] | int = batch.kafka_partitions or (
        -1 if batch.kafka_partition is None else batch.kafka_partition
    )
    timestamps: Sequence[int | None] | int = batch.timestamp or 0
    if batch.timestamps is not None:
        timestamps = batch.timestamps
        if None in timestamps:  # the producer's "now" is 0
            timestamps = [ts or 0 for ts in timestamps]
    return SourceColumns(topic, values, keys, partitions, timestamps, headers)


def headers_out(
    converter: Any, topic: str | Sequence[str], headers: Sequence[KafkaHeaders | None]
) -> Sequence[Any]:
    """A batch's header column for the producer: as it is when ``converter`` declares
    ``bytes_pass_through`` and every header is ``(str, bytes | None)`` (checked in C, not
    per record), else each header value converted as the per-record path does (``topic``:
    the batch's, or each record's)."""
    if getattr(converter, "bytes_pass_through", False):
        flat = list(chain.from_iterable(filter(None, headers)))
        if set(map(type, map(_SECOND, flat))) <= _PLAIN and set(map(type, map(_FIRST, flat))) <= {
            str
        }:
            return headers
    convert = converter.from_connect_header
    schema = OPTIONAL_BYTES_SCHEMA  # header values of a SourceRecordBatch are BYTES data
    topics = repeat(topic, len(headers)) if isinstance(topic, str) else topic
    return [
        [(key, convert(t, key, schema, value)) for key, value in record] if record else None
        for t, record in zip(topics, headers, strict=True)
    ]


def ensure_topics(
    topic: str | Sequence[str], known_topics: set[str], ensure_topic: Callable[[str], None]
) -> None:
    """``ensure_topic`` for each topic of a batch's topic column not in ``known_topics``, in
    order of first appearance."""
    for name in (topic,) if isinstance(topic, str) else dict.fromkeys(topic):
        if name not in known_topics:
            ensure_topic(name)


# Records of a batch with a topic per record converted, then produced, at a time. Measured
# on Debezium envelopes (~3 KB): 2,048 records converted at once cost 0.6 us a record more
# than 256 at a time, the producer then copying bytes no longer in the CPU's caches.
CHUNK_RECORDS = 256


def send_batch(
    pipeline: Any,
    batch: SourceRecordBatch,
    producer: Any,
    callbacks: Iterable[Callable[[Any, Any], None] | None],
    ensure_topic: Callable[[str], None],
    known_topics: set[str],
    produce_when_room: Callable[..., None],
    whole: bool = False,
) -> int:
    """Convert and produce ``batch`` column by column, the i-th record with the i-th of
    ``callbacks``: how many of its first records were produced. All of them, or fewer when
    a column does not convert: nothing of a batch with one topic (or ``whole``, as a
    :class:`BatchDelivery` needs), the chunks before the one that failed of a batch with a
    topic per record (converted :data:`CHUNK_RECORDS` at a time); the caller sends the rest
    per record, so each record is sent once."""
    size = len(batch)
    chunk = CHUNK_RECORDS if batch.topics is not None and not whole else size
    callbacks = iter(callbacks)
    sent = 0
    while sent < size:
        end = min(sent + chunk, size)
        part = batch if end - sent == size else _records_between(batch, sent, end)
        columns = source_columns(pipeline, part)
        if columns is None:
            return sent
        ensure_topics(columns.topic, known_topics, ensure_topic)
        sent += produce_columns(producer, columns, islice(callbacks, end - sent),
                                produce_when_room)  # fmt: skip
    return sent


def _records_between(batch: SourceRecordBatch, start: int, end: int) -> SourceRecordBatch:
    """Records ``start`` to ``end`` of ``batch``, for :func:`source_columns` only (one run
    without a partition or offset)."""

    def cut(column: Any) -> Any:
        return None if column is None else list(islice(column, start, end))

    return SourceRecordBatch(
        batch.topic, batch.values[start:end], batch.value_schema,
        [SourceRun(None, None, end - start)], cut(batch.keys), batch.key_schema,
        batch.kafka_partition, batch.timestamp, kafka_partitions=cut(batch.kafka_partitions),
        timestamps=cut(batch.timestamps), headers=cut(batch.headers), topics=cut(batch.topics),
        key_schemas=cut(batch.key_schemas), value_schemas=cut(batch.value_schemas),
    )  # fmt: skip


def produce_columns(
    producer: Any,
    columns: SourceColumns,
    callbacks: Iterable[Callable[[Any, Any], None] | None],
    produce_when_room: Callable[..., None],
) -> int:
    """``produce`` every record of ``columns``, the i-th with the i-th of ``callbacks``; the
    count. Positional arguments as in ``Pipeline.produce_records`` (keywords cost
    confluent-kafka ~1 us a call)."""
    produce = producer.produce
    topic_column, values, keys, partitions, timestamps, headers = columns
    size = len(values)
    rows = zip(
        repeat(topic_column, size) if isinstance(topic_column, str) else topic_column,
        values,
        repeat(None, size) if keys is None else keys,
        repeat(partitions, size) if isinstance(partitions, int) else partitions,
        callbacks,
        repeat(timestamps, size) if isinstance(timestamps, int) else timestamps,
        repeat(None, size) if headers is None else headers,
        strict=True,
    )
    for topic, value, key, partition, on_delivery, ts, record_headers in rows:
        try:
            produce(topic, value, key, partition, on_delivery, None, ts, record_headers)
        except BufferError:
            produce_when_room(producer, topic, value, key, partition, on_delivery, ts,
                              record_headers)  # fmt: skip
        except Exception as exc:
            raise ConnectError("Unrecoverable exception trying to send") from exc
    return size
