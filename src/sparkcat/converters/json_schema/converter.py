"""JsonSchemaConverter: Connect data <-> JSON in Confluent's wire format, JSON Schemas in a
Schema Registry.

Every message is magic byte 0, the schema's registry id (4 bytes, big-endian) and the value's
compact JSON (Jackson's text: Java number formats, base64 bytes). Writing maps the Connect
schema to a JSON Schema document (:mod:`.json_schema_data`), registers it (or looks it up, or
takes the latest version) under the subject the naming strategy gives, and writes the value.
Reading fetches the schema by id, maps it to a Connect schema and converts the parsed JSON.
Values are not validated against the schema (Confluent's ``json.fail.invalid.schema=false``).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import orjson

from sparkcat.api.data import Schema, SchemaAndValue
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters.json_schema._values import (
    OMIT,
    Convert,
    contains_decimal,
    from_json,
    to_json,
)
from sparkcat.converters.json_schema.config import CONFIG_DEF, JsonSchemaConverterConfig
from sparkcat.converters.json_schema.json_schema_data import JsonSchemaMapping
from sparkcat.converters.schema_registry.converter import SchemaRegistryConverter
from sparkcat.converters.schema_registry.wire import HEADER_SIZE, header, schema_id_of

_NULL = SchemaAndValue.NULL
# Confluent's JsonSchemaConverter's message prefixes
_TO_BYTES = "Converting Kafka Connect data to byte[] failed due to serialization error"
_TO_CONNECT = "Converting byte[] to Kafka Connect data failed due to serialization error"
_new_sv = tuple.__new__


class _Writer(NamedTuple):
    header: bytes
    convert: Convert


class _Reader(NamedTuple):
    schema: Schema
    convert: Convert
    exact: bool  # parse numbers exactly (the schema holds decimals)


def schema_text(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def _title(document: Any) -> str | None:
    return document.get("title") if isinstance(document, dict) else None


class JsonSchemaConverter(SchemaRegistryConverter[JsonSchemaConverterConfig, _Writer, _Reader]):
    """``io.confluent.connect.json.JsonSchemaConverter``."""

    schema_type = "JSON"
    config_def = CONFIG_DEF
    config_class = JsonSchemaConverterConfig

    def _configured(self, config: JsonSchemaConverterConfig) -> None:
        self._mapping = JsonSchemaMapping(
            config.decimal_numeric,
            config.allow_additional_properties,
            config.optional_for_nonrequired,
        )

    def json_schema(self, schema: Schema) -> dict[str, Any]:
        """The JSON Schema document this converter registers for ``schema``."""
        return self._mapping.from_connect_schema(schema)

    # -- Connect -> bytes ------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is None:
            if value is None:
                return None
            raise DataError(
                f"{_TO_BYTES} of topic {topic}: sparkcat's "
                "JsonSchemaConverter needs a schema (schemaless values are not supported)"
            )
        try:
            writer = self._writer_for(topic, schema)
            payload = writer.convert(value)
            if payload is OMIT or payload is None:
                return None
            return writer.header + orjson.dumps(payload)
        except DataError as e:
            raise DataError(f"{_TO_BYTES} of topic {topic}: {e}") from e
        except (TypeError, ValueError, AttributeError) as e:
            raise DataError(f"{_TO_BYTES} of topic {topic}: {type(e).__name__}: {e}") from e

    def _new_writer(self, topic: str, schema: Schema) -> _Writer:
        document = self._mapping.from_connect_schema(schema)
        schema_id, _ = self._serde.writer_schema(topic, _title(document), schema_text(document))
        return _Writer(header(schema_id), to_json(self._mapping, schema))

    # -- bytes -> Connect ------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _NULL
        try:
            reader = self._reader_for(topic, schema_id_of(data))
            body = data[HEADER_SIZE:]
            parsed = json.loads(body, parse_float=_exact) if reader.exact else orjson.loads(body)
            return _new_sv(SchemaAndValue, (reader.schema, reader.convert(parsed)))
        except DataError as e:
            raise DataError(f"{_TO_CONNECT} of topic {topic}: {e}") from e
        except (ValueError, TypeError, UnicodeDecodeError) as e:
            raise DataError(f"{_TO_CONNECT} of topic {topic}: {type(e).__name__}: {e}") from e

    def _new_reader(self, topic: str, schema_id: int) -> _Reader:
        text = self._serde.schema_by_id(schema_id)
        document = json.loads(text)
        version = self._serde.version_of(topic, _title(document), schema_id, text)
        schema = self._mapping.to_connect_schema(document, version)
        return _Reader(schema, from_json(self._mapping, schema), contains_decimal(schema))


def _exact(text: str) -> Any:
    import decimal

    return decimal.Decimal(text)
