"""Partitioners: the directory (the "encoded partition") a record's file goes to, as
Confluent's ``io.confluent.connect.storage.partitioner`` classes compute it.

A :class:`PartitionError` (Confluent's ``PartitionException``) means this record cannot be
placed; the task sends it through the error handler (DLQ/log) or fails with its message.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sparkcat.api import Struct, Type
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.time_format import JodaFormat, parse_iso_ms

_PKG = "io.confluent.connect.storage.partitioner."
_INT_TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64)
_KEY_TYPES = (*_INT_TYPES, Type.STRING, Type.BOOLEAN)
_DAY_MS = 86_400_000
_HOUR_MS = 3_600_000


class PartitionError(DataError):
    """This record cannot be given a partition (Confluent's ``PartitionException``)."""


class Partitioner(ABC):
    """Computes the encoded partition of a record; :meth:`partitioned_path` joins it."""

    timestamp_extractor: TimestampExtractor | None = None

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.delim: str = settings[c.DIRECTORY_DELIM_CONFIG]

    @abstractmethod
    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        """The encoded partition of ``record`` (``now_ms``: the wall clock for Wallclock)."""

    def partitioned_path(self, topic: str, encoded: str) -> str:
        return f"{topic}{self.delim}{encoded}"


class DefaultPartitioner(Partitioner):
    """``partition=<kafka partition>``."""

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        return f"partition={record.kafka_partition}"


class FieldPartitioner(Partitioner):
    """``<field>=<value>`` per name of ``partition.field.name``, joined by ``directory.delim``.
    Values of integer, string and boolean fields; ``<field>=null`` when the value is null."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.fields: list[str] = [f for f in settings[c.PARTITION_FIELD_NAME_CONFIG] if f]
        if not self.fields:
            raise ConfigError(
                f"Invalid value [] for configuration {c.PARTITION_FIELD_NAME_CONFIG}: "
                "FieldPartitioner needs at least one field name"
            )

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        value = record.value
        parts = []
        for name in self.fields:
            if isinstance(value, Struct):
                field = _nested_field(value, name)
                item = _nested_value(value, name)
                if item is not None and field not in _KEY_TYPES:
                    raise PartitionError(
                        f"Error encoding partition: type {field.value} of field '{name}' is "
                        "not supported as a partition key"
                    )
            elif isinstance(value, Mapping):
                item = _nested_map_value(value, name)
            else:
                raise PartitionError(
                    f"Error encoding partition: value of record {_where(record)} is not a "
                    f"Struct or Map (FieldPartitioner needs field '{name}')"
                )
            parts.append(f"{name}={_text(item)}")
        return self.delim.join(parts)


def _text(item: Any) -> str:
    if item is None:
        return "null"
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


def _nested_field(struct: Struct, path: str) -> Type:
    schema = struct.schema
    for name in path.split("."):
        field = schema.field(name) if schema.type is Type.STRUCT else None
        if field is None:
            raise PartitionError(f"Field '{path}' is not present in the schema.")
        schema = field.schema
    return schema.type


def _nested_value(struct: Struct, path: str) -> Any:
    value: Any = struct
    for name in path.split("."):
        if value is None:
            return None
        value = value.get(name)
    return value


def _nested_map_value(value: Mapping[str, Any], path: str) -> Any:
    item: Any = value
    for name in path.split("."):
        if not isinstance(item, Mapping) or name not in item:
            raise PartitionError(f"Field '{path}' is not present in the record value.")
        item = item[name]
    return item


def _where(record: SinkRecord) -> str:
    return f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"


# --------------------------------------------------------------------- timestamp extractors
class TimestampExtractor(ABC):
    """The timestamp (epoch ms) of a record for time-based partitioning and rotation."""

    @abstractmethod
    def extract(self, record: SinkRecord, now_ms: int) -> int | None: ...


class WallclockTimestampExtractor(TimestampExtractor):
    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return now_ms


class RecordTimestampExtractor(TimestampExtractor):
    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return record.timestamp


class RecordFieldTimestampExtractor(TimestampExtractor):
    """A field of the value: a number (epoch ms), a Timestamp/Date, or a string (digits:
    epoch ms; otherwise ISO-8601)."""

    def __init__(self, field: str) -> None:
        self.field = field

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        value = record.value
        if isinstance(value, Struct):
            _nested_field(value, self.field)
            item = _nested_value(value, self.field)
        elif isinstance(value, Mapping):
            item = _nested_map_value(value, self.field)
        else:
            raise PartitionError("Error encoding partition: value is not a Struct or Map")
        if isinstance(item, bool) or item is None:
            raise PartitionError(f"Error extracting timestamp from record field: {self.field}")
        if isinstance(item, int | float):
            return int(item)
        if isinstance(item, datetime):
            return int(item.timestamp() * 1000)
        if isinstance(item, date):
            return (item - date(1970, 1, 1)).days * _DAY_MS
        if isinstance(item, str):
            if item.lstrip("-").isdigit():
                return int(item)
            try:
                return parse_iso_ms(item)
            except DataError as exc:
                raise PartitionError(str(exc)) from exc
        raise PartitionError(f"Error extracting timestamp from record field: {self.field}")


_EXTRACTORS = {
    "Wallclock": "Wallclock",
    "Record": "Record",
    "RecordField": "RecordField",
    _PKG + "TimeBasedPartitioner$WallclockTimestampExtractor": "Wallclock",
    _PKG + "TimeBasedPartitioner$RecordTimestampExtractor": "Record",
    _PKG + "TimeBasedPartitioner$RecordFieldTimestampExtractor": "RecordField",
}


def timestamp_extractor(settings: Mapping[str, Any]) -> TimestampExtractor:
    name = settings[c.TIMESTAMP_EXTRACTOR_CONFIG]
    kind = _EXTRACTORS.get(name)
    if kind == "Wallclock":
        return WallclockTimestampExtractor()
    if kind == "Record":
        return RecordTimestampExtractor()
    if kind == "RecordField":
        return RecordFieldTimestampExtractor(settings[c.TIMESTAMP_FIELD_CONFIG])
    raise ConfigError(
        f"Invalid value {name} for configuration {c.TIMESTAMP_EXTRACTOR_CONFIG}: "
        "must be one of Record, RecordField, Wallclock"
    )


class TimeBasedPartitioner(Partitioner):
    """The record's timestamp floored to ``partition.duration.ms`` in ``timezone`` and
    printed with ``path.format`` (a Joda pattern)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        duration, path_format = self._duration_and_format(settings)
        if duration < 0:
            raise ConfigError(
                f"Invalid value {duration} for configuration {c.PARTITION_DURATION_MS_CONFIG}: "
                "Partition duration needs to be a positive."
            )
        if not path_format.strip() or path_format == self.delim:
            raise ConfigError(
                f"Invalid value {path_format} for configuration {c.PATH_FORMAT_CONFIG}: "
                "Path format cannot be empty."
            )
        if self.delim and path_format.endswith(self.delim):
            path_format = path_format[: -len(self.delim)]
        if not settings[c.LOCALE_CONFIG].strip():
            raise ConfigError(
                f"Invalid value  for configuration {c.LOCALE_CONFIG}: Locale cannot be empty."
            )
        zone_name = settings[c.TIMEZONE_CONFIG].strip()
        if not zone_name:
            raise ConfigError(
                f"Invalid value  for configuration {c.TIMEZONE_CONFIG}: Timezone cannot be empty."
            )
        try:
            self.zone = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(
                f"Invalid value {zone_name} for configuration {c.TIMEZONE_CONFIG}: unknown timezone"
            ) from exc
        self.duration_ms = duration
        self.format = JodaFormat(path_format, self.zone)
        self.timestamp_extractor = timestamp_extractor(settings)

    def _duration_and_format(self, settings: Mapping[str, Any]) -> tuple[int, str]:
        return settings[c.PARTITION_DURATION_MS_CONFIG], settings[c.PATH_FORMAT_CONFIG]

    def bucket_ms(self, timestamp_ms: int) -> int:
        """``timestamp_ms`` floored to the partition duration in local time (Joda's
        ``convertUTCToLocal``/``convertLocalToUTC``)."""
        offset = _offset_ms(self.zone, timestamp_ms)
        local = timestamp_ms + offset
        floored = local - local % self.duration_ms if self.duration_ms else local
        return floored - _offset_ms(self.zone, floored - offset)

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        assert self.timestamp_extractor is not None
        timestamp = self.timestamp_extractor.extract(record, now_ms)
        if timestamp is None:
            raise PartitionError(
                "Unable to determine timestamp using timestamp.extractor "
                f"{type(self.timestamp_extractor).__name__} for record {_where(record)}"
            )
        return self.format.format_ms(self.bucket_ms(timestamp))


def _offset_ms(zone: ZoneInfo, epoch_ms: int) -> int:
    offset = datetime.fromtimestamp(epoch_ms / 1000.0, zone).utcoffset()
    return int(offset.total_seconds() * 1000) if offset is not None else 0


class DailyPartitioner(TimeBasedPartitioner):
    """``'year'=YYYY/'month'=MM/'day'=dd``, one day per partition."""

    def _duration_and_format(self, settings: Mapping[str, Any]) -> tuple[int, str]:
        d = settings[c.DIRECTORY_DELIM_CONFIG]
        return _DAY_MS, f"'year'=YYYY{d}'month'=MM{d}'day'=dd"


class HourlyPartitioner(TimeBasedPartitioner):
    """``'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH``, one hour per partition."""

    def _duration_and_format(self, settings: Mapping[str, Any]) -> tuple[int, str]:
        d = settings[c.DIRECTORY_DELIM_CONFIG]
        return _HOUR_MS, f"'year'=YYYY{d}'month'=MM{d}'day'=dd{d}'hour'=HH"


_PARTITIONERS: dict[str, type[Partitioner]] = {
    cls.__name__: cls
    for cls in (
        DefaultPartitioner,
        FieldPartitioner,
        TimeBasedPartitioner,
        DailyPartitioner,
        HourlyPartitioner,
    )
}


def partitioner_for(settings: Mapping[str, Any]) -> Partitioner:
    """The partitioner ``partition.class`` names (Confluent FQCN or simple name)."""
    name: str = settings[c.PARTITIONER_CLASS_CONFIG]
    simple = name[len(_PKG) :] if name.startswith(_PKG) else name
    cls = _PARTITIONERS.get(simple)
    if cls is None:
        raise ConfigError(
            f"Invalid value {name} for configuration {c.PARTITIONER_CLASS_CONFIG}: must be one "
            f"of {', '.join(_PKG + n for n in _PARTITIONERS)}"
        )
    return cls(settings)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


__all__ = [
    "DailyPartitioner",
    "DefaultPartitioner",
    "FieldPartitioner",
    "HourlyPartitioner",
    "PartitionError",
    "Partitioner",
    "TimeBasedPartitioner",
    "TimestampExtractor",
    "partitioner_for",
]
