"""Kafka Connect's JSON converter (``org.apache.kafka.connect.json.JsonConverter``)."""

from sparkcat.converters.json.config import DecimalFormat, JsonConverterConfig
from sparkcat.converters.json.converter import JsonConverter

__all__ = ["DecimalFormat", "JsonConverter", "JsonConverterConfig"]
