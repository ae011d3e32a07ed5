"""Heartbeats: a record every ``heartbeat.interval.ms`` that carries the current offset.

On a database whose captured tables are quiet, heartbeats let the framework commit offsets
(and so let PostgreSQL release WAL) although no change event is emitted. Topic
``<topic.heartbeat.prefix>.<topic.prefix>`` (default ``__debezium-heartbeat.<prefix>``), key
``io.debezium.connector.common.ServerNameKey`` ``{serverName}``, value
``io.debezium.connector.common.Heartbeat`` ``{ts_ms}``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.records import SourceRecord

KEY_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.ServerNameKey")
    .version(1)
    .field("serverName", SchemaBuilder.string().build())
    .build()
)
VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Heartbeat")
    .version(1)
    .field("ts_ms", SchemaBuilder.int64().build())
    .build()
)


def heartbeat_topic(heartbeat_prefix: str, topic_prefix: str, delimiter: str = ".") -> str:
    return f"{heartbeat_prefix}{delimiter}{topic_prefix}"


class Heartbeat:
    """Emits a heartbeat record when ``interval_ms`` passed since the last one (0: never)."""

    def __init__(self, topic: str, server_name: str, interval_ms: int) -> None:
        self.topic = topic
        self.server_name = server_name
        self.interval_s = interval_ms / 1000.0
        self._due = time.monotonic() + self.interval_s

    @property
    def enabled(self) -> bool:
        return self.interval_s > 0

    def due(self) -> bool:
        return self.enabled and time.monotonic() >= self._due

    def record(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> SourceRecord:
        self._due = time.monotonic() + self.interval_s
        key = Struct(KEY_SCHEMA).put("serverName", self.server_name)
        value = Struct(VALUE_SCHEMA).put("ts_ms", time.time_ns() // 1_000_000)
        return SourceRecord(
            partition, offset, self.topic, None, KEY_SCHEMA, key, VALUE_SCHEMA, value
        )


__all__ = ["KEY_SCHEMA", "VALUE_SCHEMA", "Heartbeat", "heartbeat_topic"]
