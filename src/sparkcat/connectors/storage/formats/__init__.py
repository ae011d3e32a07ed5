"""Record formats of the storage sinks, by Confluent's ``format.class`` names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.errors import ConfigError
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats.avro import AvroFormat
from sparkcat.connectors.storage.formats.base import Format
from sparkcat.connectors.storage.formats.bytearray import ByteArrayFormat
from sparkcat.connectors.storage.formats.json import JsonFormat
from sparkcat.connectors.storage.formats.parquet import ParquetFormat

_FORMATS: dict[str, type[Format]] = {
    c.PARQUET_FORMAT: ParquetFormat,
    c.JSON_FORMAT: JsonFormat,
    c.AVRO_FORMAT: AvroFormat,
    c.BYTEARRAY_FORMAT: ByteArrayFormat,
}


def format_for(settings: Mapping[str, Any]) -> Format:
    name = settings[c.FORMAT_CLASS_CONFIG]
    cls = _FORMATS.get(name)
    if cls is None:
        raise ConfigError(f"Invalid value {name} for configuration {c.FORMAT_CLASS_CONFIG}")
    return cls(settings)


__all__ = ["AvroFormat", "ByteArrayFormat", "Format", "JsonFormat", "ParquetFormat", "format_for"]
