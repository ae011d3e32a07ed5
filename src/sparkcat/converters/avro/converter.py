"""AvroConverter: Connect data <-> Avro in Confluent's wire format, schemas in a Schema Registry.

Every message is magic byte 0, the writer schema's registry id (4 bytes, big-endian) and the
Avro binary encoding of the value. Writing maps the Connect schema to an Avro schema exactly
as Confluent's ``AvroData`` does (:mod:`.avro_data`), registers it (or looks it up, or takes
the subject's latest version) under the subject the naming strategy gives, and encodes with
fastavro. Reading fetches the writer schema by id, maps it back to a Connect schema (with the
subject version as the schema version when it has no ``connect.version``) and decodes with
fastavro.

Per-record work is a cache hit plus fastavro: per Connect schema (and topic) the converter
keeps the 5-byte header, the fastavro-parsed schema and the value converter; per schema id
the parsed schema, the Connect schema and the value converter. The previous record's entry is
remembered by identity so a stream of one schema costs no hashing.
"""

from __future__ import annotations

import io
import json
from typing import Any, NamedTuple

import fastavro

from sparkcat.api.data import Schema, SchemaAndValue, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters.avro._anything import ANYTHING_SCHEMA, is_anything, unwrap, wrap
from sparkcat.converters.avro._compat import incompatibilities
from sparkcat.converters.avro._values import Convert, to_avro, to_connect
from sparkcat.converters.avro.avro_data import (
    from_connect_schema,
    schema_text,
    split_name,
    to_connect_schema,
)
from sparkcat.converters.avro.config import CONFIG_DEF, AvroConverterConfig
from sparkcat.converters.schema_registry.converter import SchemaRegistryConverter
from sparkcat.converters.schema_registry.wire import HEADER_SIZE, header, schema_id_of

_NULL = SchemaAndValue.NULL
_new_sv = tuple.__new__


class _Writer(NamedTuple):
    header: bytes
    parsed: Any  # fastavro-parsed writer schema (logical types stripped)
    convert: Convert | None


class _Reader(NamedTuple):
    schema: Schema | None
    parsed: Any
    convert: Convert | None


def strip_logical_types(avro: Any) -> Any:
    """``avro`` without ``logicalType`` annotations: fastavro then reads and writes the
    underlying int/long/bytes, and the Connect side does the logical conversions itself."""
    if isinstance(avro, list):
        return [strip_logical_types(member) for member in avro]
    if isinstance(avro, dict):
        return {
            key: strip_logical_types(value) for key, value in avro.items() if key != "logicalType"
        }
    return avro


def parse_for_fastavro(avro: Any) -> Any:
    return fastavro.parse_schema(strip_logical_types(avro), _write_hint=False)


def record_name(avro: Any) -> str | None:
    """The full name of a top-level record schema (for the record name strategies)."""
    if isinstance(avro, list) and len(avro) == 2 and "null" in avro:
        avro = avro[1] if avro[0] == "null" else avro[0]
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return None
    name = str(avro["name"])
    namespace = avro.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _connect_record_name(schema: Schema) -> str | None:
    if schema.type is not Type.STRUCT:
        return None
    if schema.name is None:
        return "io.confluent.connect.avro.ConnectDefault"
    namespace, name = split_name(schema.name)
    return schema.name if namespace else name


def _latest_can_read(latest: str, own: str) -> list[str]:
    return incompatibilities(json.loads(latest), json.loads(own))


class AvroConverter(SchemaRegistryConverter[AvroConverterConfig, _Writer, _Reader]):
    """``io.confluent.connect.avro.AvroConverter``."""

    schema_type = "AVRO"
    config_def = CONFIG_DEF
    config_class = AvroConverterConfig

    def _configured(self, config: AvroConverterConfig) -> None:
        self._buffer = io.BytesIO()

    # -- Connect -> bytes ------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize ``value``; ``None`` for a null value of an optional (or no) schema.
        Schemaless values (schema ``None``) are written in Confluent's ``Anything`` record."""
        if value is None:
            if schema is not None and not schema.optional:
                raise DataError(
                    f"Failed to serialize Avro data from topic {topic}: Found null value for "
                    "non-optional schema"
                )
            return None
        last_topic, last_schema, writer = self._last_write
        if schema is not last_schema or topic != last_topic or writer is None:
            writer = self._writer_for(topic, schema)
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        buffer.write(writer.header)
        try:
            datum = value if writer.convert is None else writer.convert(value)
            fastavro.schemaless_writer(buffer, writer.parsed, datum)
        except DataError as e:
            raise DataError(f"Failed to serialize Avro data from topic {topic}: {e}") from e
        except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as e:
            raise DataError(
                f"Failed to serialize Avro data from topic {topic}: {type(e).__name__}: {e}"
            ) from e
        return buffer.getvalue()

    def _new_writer(self, topic: str, schema: Schema | None) -> _Writer:
        config = self._config
        assert config is not None
        try:
            if schema is None:
                avro: Any = ANYTHING_SCHEMA
            else:
                avro = from_connect_schema(
                    schema, config.connect_meta_data, config.enhanced_schema_support
                )
            text = schema_text(avro)
            record = (
                "io.confluent.connect.avro.Anything"
                if schema is None
                else (_connect_record_name(schema))
            )
            schema_id, writer_text = self._serde.writer_schema(
                topic, record, text, _latest_can_read
            )
            writer_avro = avro if writer_text == text else json.loads(writer_text)
            parsed = parse_for_fastavro(writer_avro)
        except DataError as e:
            raise DataError(f"Failed to serialize Avro data from topic {topic}: {e}") from e
        except (fastavro.schema.SchemaParseException, ValueError, TypeError) as e:
            raise DataError(
                f"Failed to serialize Avro data from topic {topic}: invalid Avro schema: {e}"
            ) from e
        return _Writer(header(schema_id), parsed, wrap if schema is None else to_avro(schema))

    def avro_schema(self, schema: Schema) -> Any:
        """The Avro schema (JSON value) this converter writes for ``schema``."""
        config = self._config
        assert config is not None
        return from_connect_schema(schema, config.connect_meta_data, config.enhanced_schema_support)

    # -- bytes -> Connect ------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize ``data``; :class:`DataError` naming ``topic`` for malformed input."""
        if data is None:
            return _NULL
        try:
            schema_id = schema_id_of(data)
            last_topic, last_id, reader = self._last_read
            if schema_id != last_id or topic != last_topic or reader is None:
                reader = self._reader_for(topic, schema_id)
            stream = io.BytesIO(data)
            stream.seek(HEADER_SIZE)
            datum = fastavro.schemaless_reader(
                stream, reader.parsed, None, return_named_type=True, return_named_type_override=True
            )
            if stream.tell() != len(data):
                raise DataError("Trailing bytes after the Avro payload")
            value = datum if reader.convert is None or datum is None else reader.convert(datum)
        except DataError as e:
            raise DataError(f"Failed to deserialize data for topic {topic} to Avro: {e}") from e
        except (EOFError, ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError) as e:
            raise DataError(
                f"Failed to deserialize data for topic {topic} to Avro: {type(e).__name__}: {e}"
            ) from e
        return _new_sv(SchemaAndValue, (reader.schema, value))

    def _new_reader(self, topic: str, schema_id: int) -> _Reader:
        config = self._config
        assert config is not None
        text = self._serde.schema_by_id(schema_id)
        avro = json.loads(text)
        if is_anything(avro):  # schemaless data, as Confluent writes it
            return _Reader(None, parse_for_fastavro(avro), unwrap)
        version = self._serde.version_of(topic, record_name(avro), schema_id, text)
        schema = to_connect_schema(
            avro, version, config.connect_meta_data, config.enhanced_schema_support
        )
        return _Reader(schema, parse_for_fastavro(avro), to_connect(schema))
