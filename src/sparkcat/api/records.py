"""Records that flow through a connector: :class:`SourceRecord` and :class:`SinkRecord`.

Counterparts of Kafka's ``org.apache.kafka.connect.connector.ConnectRecord``,
``source.SourceRecord``, ``sink.SinkRecord``, ``header.Header``/``Headers`` and
``common.TopicPartition``.

Records are immutable and cheap: each class stores its fields in ``__slots__`` and exposes
them as read-only properties, because the framework creates one per message (a frozen
dataclass costs about four times as much to build). Transformations never mutate a record;
they derive a new one with :meth:`ConnectRecord.new_record`.

Records, headers and topic partitions are picklable: they cross process boundaries (from a
Spark executor to the worker process, and in the lease plan from the worker to executors).
They compare equal field by field; they are not hashable because keys and values may be
``dict``/``list``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, overload

if TYPE_CHECKING:
    from sparkcat.api.data import Schema


class TopicPartition(NamedTuple):
    """A Kafka topic and partition number; hashable, so usable as a ``dict`` key."""

    topic: str
    partition: int

    def __str__(self) -> str:
        # Kafka's TopicPartition.toString: "<topic>-<partition>".
        return f"{self.topic}-{self.partition}"


class TimestampType(Enum):
    """How a Kafka record's timestamp was set (Kafka's ``record.TimestampType``).

    The value is Kafka's numeric id; ``str()`` gives Kafka's display name (``CreateTime``).
    """

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    def __str__(self) -> str:
        return _TIMESTAMP_TYPE_NAMES[self]


_TIMESTAMP_TYPE_NAMES = {
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
}


class Header(NamedTuple):
    """One record header: a string ``key`` with a ``value`` described by ``schema``.

    ``schema`` is ``None`` for schemaless values. Immutable; derive changed headers with
    :meth:`rename` and :meth:`with_value`.
    """

    key: str
    schema: Schema | None
    value: Any

    def rename(self, key: str) -> Header:
        """This header's schema and value under another key."""
        return Header(key, self.schema, self.value)

    def with_value(self, schema: Schema | None, value: Any) -> Header:
        """A header with this key and the given schema and value."""
        return Header(self.key, schema, value)


class Headers(Sequence[Header]):
    """An immutable, ordered sequence of :class:`Header`; keys may repeat.

    Every "modifying" method returns a new ``Headers`` and leaves this one untouched, so a
    record's headers can be shared between the records derived from it. ``Headers.EMPTY`` is
    the shared empty instance.
    """

    __slots__ = ("_items",)
    EMPTY: ClassVar[Headers]

    def __init__(self, headers: Iterable[Header] = ()) -> None:
        self._items: tuple[Header, ...] = tuple(headers)

    @classmethod
    def _of(cls, items: tuple[Header, ...]) -> Headers:
        # Skips the tuple() copy of __init__ for internally built tuples.
        obj = cls.__new__(cls)
        obj._items = items
        return obj

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._items)

    @overload
    def __getitem__(self, index: int) -> Header: ...

    @overload
    def __getitem__(self, index: slice) -> Headers: ...

    def __getitem__(self, index: int | slice) -> Header | Headers:
        if isinstance(index, slice):
            return Headers._of(self._items[index])
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._items == other._items
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{h.key}={h.value!r}" for h in self._items)
        return f"Headers({inner})"

    def __reduce__(self) -> tuple[type[Headers], tuple[tuple[Header, ...]]]:
        return (Headers, (self._items,))

    def last_with_name(self, key: str) -> Header | None:
        """The last header whose key is ``key``, or ``None``."""
        for header in self._items[::-1]:
            if header.key == key:
                return header
        return None

    def all_with_name(self, key: str) -> list[Header]:
        """Every header whose key is ``key``, in order."""
        return [h for h in self._items if h.key == key]

    def with_header(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """These headers plus ``Header(key, schema, value)`` appended at the end."""
        return Headers._of((*self._items, Header(key, schema, value)))

    def with_headers(self, headers: Iterable[Header]) -> Headers:
        """These headers plus ``headers`` appended at the end."""
        return Headers._of(self._items + tuple(headers))

    def without(self, key: str) -> Headers:
        """These headers minus every header whose key is ``key``."""
        return Headers._of(tuple(h for h in self._items if h.key != key))

    def retain_latest(self) -> Headers:
        """Only the last header of each key, in the order of those last occurrences."""
        last = {h.key: i for i, h in enumerate(self._items)}
        return Headers._of(tuple(h for i, h in enumerate(self._items) if last[h.key] == i))


Headers.EMPTY = Headers()


def _headers(headers: Iterable[Header] | None) -> Headers:
    if headers is None:
        return Headers.EMPTY
    if isinstance(headers, Headers):
        return headers
    return Headers(headers)


class ConnectRecord:
    """Fields shared by source and sink records (Kafka's ``ConnectRecord``).

    ``kafka_partition`` is ``None`` when the producer should choose the partition;
    ``timestamp`` is epoch milliseconds or ``None``; ``headers`` is never ``None``.
    Subclasses implement :meth:`new_record`.
    """

    __slots__ = (
        "_headers",
        "_kafka_partition",
        "_key",
        "_key_schema",
        "_timestamp",
        "_topic",
        "_value",
        "_value_schema",
    )

    _topic: str
    _kafka_partition: int | None
    _key_schema: Schema | None
    _key: Any
    _value_schema: Schema | None
    _value: Any
    _timestamp: int | None
    _headers: Headers

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def kafka_partition(self) -> int | None:
        return self._kafka_partition

    @property
    def key_schema(self) -> Schema | None:
        return self._key_schema

    @property
    def key(self) -> Any:
        return self._key

    @property
    def value_schema(self) -> Schema | None:
        return self._value_schema

    @property
    def value(self) -> Any:
        return self._value

    @property
    def timestamp(self) -> int | None:
        return self._timestamp

    @property
    def headers(self) -> Headers:
        return self._headers

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: Iterable[Header] | None = None,
    ) -> ConnectRecord:
        """A record of the same class with these fields and this record's class-specific
        fields (source partition/offset; Kafka offset, timestamp type, original coordinates).

        ``headers=None`` keeps this record's headers. Used by transformations; never mutates.
        """
        raise NotImplementedError

    def _base_fields(self) -> tuple[Any, ...]:
        return (
            self._topic,
            self._kafka_partition,
            self._key_schema,
            self._key,
            self._value_schema,
            self._value,
            self._timestamp,
            self._headers,
        )

    def _base_repr(self) -> str:
        return (
            f"ConnectRecord{{topic={self._topic!r}, kafkaPartition={self._kafka_partition}, "
            f"key={self._key!r}, keySchema={self._key_schema!r}, value={self._value!r}, "
            f"valueSchema={self._value_schema!r}, timestamp={self._timestamp}, "
            f"headers={self._headers!r}}}"
        )


class SourceRecord(ConnectRecord):
    """A record a :class:`~sparkcat.api.source.SourceTask` returns from ``poll()``.

    ``source_partition`` names where the data came from (e.g. ``{"filename": "a.txt"}``)
    and ``source_offset`` how far into it this record is (e.g. ``{"position": 42}``); both
    are maps with string keys and primitive values, stored by the framework as JSON once the
    record is acknowledged by Kafka. ``kafka_partition=None`` lets the producer choose.
    Built on an executor; picklable.
    """

    __slots__ = ("_source_offset", "_source_partition")

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None,
        source_offset: Mapping[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Iterable[Header] | None = None,
    ) -> None:
        # Assigned inline rather than through super().__init__: this runs once per record.
        self._source_partition = source_partition
        self._source_offset = source_offset
        self._topic = topic
        self._kafka_partition = kafka_partition
        self._key_schema = key_schema
        self._key = key
        self._value_schema = value_schema
        self._value = value
        self._timestamp = timestamp
        self._headers = Headers.EMPTY if headers is None else _headers(headers)

    @property
    def source_partition(self) -> Mapping[str, Any] | None:
        return self._source_partition

    @property
    def source_offset(self) -> Mapping[str, Any] | None:
        return self._source_offset

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: Iterable[Header] | None = None,
    ) -> SourceRecord:
        return SourceRecord(
            self._source_partition,
            self._source_offset,
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            self._headers if headers is None else headers,
        )

    def __reduce__(self) -> tuple[type[SourceRecord], tuple[Any, ...]]:
        return (SourceRecord, (self._source_partition, self._source_offset, *self._base_fields()))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (
            self._source_partition == other._source_partition
            and self._source_offset == other._source_offset
            and self._base_fields() == other._base_fields()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SourceRecord{{sourcePartition={self._source_partition!r}, "
            f"sourceOffset={self._source_offset!r}}} {self._base_repr()}"
        )


class SinkRecord(ConnectRecord):
    """A record the framework hands to :meth:`~sparkcat.api.sink.SinkTask.put`.

    ``kafka_offset`` is the record's offset in ``topic``/``kafka_partition`` as consumed.
    ``original_topic``/``original_kafka_partition``/``original_kafka_offset`` keep the
    coordinates the record was consumed at, before any transformation changed them (they
    default to the given topic/partition/offset and survive :meth:`new_record`); sink tasks
    that track offsets themselves must use them. Built on an executor; picklable.
    """

    __slots__ = (
        "_kafka_offset",
        "_original_kafka_offset",
        "_original_kafka_partition",
        "_original_topic",
        "_timestamp_type",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE,
        headers: Iterable[Header] | None = None,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        self._topic = topic
        self._kafka_partition = kafka_partition
        self._key_schema = key_schema
        self._key = key
        self._value_schema = value_schema
        self._value = value
        self._kafka_offset = kafka_offset
        self._timestamp = timestamp
        self._timestamp_type = timestamp_type
        self._headers = Headers.EMPTY if headers is None else _headers(headers)
        self._original_topic = topic if original_topic is None else original_topic
        self._original_kafka_partition = (
            kafka_partition if original_kafka_partition is None else original_kafka_partition
        )
        self._original_kafka_offset = (
            kafka_offset if original_kafka_offset is None else original_kafka_offset
        )

    @property
    def kafka_offset(self) -> int:
        return self._kafka_offset

    @property
    def timestamp_type(self) -> TimestampType:
        return self._timestamp_type

    @property
    def original_topic(self) -> str:
        return self._original_topic

    @property
    def original_kafka_partition(self) -> int | None:
        return self._original_kafka_partition

    @property
    def original_kafka_offset(self) -> int:
        return self._original_kafka_offset

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: Iterable[Header] | None = None,
    ) -> SinkRecord:
        return SinkRecord(
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            self._kafka_offset,
            timestamp,
            self._timestamp_type,
            self._headers if headers is None else headers,
            self._original_topic,
            self._original_kafka_partition,
            self._original_kafka_offset,
        )

    def _fields(self) -> tuple[Any, ...]:
        return (
            self._topic,
            self._kafka_partition,
            self._key_schema,
            self._key,
            self._value_schema,
            self._value,
            self._kafka_offset,
            self._timestamp,
            self._timestamp_type,
            self._headers,
            self._original_topic,
            self._original_kafka_partition,
            self._original_kafka_offset,
        )

    def __reduce__(self) -> tuple[type[SinkRecord], tuple[Any, ...]]:
        return (SinkRecord, self._fields())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SinkRecord{{kafkaOffset={self._kafka_offset}, "
            f"timestampType={self._timestamp_type}, originalTopic={self._original_topic!r}, "
            f"originalKafkaPartition={self._original_kafka_partition}, "
            f"originalKafkaOffset={self._original_kafka_offset}}} {self._base_repr()}"
        )


__all__ = [
    "ConnectRecord",
    "Header",
    "Headers",
    "SinkRecord",
    "SourceRecord",
    "TimestampType",
    "TopicPartition",
]
