"""The columnar record path: whole batches of records as columns, beside the per-record API.

Per record, Python objects cost more than the work a simple connector does (a ``SinkRecord``
and a ``SchemaAndValue`` per message, a converter call per key and per value). Batch-aware
plugins avoid them; everything else keeps working unchanged, because each batch type here is
also an ordinary read-only sequence of records, built one by one only when indexed.

- :class:`SinkRecordBatch` is what ``SinkTask.put`` receives when the framework could convert
  a consumed batch column by column (no transformations, no headers). Iterating or indexing
  it gives ``SinkRecord``\\ s exactly as the per-record path builds them; a batch-aware task
  reads its columns instead (:meth:`SinkRecordBatch.values`, :meth:`~SinkRecordBatch.keys`,
  :meth:`~SinkRecordBatch.offsets`, :meth:`~SinkRecordBatch.to_arrow`, ...).
- :class:`SourceRecordBatch` is what ``SourceTask.poll`` may return instead of a list: one
  topic, a column of values (and optionally keys, Kafka partitions, timestamps and headers)
  and, per source partition, one run of consecutive records with the source offset reached
  after the run's last record. The framework converts it column by column when there are no
  transformations and the task does not override ``commit_record``; otherwise it takes the
  batch's records one by one. A task that needs to know where its records landed (as
  MirrorMaker 2 does for offset syncs) overrides ``SourceTask.commit_batch`` and receives a
  :class:`RecordMetadataBatch` per delivered batch instead of a ``commit_record`` call per
  record.
- Converters may offer :meth:`~sparkcat.api.converter.Converter.from_connect_data_batch`
  and :meth:`~sparkcat.api.converter.Converter.to_connect_data_batch`; the defaults call
  the per-record methods, so any converter works on the columnar path.

Only the standard library is imported; :meth:`SinkRecordBatch.to_arrow` imports ``pyarrow``
when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA
from sparkcat.api.records import Header, SinkRecord, SourceRecord, TimestampType

if TYPE_CHECKING:
    from sparkcat.api.data import Schema

__all__ = [
    "ConnectDataBatch",
    "KafkaHeaders",
    "RecordMetadataBatch",
    "SinkRecordBatch",
    "SourceRecordBatch",
    "SourceRun",
]

KafkaHeaders = Sequence[tuple[str, bytes | None]]
"""One record's headers as Kafka stores them: ``(key, value)`` pairs, the value ``bytes`` or
``None`` (what confluent-kafka's ``Message.headers()`` returns)."""

_TIMESTAMP_TYPES = (
    TimestampType.NO_TIMESTAMP_TYPE,
    TimestampType.CREATE_TIME,
    TimestampType.LOG_APPEND_TIME,
)


class ConnectDataBatch(NamedTuple):
    """Values a converter read from Kafka in one call (``to_connect_data_batch``).

    ``schema`` is the schema of every value, unless ``schemas`` gives one per value (then
    ``schema`` is ``None`` and unused).
    """

    schema: Schema | None
    values: list[Any]
    schemas: list[Schema | None] | None = None

    def schema_column(self) -> list[Schema | None]:
        """One schema per value."""
        if self.schemas is not None:
            return self.schemas
        return [self.schema] * len(self.values)


class SinkRecordBatch(Sequence[SinkRecord]):
    """Consumed records as columns; a read-only sequence of ``SinkRecord`` built on demand.

    Built by the framework (tasks only read it). ``timestamps`` holds confluent-kafka's
    ``(type, ms)`` pairs (type 0: no timestamp, 1: create time, 2: log-append time).
    ``topics``, ``partitions``, ``offsets`` and ``timestamps`` may be given as zero-argument
    callables, called once when the column is first needed: a task that reads only values
    then costs no per-record work for them.
    Columns are shared, not copied: do not modify the lists the accessors return.
    """

    __slots__ = (
        "_key_schemas",
        "_keys",
        "_offsets",
        "_partitions",
        "_records",
        "_timestamps",
        "_topics",
        "_value_schemas",
        "_values",
    )

    def __init__(
        self,
        topics: list[str] | Callable[[], list[str]],
        partitions: list[int] | Callable[[], list[int]],
        offsets: list[int] | Callable[[], list[int]],
        key_schemas: list[Schema | None],
        keys: list[Any],
        value_schemas: list[Schema | None],
        values: list[Any],
        timestamps: list[tuple[int, int]] | Callable[[], list[tuple[int, int]]],
    ) -> None:
        self._topics = topics
        self._partitions = partitions
        self._offsets = offsets
        self._key_schemas = key_schemas
        self._keys = keys
        self._value_schemas = value_schemas
        self._values = values
        self._timestamps = timestamps
        self._records: list[SinkRecord | None] | None = None

    # -- columns -------------------------------------------------------------------------
    def values(self) -> list[Any]:
        """The records' values (Connect data, as the value converter produced them)."""
        return self._values

    def keys(self) -> list[Any]:
        """The records' keys (Connect data)."""
        return self._keys

    def value_schemas(self) -> list[Schema | None]:
        return self._value_schemas

    def key_schemas(self) -> list[Schema | None]:
        return self._key_schemas

    def topics(self) -> list[str]:
        return self._column("_topics")

    def partitions(self) -> list[int]:
        """The Kafka partition of each record."""
        return self._column("_partitions")

    def offsets(self) -> list[int]:
        """The Kafka offset of each record."""
        return self._column("_offsets")

    def timestamps(self) -> list[int | None]:
        """Each record's timestamp in epoch ms (``None`` when the record has none)."""
        return [ts if kind else None for kind, ts in self._column("_timestamps")]

    def _column(self, slot: str) -> list[Any]:
        column = getattr(self, slot)
        if callable(column):
            column = column()
            setattr(self, slot, column)
        return column  # type: ignore[no-any-return]

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` with columns ``topic``, ``partition``, ``offset``,
        ``timestamp`` (ms, null when absent), ``key`` and ``value`` (Arrow infers their
        types from the Connect data: strings, bytes, numbers, dicts as structs, ...).
        Needs ``pyarrow`` installed."""
        try:
            # By name, at call time: the api package itself needs only the standard library.
            pa = importlib.import_module("pyarrow")
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("SinkRecordBatch.to_arrow() needs pyarrow installed") from exc
        return pa.table(
            {
                "topic": pa.array(self.topics(), pa.string()),
                "partition": pa.array(self.partitions(), pa.int32()),
                "offset": pa.array(self.offsets(), pa.int64()),
                "timestamp": pa.array(self.timestamps(), pa.int64()),
                "key": pa.array(self._keys),
                "value": pa.array(self._values),
            }
        )

    # -- the sequence of records ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> SinkRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SinkRecord]: ...

    def __getitem__(self, index: int | slice) -> SinkRecord | list[SinkRecord]:
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self._values)))]
        size = len(self._values)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("SinkRecordBatch index out of range")
        return self._record(index)

    def __iter__(self) -> Iterator[SinkRecord]:
        return map(self._record, range(len(self._values)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SinkRecordBatch | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SinkRecordBatch({len(self)} records)"

    def _record(self, i: int) -> SinkRecord:
        records = self._records
        if records is None:
            records = self._records = [None] * len(self._values)
        record = records[i]
        if record is None:
            kind, ts = self._column("_timestamps")[i]
            record = SinkRecord(
                self._column("_topics")[i],
                self._column("_partitions")[i],
                self._key_schemas[i],
                self._keys[i],
                self._value_schemas[i],
                self._values[i],
                self._column("_offsets")[i],
                ts if kind else None,
                _TIMESTAMP_TYPES[kind],
            )
            records[i] = record
        return record


class SourceRun(NamedTuple):
    """``length`` consecutive records of one source partition; ``source_offset`` is the
    offset reached after the last of them (what the framework commits once all are acked)."""

    source_partition: dict[str, Any] | None
    source_offset: dict[str, Any] | None
    length: int


class SourceRecordBatch(Sequence[SourceRecord]):
    """What ``SourceTask.poll`` may return instead of a list: records of one topic as columns.

    ``values`` (and ``keys``, ``None`` for no keys at all) hold Connect data described by
    ``value_schema``/``key_schema``; ``runs`` split the records, in order, by source
    partition. ``kafka_partition`` and ``timestamp`` apply to every record (``None``: the
    producer's partitioner / the time of sending), unless a per-record column is given:

    - ``kafka_partitions``: each record's Kafka partition (``int``; overrides
      ``kafka_partition``);
    - ``timestamps``: each record's timestamp in epoch ms (``None`` or ``0``: the time of
      sending; overrides ``timestamp``);
    - ``headers``: each record's headers, ``None`` or :data:`KafkaHeaders` (``(key, value)``
      pairs). Header values are Connect ``BYTES`` data (``OPTIONAL_BYTES_SCHEMA``): the
      header converter serializes them, so with ``ByteArrayConverter`` the bytes given are
      the bytes written.

    Indexing builds the records: each carries its own offset when the task gave
    ``record_offsets`` (a callable computing all of them, called only then), else its run's
    offset. Columns are the task's lists, used as they are: do not modify them once the
    batch is returned.
    """

    __slots__ = (
        "_records",
        "headers",
        "kafka_partition",
        "kafka_partitions",
        "key_schema",
        "keys",
        "record_offsets",
        "runs",
        "timestamp",
        "timestamps",
        "topic",
        "value_schema",
        "values",
    )

    def __init__(
        self,
        topic: str,
        values: list[Any],
        value_schema: Schema | None,
        runs: Sequence[SourceRun],
        keys: list[Any] | None = None,
        key_schema: Schema | None = None,
        kafka_partition: int | None = None,
        timestamp: int | None = None,
        record_offsets: Callable[[], Sequence[dict[str, Any] | None]] | None = None,
        *,
        kafka_partitions: Sequence[int] | None = None,
        timestamps: Sequence[int | None] | None = None,
        headers: Sequence[KafkaHeaders | None] | None = None,
    ) -> None:
        size = len(values)
        if sum(run.length for run in runs) != size:
            raise ValueError("SourceRecordBatch: the runs must cover the values exactly")
        for name, column in (("keys", keys), ("kafka_partitions", kafka_partitions),
                             ("timestamps", timestamps), ("headers", headers)):  # fmt: skip
            if column is not None and len(column) != size:
                raise ValueError(f"SourceRecordBatch: {name} and values differ in length")
        self.topic = topic
        self.values = values
        self.value_schema = value_schema
        self.runs = tuple(runs)
        self.keys = keys
        self.key_schema = key_schema
        self.kafka_partition = kafka_partition
        self.timestamp = timestamp
        self.record_offsets = record_offsets
        self.kafka_partitions = kafka_partitions
        self.timestamps = timestamps
        self.headers = headers
        self._records: list[SourceRecord] | None = None

    @classmethod
    def of(
        cls,
        topic: str,
        values: list[Any],
        value_schema: Schema | None,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        **extra: Any,
    ) -> SourceRecordBatch:
        """A batch whose records all come from one source partition."""
        return cls(topic, values, value_schema, [SourceRun(source_partition, source_offset,
                                                           len(values))], **extra)  # fmt: skip

    def records(self) -> list[SourceRecord]:
        """The batch as ``SourceRecord`` objects (built once)."""
        if self._records is None:
            size = len(self.values)
            keys = self.keys if self.keys is not None else repeat(None, size)
            run_of = [
                (run.source_partition, run.source_offset)
                for run in self.runs
                for _ in range(run.length)
            ]
            if self.record_offsets is not None:
                offsets = self.record_offsets()
                run_of = [(p, o) for (p, _), o in zip(run_of, offsets, strict=True)]
            partitions = self.kafka_partitions or repeat(self.kafka_partition, size)
            timestamps = self.timestamps or repeat(self.timestamp, size)
            headers = map(_connect_headers, self.headers or repeat(None, size))
            self._records = [
                SourceRecord(
                    partition, offset, self.topic, kafka_partition, self.key_schema, key,
                    self.value_schema, value, timestamp, record_headers,
                )
                for (partition, offset), key, value, kafka_partition, timestamp, record_headers
                in zip(run_of, keys, self.values, partitions, timestamps, headers, strict=True)
            ]  # fmt: skip
        return self._records

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SourceRecord]: ...

    def __getitem__(self, index: int | slice) -> SourceRecord | list[SourceRecord]:
        return self.records()[index]

    def __iter__(self) -> Iterator[SourceRecord]:
        return iter(self.records())

    def __repr__(self) -> str:
        return f"SourceRecordBatch({len(self)} records for {self.topic!r})"


def _connect_headers(headers: KafkaHeaders | None) -> list[Header] | None:
    if not headers:
        return None
    return [Header(key, OPTIONAL_BYTES_SCHEMA, value) for key, value in headers]


class RecordMetadataBatch(NamedTuple):
    """Where Kafka stored the records of one :class:`SourceRecordBatch`, as columns: the
    batch-level twin of :class:`~sparkcat.api.source.RecordMetadata`, passed to
    ``SourceTask.commit_batch``.

    ``topics[i]``, ``partitions[i]`` and ``offsets[i]`` belong to the batch's record ``i``
    (the topic is the batch's unless a transformation routed the record elsewhere). The
    offset is ``-1`` for a record that was not written: dropped by a transformation, or
    whose send failed and was skipped under ``errors.tolerance=all``; its partition is then
    ``-1`` too when unknown.
    """

    topics: list[str]
    partitions: list[int]
    offsets: list[int]
