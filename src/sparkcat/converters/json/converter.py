"""JsonConverter: Kafka Connect's JSON format, byte for byte.

With ``schemas.enable=true`` every message is the envelope ``{"schema":…,"payload":…}``; with
``false`` only the payload. Output bytes equal Kafka's (Jackson's key order, compact
separators, Java number text). Per-record work is kept to a few dict lookups: encoders and
decoders are compiled once per schema and cached (``schemas.cache.size`` entries in each
direction), and the schema of the previous message is remembered so that a stream of messages
with one schema skips parsing the envelope's schema entirely.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import Schema, SchemaAndValue
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters._config import with_converter_type
from sparkcat.converters.json._decode import Decoder, DecoderFactory, loads, loads_exact
from sparkcat.converters.json._encode import Encoder, EncoderFactory, encode_schemaless
from sparkcat.converters.json.config import CONFIG_DEF, DecimalFormat, JsonConverterConfig
from sparkcat.converters.json.schema import (
    LRUCache,
    as_connect_schema,
    as_json_schema,
    contains_decimal,
)

ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
    "contain additional fields. If you are trying to deserialize plain JSON data, set "
    "schemas.enable=false in your converter configuration."
)
_NULL_ENVELOPE_PREFIX = b'{"schema":null,"payload":'
_DECIMAL_NAME = b"org.apache.kafka.connect.data.Decimal"
_DUMPS_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _nothing(value: Any) -> Any:  # pragma: no cover - placeholder, never called
    raise AssertionError


def _orjson_default(value: Any) -> Any:
    # Only bytes have a direct JSON form; anything else goes to the exact (raising) encoder.
    if isinstance(value, bytes | bytearray | memoryview):
        return encode_schemaless(value)
    raise TypeError


def _key_default(value: Any) -> Any:
    # Cache keys of schemas parsed with exact decimals: keep the number's text.
    return orjson.Fragment(str(value).encode())


class JsonConverter(Converter, HeaderConverter):
    """``org.apache.kafka.connect.json.JsonConverter``; also a HeaderConverter."""

    def __init__(self) -> None:
        self._config: JsonConverterConfig | None = None
        self._configure(with_converter_type({}, False))

    # -- configuration -----------------------------------------------------------------------
    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Converter: ``configure(configs, is_key)``; HeaderConverter: ``configure(configs)``."""
        self._configure(with_converter_type(configs, is_key))

    def _configure(self, configs: Mapping[str, Any]) -> None:
        config = JsonConverterConfig(configs)
        self._config = config
        self._schemas_enabled = config.schemas_enabled
        numeric = config.decimal_format is DecimalFormat.NUMERIC
        self._encoders = EncoderFactory(numeric, config.replace_null_with_default)
        self._decoders = DecoderFactory(config.replace_null_with_default)
        size = config.schema_cache_size
        self._from_connect_cache: LRUCache[Schema, tuple[Schema, bytes, Encoder, Encoder]] = (
            LRUCache(size)
        )
        self._to_connect_cache: LRUCache[bytes, tuple[Schema, Decoder, Decoder, bool]] = LRUCache(
            size
        )
        # Never a real schema: "last encoding" starts out as a miss.
        self._last_encoding: tuple[Any, bytes, Encoder, Encoder] = (
            object(),
            b"",
            _nothing,
            _nothing,
        )
        self._last_prefix: bytes | None = None
        self._last_decoding: tuple[Schema, Decoder, Decoder] | None = None

    def close(self) -> None:
        """Nothing to release."""

    # -- Connect -> bytes ------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize ``value``; ``None`` (a tombstone) when both schema and value are None."""
        try:
            if schema is None:
                if value is None:
                    return None
                payload = _dumps_schemaless(value)
                if self._schemas_enabled:
                    return _NULL_ENVELOPE_PREFIX + payload + b"}"
                return payload
            last = self._last_encoding
            if last[0] is not schema:
                last = self._encoding_for(schema)
            # last = (schema, envelope prefix, encoder of non-null values, encoder of any value)
            payload = orjson.dumps(last[2](value) if value is not None else last[3](value))
            return last[1] + payload + b"}" if self._schemas_enabled else payload
        except DataError as e:
            raise DataError(f"{e} (topic '{topic}')") from e
        except TypeError as e:  # orjson met a value no encoder vetted
            raise DataError(f"Cannot convert a value of topic '{topic}' to JSON: {e}") from e

    def _encoding_for(self, schema: Schema) -> tuple[Schema, bytes, Encoder, Encoder]:
        entry = self._from_connect_cache.get(schema)
        if entry is None:
            json_schema = self.as_json_schema(schema)
            prefix = b'{"schema":' + orjson.dumps(json_schema) + b',"payload":'
            encoders = self._encoders
            encode = encoders.type_encoder(schema)
            entry = (schema, prefix, encode, encoders.value_encoder(schema, encode))
            self._from_connect_cache.put(schema, entry)
        self._last_encoding = entry
        return entry

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The envelope form of ``schema`` (``None`` for no schema)."""
        if schema is None:
            return None
        return as_json_schema(schema, self._encoders.default_to_json)

    # -- bytes -> Connect ------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize ``data``; :class:`DataError` naming ``topic`` if it is not valid."""
        if data is None:
            return SchemaAndValue(None, None)
        try:
            if not self._schemas_enabled:
                return SchemaAndValue(None, loads(data) if data else None)
            prefix = self._last_prefix
            if prefix is not None and data.startswith(prefix) and data[-1] == 0x7D:  # "}"
                schema, decode, decode_any = self._last_decoding  # type: ignore[misc]
                try:
                    payload = orjson.loads(data[len(prefix) : -1])
                except orjson.JSONDecodeError:
                    pass  # not just a payload after all (e.g. extra fields): parse it all
                else:
                    value = decode(payload) if payload is not None else decode_any(payload)
                    return _new_sv(SchemaAndValue, (schema, value))
            return self._decode_envelope(data)
        except DataError as e:
            raise DataError(f"{e} (topic '{topic}')") from e

    def _decode_envelope(self, data: bytes) -> SchemaAndValue:
        exact = _DECIMAL_NAME in data
        envelope = loads_exact(data) if exact else loads(data)
        if (
            envelope.__class__ is not dict
            or len(envelope) != 2
            or "schema" not in envelope
            or "payload" not in envelope
        ):
            raise DataError(ENVELOPE_ERROR)
        json_schema = envelope["schema"]
        if json_schema is None:
            # Without a schema fractions are doubles, as in Kafka, even if parsed exactly.
            payload = loads(data)["payload"] if exact else envelope["payload"]
            return SchemaAndValue(None, payload)
        key = orjson.dumps(json_schema, default=_key_default)
        entry = self._to_connect_cache.get(key)
        if entry is None:
            schema = self.as_connect_schema(json_schema)
            assert schema is not None
            decoders = self._decoders
            decode = decoders.type_decoder(schema)
            entry = (
                schema,
                decode,
                decoders.value_decoder(schema, decode),
                contains_decimal(schema),
            )
            self._to_connect_cache.put(key, entry)
        schema, decode, decode_any, needs_exact = entry
        if needs_exact and not exact:
            envelope = loads_exact(data)
        elif not needs_exact and not exact:
            self._last_prefix = b'{"schema":' + key + b',"payload":'
            self._last_decoding = (schema, decode, decode_any)
        return SchemaAndValue(schema, decode_any(envelope["payload"]))

    def as_connect_schema(self, json_schema: Any) -> Schema | None:
        """The Connect schema of an envelope schema object (``None`` for JSON null)."""
        if json_schema is None:
            return None
        return as_connect_schema(json_schema, self._default_to_connect)

    def _default_to_connect(self, schema: Schema, value: Any) -> Any:
        return self._decoders.value_decoder(schema)(value)

    # -- HeaderConverter -------------------------------------------------------------------
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


def _dumps_schemaless(value: Any) -> bytes:
    try:
        payload = orjson.dumps(value, default=_orjson_default, option=_DUMPS_OPTIONS)
    except TypeError:
        return orjson.dumps(encode_schemaless(value))
    if _has_java_only_float(value):
        return orjson.dumps(encode_schemaless(value))
    return payload


def _has_java_only_float(value: Any) -> bool:
    """Whether ``value`` holds a float that Java prints unlike orjson (``1.0E7``, ``NaN``...).

    Only reached after orjson succeeded, so every map key is a string and needs no check.
    """
    cls = value.__class__
    if cls is float:
        return not (1e-3 <= value < 1e7 or -1e7 < value <= -1e-3 or value == 0.0)
    if cls is dict:
        items = value.values()
    elif cls is list or cls is tuple:
        items = value
    else:
        return False
    for item in items:
        kind = item.__class__
        if kind is float:
            if not (1e-3 <= item < 1e7 or -1e7 < item <= -1e-3 or item == 0.0):
                return True
        elif (kind is dict or kind is list or kind is tuple) and _has_java_only_float(item):
            return True
    return False


# SchemaAndValue is a NamedTuple: tuple.__new__ skips its Python-level constructor.
_new_sv = tuple.__new__
