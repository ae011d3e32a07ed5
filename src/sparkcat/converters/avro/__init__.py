"""Confluent's ``io.confluent.connect.avro.AvroConverter``."""

from sparkcat.converters.avro.converter import AvroConverter

__all__ = ["AvroConverter"]
