"""The columnar record path of leases (see :mod:`sparkcat.api.batch`): whole consumed or
polled batches converted column by column, with no per-record objects.

Used by :class:`~sparkcat.runtime.tasks.pipeline.Pipeline` when no transformation is configured;
every function here either handles a batch completely or returns ``None``/raises before any
side effect, so the per-record path can redo the batch and give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import methodcaller
from typing import Any

from sparkcat.api.batch import ConnectDataBatch, SinkRecordBatch
from sparkcat.api.data import SchemaAndValue
from sparkcat.api.errors import ConnectError

__all__ = ["produce_columns", "sink_batch", "to_connect_batch"]

# confluent-kafka Message accessors as C callables, mapped over a whole consumed batch.
_ERROR, _HEADERS, _TOPIC, _PARTITION, _OFFSET, _KEY, _VALUE, _TIMESTAMP = map(
    methodcaller, ("error", "headers", "topic", "partition", "offset", "key", "value", "timestamp")
)


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


def produce_columns(
    producer: Any,
    topic: str,
    values: list[bytes | None],
    keys: list[Any] | None,
    kafka_partition: int | None,
    timestamp: int | None,
    on_delivery: Callable[[Any, Any], None] | None,
    produce_when_room: Callable[..., None],
) -> int:
    """``produce`` every value (with its key, if any) of one topic; the count. Positional
    arguments as in ``Pipeline.produce_records`` (keywords cost confluent-kafka ~1 µs)."""
    produce = producer.produce
    partition = -1 if kafka_partition is None else kafka_partition
    ts = timestamp or 0
    for key, value in zip(repeat(None, len(values)) if keys is None else keys, values, strict=True):
        try:
            produce(topic, value, key, partition, on_delivery, None, ts)
        except BufferError:
            produce_when_room(producer, topic, value, key, partition, on_delivery, ts, None)
        except Exception as exc:
            raise ConnectError("Unrecoverable exception trying to send") from exc
    return len(values)
