"""The columnar record path of leases (see :mod:`sparkcat.api.batch`): whole consumed or
polled batches converted column by column, with no per-record objects.

Used by :class:`~sparkcat.runtime.tasks.pipeline.Pipeline` when no transformation is configured;
every conversion here either handles a batch completely or returns ``None``/raises before any
side effect, so the per-record path can redo the batch and give the same bytes.

Source side: :func:`source_columns` converts a polled batch's value, key and header columns
(keys, partitions, timestamps and headers may be per record or shared), and
:func:`produce_columns` hands them to the producer in one loop with no object per record.
With ``ByteArrayConverter`` (MirrorMaker 2's converters) bytes and Kafka header tuples pass
through as the task gave them. :class:`BatchDelivery` collects a batch's delivery reports
for ``SourceTask.commit_batch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import chain, repeat
from operator import itemgetter, methodcaller
from typing import Any, NamedTuple

from sparkcat.api.batch import (
    ConnectDataBatch,
    KafkaHeaders,
    RecordMetadataBatch,
    SinkRecordBatch,
    SourceRecordBatch,
)
from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA, SchemaAndValue
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord

__all__ = [
    "BatchDelivery",
    "SourceColumns",
    "produce_columns",
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

    topic: str
    values: list[bytes | None]
    keys: list[bytes | None] | None
    partitions: Sequence[int] | int
    timestamps: Sequence[int | None] | int
    headers: Sequence[Any] | None


def source_columns(pipeline: Any, batch: SourceRecordBatch) -> SourceColumns | None:
    """``batch`` converted column by column with ``pipeline``'s converters; ``None`` when a
    column does not convert (the per-record path then reports the record at fault)."""
    topic = batch.topic
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
    converter: Any, topic: str, headers: Sequence[KafkaHeaders | None]
) -> Sequence[Any]:
    """A batch's header column for the producer: as it is when ``converter`` declares
    ``bytes_pass_through`` and every header is ``(str, bytes | None)`` (checked in C, not
    per record), else each header value converted as the per-record path does."""
    if getattr(converter, "bytes_pass_through", False):
        flat = list(chain.from_iterable(filter(None, headers)))
        if set(map(type, map(_SECOND, flat))) <= _PLAIN and set(map(type, map(_FIRST, flat))) <= {
            str
        }:
            return headers
    convert = converter.from_connect_header
    schema = OPTIONAL_BYTES_SCHEMA  # header values of a SourceRecordBatch are BYTES data
    return [
        [(key, convert(topic, key, schema, value)) for key, value in record] if record else None
        for record in headers
    ]


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
    topic, values, keys, partitions, timestamps, headers = columns
    size = len(values)
    rows = zip(
        values,
        repeat(None, size) if keys is None else keys,
        repeat(partitions, size) if isinstance(partitions, int) else partitions,
        callbacks,
        repeat(timestamps, size) if isinstance(timestamps, int) else timestamps,
        repeat(None, size) if headers is None else headers,
        strict=True,
    )
    for value, key, partition, on_delivery, ts, record_headers in rows:
        try:
            produce(topic, value, key, partition, on_delivery, None, ts, record_headers)
        except BufferError:
            produce_when_room(producer, topic, value, key, partition, on_delivery, ts,
                              record_headers)  # fmt: skip
        except Exception as exc:
            raise ConnectError("Unrecoverable exception trying to send") from exc
    return size


class BatchDelivery:
    """The delivery reports of one polled batch, for ``SourceTask.commit_batch``.

    The lease creates one per batch when the task overrides ``commit_batch``; the batch's
    records are produced with :meth:`callbacks` (or :meth:`record_callback` on the
    per-record path), and once :attr:`complete`, :meth:`metadata` gives where each record
    landed. Two ways to pair reports with records:

    * *ordered*: one bound method for every record, reports appended as they come. Used when
      every record names its partition and the producer keeps a partition's records in
      order (``max.in.flight.requests.per.connection=1`` or idempotence): then the k-th
      report of a partition is the k-th record sent to it, at no per-record Python cost
      beyond the report itself;
    * *exact*: a ``partial`` per record carrying its index (~1 us more a record).

    ``on_error(record, err)`` handles a failed send: ``True`` when error tolerance skipped
    it (its offset is then ``-1``), ``False`` when the task fails (the batch then never
    completes, so it is never committed).
    """

    __slots__ = ("_by_index", "_on_error", "_reports", "arrived", "batch", "ordered", "size")

    def __init__(
        self,
        batch: SourceRecordBatch,
        on_error: Callable[[Any, Any], bool],
        ordered: bool,
    ) -> None:
        self.batch = batch
        self.size = len(batch)
        self.ordered = ordered
        self.arrived = 0
        self._on_error = on_error
        self._reports: list[Any] = []
        self._by_index: list[Any] | None = None

    @property
    def complete(self) -> bool:
        return self.arrived == self.size

    def callbacks(self) -> Iterable[Callable[[Any, Any], None]]:
        """One delivery callback per record of the batch, in order (the columnar path)."""
        batch = self.batch
        if self.ordered and (batch.kafka_partitions is not None or
                             batch.kafka_partition is not None):  # fmt: skip
            return repeat(self._report, self.size)
        self._by_index = [None] * self.size
        return map(partial, repeat(self._report_at), range(self.size))

    def record_callback(
        self, records: list[SourceRecord]
    ) -> Callable[[SourceRecord], Callable[[Any, Any], None]]:
        """The per-record path's ``record_callback`` for the batch's ``records``."""
        self._by_index = [None] * self.size
        index = {id(record): i for i, record in enumerate(records)}
        report_at = self._report_at
        return lambda record: partial(report_at, index[id(record)])

    def _report(self, err: Any, msg: Any) -> None:
        if err is not None and not self._on_error(None, err):
            return
        self._reports.append(msg)
        self.arrived += 1

    def _report_at(self, index: int, err: Any, msg: Any) -> None:
        if err is not None and not self._on_error(self.batch[index], err):
            return
        assert self._by_index is not None
        # (None, None) is a record dropped by a transformation or skipped by tolerance.
        self._by_index[index] = msg if err is None else None
        self.arrived += 1

    def metadata(self) -> RecordMetadataBatch:
        """Where each record landed (call once :attr:`complete`)."""
        if self._by_index is not None:
            return _exact_metadata(self.batch.topic, self._by_index)
        batch = self.batch
        reports = self._reports
        if batch.kafka_partitions is not None:
            partitions = list(batch.kafka_partitions)
        else:  # ordered mode: the batch names its one partition
            partitions = [-1 if batch.kafka_partition is None else batch.kafka_partition]
            partitions *= self.size
        first = partitions[0]
        if batch.kafka_partitions is None or partitions.count(first) == self.size:
            offsets = list(map(_OFFSET, reports))
        else:
            # The k-th report of a partition is the k-th record sent to it.
            queues: dict[int, list[int]] = {}
            for report in reports:
                queues.setdefault(report.partition(), []).append(report.offset())
            per_partition = {p: iter(q) for p, q in queues.items()}
            offsets = [next(per_partition[p]) for p in partitions]
        if min(offsets, default=0) < 0:  # a failed send that tolerance skipped
            offsets = [o if o >= 0 else -1 for o in offsets]
        return RecordMetadataBatch([batch.topic] * self.size, partitions, offsets)


def _exact_metadata(topic: str, reports: list[Any]) -> RecordMetadataBatch:
    topics, partitions, offsets = [], [], []
    for report in reports:
        if report is None:
            topics.append(topic)
            partitions.append(-1)
            offsets.append(-1)
        else:
            offset = report.offset()
            topics.append(report.topic())
            partitions.append(report.partition())
            offsets.append(offset if offset >= 0 else -1)
    return RecordMetadataBatch(topics, partitions, offsets)
