"""Source partitions and offsets, in Confluent's shapes (``OffsetProtocols``,
``TimestampIncrementingOffset``), so offsets written by Kafka Connect's JDBC source work
here and the KIP-875 offsets REST API reads and writes the same maps."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.connectors.jdbc.config import (
    INCREMENTING_FIELD,
    PROTOCOL_KEY,
    PROTOCOL_V1,
    QUERY_NAME_KEY,
    QUERY_NAME_VALUE,
    TABLE_NAME_KEY,
    TIMESTAMP_FIELD,
    TIMESTAMP_NANOS_FIELD,
)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def table_partition(fqn: str) -> dict[str, str]:
    """Protocol 1: the fully qualified table (``db.schema.table``) and ``"protocol": "1"``."""
    return {TABLE_NAME_KEY: fqn, PROTOCOL_KEY: PROTOCOL_V1}


def legacy_partition(name: str) -> dict[str, str]:
    """Protocol 0, the partition of Confluent's older versions: the bare table name."""
    return {TABLE_NAME_KEY: name}


QUERY_PARTITION = {QUERY_NAME_KEY: QUERY_NAME_VALUE}


@dataclass(frozen=True, slots=True)
class Offset:
    """Where a timestamp/incrementing querier is: last incrementing value and timestamp
    (an aware UTC datetime with microseconds; Confluent stores ms plus the second's nanos)."""

    incrementing: int | None = None
    timestamp: datetime.datetime | None = None

    def to_map(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.incrementing is not None:
            result[INCREMENTING_FIELD] = self.incrementing
        if self.timestamp is not None:
            delta = self.timestamp - _EPOCH
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            result[TIMESTAMP_FIELD] = micros // 1000
            result[TIMESTAMP_NANOS_FIELD] = self.timestamp.microsecond * 1000
        return result

    @classmethod
    def from_map(cls, offset: Mapping[str, Any] | None) -> Offset:
        if not offset:
            return cls()
        incrementing = offset.get(INCREMENTING_FIELD)
        millis = offset.get(TIMESTAMP_FIELD)
        timestamp = None
        if millis is not None:
            nanos = offset.get(TIMESTAMP_NANOS_FIELD)
            seconds = millis // 1000
            micros = (nanos // 1000) if nanos is not None else (millis % 1000) * 1000
            timestamp = _EPOCH + datetime.timedelta(seconds=seconds, microseconds=micros)
        return cls(None if incrementing is None else int(incrementing), timestamp)


def check_offset(partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None) -> None:
    """Reject maps that are not Confluent's partition/offset shapes (KIP-875 alter)."""
    if partition is None or not (TABLE_NAME_KEY in partition or QUERY_NAME_KEY in partition):
        raise ConnectError(
            f"Partition objects must contain the key '{TABLE_NAME_KEY}' or '{QUERY_NAME_KEY}'"
        )
    if offset is None:
        return
    unknown = set(offset) - {INCREMENTING_FIELD, TIMESTAMP_FIELD, TIMESTAMP_NANOS_FIELD}
    if unknown:
        raise ConnectError(f"Unknown offset keys {sorted(unknown)}")
    for key in (INCREMENTING_FIELD, TIMESTAMP_FIELD, TIMESTAMP_NANOS_FIELD):
        value = offset.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ConnectError(f"The value for the '{key}' key in the offset must be a Long")


__all__ = ["QUERY_PARTITION", "Offset", "check_offset", "legacy_partition", "table_partition"]
