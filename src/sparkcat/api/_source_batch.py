"""The source side of the columnar record path: :class:`SourceRecordBatch` and its runs.

Private module; import the public names from :mod:`sparkcat.api.batch` (whose docs describe
the columnar path as a whole).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA
from sparkcat.api.records import Header, SourceRecord

if TYPE_CHECKING:
    from sparkcat.api.data import Schema

__all__ = ["KafkaHeaders", "SourceRecordBatch", "SourceRun"]

KafkaHeaders = Sequence[tuple[str, bytes | None]]
"""One record's headers as Kafka stores them: ``(key, value)`` pairs, the value ``bytes`` or
``None`` (what confluent-kafka's ``Message.headers()`` returns)."""


class SourceRun(NamedTuple):
    """``length`` consecutive records of one source partition; ``source_offset`` is the
    offset reached after the last of them (what the framework commits once all are acked)."""

    source_partition: dict[str, Any] | None
    source_offset: dict[str, Any] | None
    length: int


class SourceRecordBatch(Sequence[SourceRecord]):
    """What ``SourceTask.poll`` may return instead of a list: records as columns.

    ``values`` (and ``keys``, ``None`` for no keys at all) hold Connect data described by
    ``value_schema``/``key_schema``; ``runs`` split the records, in order, by source
    partition. ``topic``, ``kafka_partition`` and ``timestamp`` apply to every record
    (``None``: the producer's partitioner / the time of sending), unless a per-record column
    is given:

    - ``topics``: each record's topic (overrides ``topic``, which may then be ``None``), for
      a source whose records of several topics interleave (a CDC stream of transactions
      that touch several tables) and must keep their order;
    - ``key_schemas`` / ``value_schemas``: each record's key / value schema (override
      ``key_schema`` / ``value_schema``), typically one schema per topic; a tombstone's value
      schema is ``None``;
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
        "key_schemas",
        "keys",
        "record_offsets",
        "runs",
        "timestamp",
        "timestamps",
        "topic",
        "topics",
        "value_schema",
        "value_schemas",
        "values",
    )

    def __init__(
        self,
        topic: str | None,
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
        topics: Sequence[str] | None = None,
        key_schemas: Sequence[Schema | None] | None = None,
        value_schemas: Sequence[Schema | None] | None = None,
    ) -> None:
        size = len(values)
        if sum(run.length for run in runs) != size:
            raise ValueError("SourceRecordBatch: the runs must cover the values exactly")
        if topic is None and topics is None:
            raise ValueError("SourceRecordBatch: give a topic or a topics column")
        for name, column in (("keys", keys), ("kafka_partitions", kafka_partitions),
                             ("timestamps", timestamps), ("headers", headers),
                             ("topics", topics), ("key_schemas", key_schemas),
                             ("value_schemas", value_schemas)):  # fmt: skip
            if column is not None and len(column) != size:
                raise ValueError(f"SourceRecordBatch: {name} and values differ in length")
        self.topic = topic
        self.topics = topics
        self.key_schemas = key_schemas
        self.value_schemas = value_schemas
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
        topic: str | None,
        values: list[Any],
        value_schema: Schema | None,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        **extra: Any,
    ) -> SourceRecordBatch:
        """A batch whose records all come from one source partition."""
        return cls(topic, values, value_schema, [SourceRun(source_partition, source_offset,
                                                           len(values))], **extra)  # fmt: skip

    def topic_column(self) -> Sequence[str]:
        """Each record's topic (``topics``, or ``topic`` repeated)."""
        if self.topics is not None:
            return self.topics
        assert self.topic is not None  # checked when the batch was made
        return [self.topic] * len(self.values)

    def key_schema_column(self) -> Sequence[Schema | None]:
        """Each record's key schema (``key_schemas``, or ``key_schema`` repeated)."""
        if self.key_schemas is not None:
            return self.key_schemas
        return [self.key_schema] * len(self.values)

    def value_schema_column(self) -> Sequence[Schema | None]:
        """Each record's value schema (``value_schemas``, or ``value_schema`` repeated)."""
        if self.value_schemas is not None:
            return self.value_schemas
        return [self.value_schema] * len(self.values)

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
            columns = zip(run_of, self.topic_column(), self.key_schema_column(), keys,
                          self.value_schema_column(), self.values, partitions, timestamps,
                          headers, strict=True)  # fmt: skip
            self._records = [
                SourceRecord(
                    partition, offset, topic, kafka_partition, key_schema, key,
                    value_schema, value, timestamp, record_headers,
                )
                for ((partition, offset), topic, key_schema, key, value_schema, value,
                     kafka_partition, timestamp, record_headers) in columns
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
        if self.topics is not None:
            return f"SourceRecordBatch({len(self)} records for {len(set(self.topics))} topics)"
        return f"SourceRecordBatch({len(self)} records for {self.topic!r})"


def _connect_headers(headers: KafkaHeaders | None) -> list[Header] | None:
    if not headers:
        return None
    return [Header(key, OPTIONAL_BYTES_SCHEMA, value) for key, value in headers]
