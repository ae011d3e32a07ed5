"""The records of MirrorMaker 2's internal topics, byte for byte as Kafka writes them.

Kafka serializes ``OffsetSync``, ``Checkpoint`` and ``Heartbeat`` with its protocol
``Schema``/``Struct`` types: fields back to back, big-endian, no field names or tags.
``INT16``/``INT32``/``INT64`` are 2/4/8-byte two's complement; ``STRING`` is an ``INT16``
byte length followed by UTF-8 (never null). Checkpoint and heartbeat values start with an
``INT16`` version (0), the only version Kafka has written so far.

=============  ===========================================  ==================================
record         key                                          value
=============  ===========================================  ==================================
OffsetSync     topic STRING, partition INT32                upstreamOffset INT64, offset INT64
Checkpoint     group STRING, topic STRING, partition INT32  version INT16, upstreamOffset
                                                            INT64, offset INT64, metadata
                                                            STRING
Heartbeat      sourceClusterAlias STRING,                   version INT16, timestamp INT64
               targetClusterAlias STRING
=============  ===========================================  ==================================
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from sparkcat.api.errors import DataError
from sparkcat.api.records import TopicPartition

VERSION = 0
"""The value version Kafka writes for checkpoints and heartbeats."""

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_MAX_STRING = 32767


class SchemaError(DataError):
    """Bytes that do not hold the expected record (Kafka's ``SchemaException``)."""


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > _MAX_STRING:
        raise SchemaError(f"String length {len(data)} is larger than the maximum string length.")
    return _I16.pack(len(data)) + data


class _Reader:
    """Reads fields in order from ``data``; raises :class:`SchemaError` on short or bad input."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes | None) -> None:
        if data is None:
            raise SchemaError("Missing record key or value")
        self._data = data
        self._pos = 0

    def _take(self, size: int) -> bytes:
        end = self._pos + size
        if end > len(self._data):
            raise SchemaError("Error reading field: not enough bytes")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def int16(self) -> int:
        return int(_I16.unpack(self._take(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self._take(4))[0])

    def int64(self) -> int:
        return int(_I64.unpack(self._take(8))[0])

    def string(self) -> str:
        size = self.int16()
        if size < 0:
            raise SchemaError(f"String field has negative length {size}")
        try:
            return self._take(size).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaError(f"Error reading string field: {exc}") from exc

    def version(self) -> int:
        version = self.int16()
        if version != VERSION:
            raise SchemaError(f"Unsupported version {version}")
        return version


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """Record ``upstream_offset`` of ``topic_partition`` (source) is at ``downstream_offset``
    of its remote topic (target)."""

    topic_partition: TopicPartition
    upstream_offset: int
    downstream_offset: int

    def record_key(self) -> bytes:
        return _string(self.topic_partition.topic) + _I32.pack(self.topic_partition.partition)

    def record_value(self) -> bytes:
        return _I64.pack(self.upstream_offset) + _I64.pack(self.downstream_offset)

    @classmethod
    def deserialize(cls, key: bytes | None, value: bytes | None) -> OffsetSync:
        k = _Reader(key)
        tp = TopicPartition(k.string(), k.int32())
        v = _Reader(value)
        return cls(tp, v.int64(), v.int64())


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Group ``consumer_group_id`` committed ``upstream_offset`` on the source, which is
    ``downstream_offset`` of ``topic_partition`` (the remote topic) on the target."""

    consumer_group_id: str
    topic_partition: TopicPartition
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""

    def record_key(self) -> bytes:
        tp = self.topic_partition
        return _string(self.consumer_group_id) + _string(tp.topic) + _I32.pack(tp.partition)

    def record_value(self) -> bytes:
        return (
            _I16.pack(VERSION)
            + _I64.pack(self.upstream_offset)
            + _I64.pack(self.downstream_offset)
            + _string(self.metadata)
        )

    def connect_partition(self) -> dict[str, Any]:
        tp = self.topic_partition
        return {"group": self.consumer_group_id, "topic": tp.topic, "partition": tp.partition}

    @classmethod
    def deserialize(cls, key: bytes | None, value: bytes | None) -> Checkpoint:
        v = _Reader(value)
        v.version()
        upstream, downstream, metadata = v.int64(), v.int64(), v.string()
        k = _Reader(key)
        group = k.string()
        tp = TopicPartition(k.string(), k.int32())
        return cls(group, tp, upstream, downstream, metadata)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """``source_cluster_alias`` -> ``target_cluster_alias`` was alive at ``timestamp`` (ms)."""

    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int

    def record_key(self) -> bytes:
        return _string(self.source_cluster_alias) + _string(self.target_cluster_alias)

    def record_value(self) -> bytes:
        return _I16.pack(VERSION) + _I64.pack(self.timestamp)

    def connect_partition(self) -> dict[str, Any]:
        return {
            "sourceClusterAlias": self.source_cluster_alias,
            "targetClusterAlias": self.target_cluster_alias,
        }

    @classmethod
    def deserialize(cls, key: bytes | None, value: bytes | None) -> Heartbeat:
        v = _Reader(value)
        v.version()
        timestamp = v.int64()
        k = _Reader(key)
        return cls(k.string(), k.string(), timestamp)


__all__ = ["VERSION", "Checkpoint", "Heartbeat", "OffsetSync", "SchemaError"]
