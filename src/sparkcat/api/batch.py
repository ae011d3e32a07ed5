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
- :class:`SourceRecordBatch` is what ``SourceTask.poll`` may return instead of a list: a
  column of values (and optionally keys, Kafka partitions, timestamps and headers), one
  topic for all of them or a topic (and schemas) per record, and, per source partition, one
  run of consecutive records with the source offset reached after the run's last record.
  The framework converts it column by column when there are no transformations and the
  task does not override ``commit_record`` (with a topic per record, one converter call per
  group of records of equal topic and schema, groups in order of first appearance);
  otherwise it takes the batch's records one by one. A task that needs to know where its
  records landed (as MirrorMaker 2 does for offset syncs) overrides
  ``SourceTask.commit_batch`` and receives a :class:`RecordMetadataBatch` per delivered
  batch instead of a ``commit_record`` call per record.
- Converters may offer :meth:`~sparkcat.api.converter.Converter.from_connect_data_batch`
  and :meth:`~sparkcat.api.converter.Converter.to_connect_data_batch`; the defaults call
  the per-record methods, so any converter works on the columnar path.

Only the standard library is imported; :meth:`SinkRecordBatch.to_arrow` imports ``pyarrow``
when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from sparkcat.api._source_batch import KafkaHeaders, SourceRecordBatch, SourceRun
from sparkcat.api.records import SinkRecord, TimestampType

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


class RecordMetadataBatch(NamedTuple):
    """Where Kafka stored the records of one :class:`SourceRecordBatch`, as columns: the
    batch-level twin of :class:`~sparkcat.api.source.RecordMetadata`, passed to
    ``SourceTask.commit_batch``.

    ``topics[i]``, ``partitions[i]`` and ``offsets[i]`` belong to the batch's record ``i``
    (the topic is the record's in the batch unless a transformation routed it elsewhere). The
    offset is ``-1`` for a record that was not written: dropped by a transformation, or
    whose send failed and was skipped under ``errors.tolerance=all``; its partition is then
    ``-1`` too when unknown.
    """

    topics: list[str]
    partitions: list[int]
    offsets: list[int]
