"""Confluent's ``io.confluent.connect.json.JsonSchemaConverter``."""

from sparkcat.converters.json_schema.converter import JsonSchemaConverter

__all__ = ["JsonSchemaConverter"]
