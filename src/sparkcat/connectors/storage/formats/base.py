"""The seam between the writer and a file format, and Connect values as plain Python."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from sparkcat.api import Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord

_EPOCH_DATE = dt.date(1970, 1, 1)


class Format(ABC):
    """Encodes the records of one file into the bytes of one object."""

    extension: str

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = settings

    def check(self, record: SinkRecord) -> None:
        """Raise :class:`DataError` if ``record`` cannot be written in this format.
        Default: every record can."""
        return None

    @abstractmethod
    def encode(self, records: list[SinkRecord]) -> bytes:
        """The whole file for ``records`` (all with the same value schema)."""


def needs_schema(record: SinkRecord, fmt: str) -> Schema:
    schema = record.value_schema
    if schema is None:
        raise DataError(
            f"{fmt} needs a value schema: record {record.topic}-{record.kafka_partition}@"
            f"{record.kafka_offset} has none (use a converter with schemas, e.g. JsonConverter "
            "with schemas.enable=true)"
        )
    return schema


def to_json_value(value: Any) -> Any:
    """A Connect value as JsonConverter writes it without schemas (bytes and decimals as
    base64, Timestamp as epoch ms, Date as epoch days, Time as ms of the day)."""
    if isinstance(value, Struct):
        return {
            f.name: to_json_value(v) for f, v in zip(value.schema.fields, value.values, strict=True)
        }
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    if isinstance(value, decimal.Decimal):
        unscaled = int(value.scaleb(-value.as_tuple().exponent))  # type: ignore[operator]
        size = max(1, (unscaled.bit_length() + 8) // 8)
        return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode("ascii")
    return value


def to_native(schema: Schema | None, value: Any) -> Any:
    """A Connect value as nested dicts/lists (logical values stay Python objects)."""
    if isinstance(value, Struct):
        return {
            f.name: to_native(f.schema, v)
            for f, v in zip(value.schema.fields, value.values, strict=True)
        }
    if schema is not None and schema.type is Type.ARRAY and value is not None:
        return [to_native(schema.value_schema, v) for v in value]
    if schema is not None and schema.type is Type.MAP and value is not None:
        return {k: to_native(schema.value_schema, v) for k, v in value.items()}
    return value


__all__ = ["Format", "needs_schema", "to_json_value", "to_native"]
