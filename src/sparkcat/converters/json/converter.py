"""JsonConverter: Kafka Connect's JSON format, byte for byte.

With ``schemas.enable=true`` every message is the envelope ``{"schema":…,"payload":…}``; with
``false`` only the payload. Output bytes equal Kafka's (Jackson's key order, compact
separators, Java number text). Per-record work is one generated call: message encoders and
decoders are compiled once per schema (for STRUCT schemas, straight-line code per field) and
cached (``schemas.cache.size`` entries in each direction). The encoder splices the envelope's
constant schema bytes around ``orjson.dumps`` of the payload; the schema of the previous
record is remembered by identity, and the envelope prefix of the previous message is compared
as bytes, so a stream with one schema never re-renders or re-parses the schema.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from operator import methodcaller
from typing import Any

import orjson

from sparkcat.api.batch import ConnectDataBatch
from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import Date, Decimal, Schema, SchemaAndValue, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters._config import with_converter_type
from sparkcat.converters.json._decode import (
    Decoder,
    DecoderFactory,
    loads,
    loads_exact,
    loads_payload_exact,
)
from sparkcat.converters.json._encode import (
    EncoderFactory,
    encode_schemaless,
    encode_string_column,
)
from sparkcat.converters.json._struct_codegen import (
    struct_message_decoder,
    struct_message_encoder,
)
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


MessageEncoder = Callable[[Any], bytes]
MessageDecoder = Callable[[bytes], SchemaAndValue | None]
_LOGICAL_NAMES = frozenset(
    (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)
)
_NULL = SchemaAndValue.NULL
_ONLY_BYTES = {bytes}
# The first attempt of _dumps_schemaless without its fallbacks, as one C callable.
_dumps_plain = functools.partial(orjson.dumps, option=_DUMPS_OPTIONS)


def _no_message(data: bytes) -> SchemaAndValue | None:
    return None  # no envelope seen yet: every message takes the full parse


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

    null_pass_through = True  # null <-> null for every topic, with schemas or without

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
        # schema -> message encoder (value -> the message's bytes)
        self._from_connect_cache: LRUCache[Schema, MessageEncoder] = LRUCache(size)
        # compact envelope schema JSON -> (schema, decoder of any payload, needs exact numbers,
        # message decoder)
        self._to_connect_cache: LRUCache[bytes, tuple[Schema, Decoder, bool, MessageDecoder]] = (
            LRUCache(size)
        )
        # Message encoders by schema identity: records of a few tables interleaved (a CDC
        # stream) switch schema at every record, and an identity lookup costs a fraction of
        # the LRU cache's (which hashes the schema and reorders its entries). Entries hold
        # their schema, so an id is never reused while cached; bounded like the LRU cache.
        self._by_identity: dict[int, tuple[Schema, MessageEncoder]] = {}
        self._identity_max = max(size, 1)
        # The schema of the previous record and its message encoder: a stream of records of
        # one schema object costs one identity check before the generated code runs.
        self._last_schema: Any = object()  # never a real schema: the first record misses
        self._last_encode: MessageEncoder = _no_message  # type: ignore[assignment]
        # The message decoder of the previous envelope (returns None for other messages).
        self._last_decode: MessageDecoder = _no_message

    def close(self) -> None:
        """Nothing to release."""

    # -- Connect -> bytes ------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize ``value``; ``None`` (a tombstone) when both schema and value are None."""
        try:
            if schema is self._last_schema:
                return self._last_encode(value)
            if schema is None:
                if value is None:
                    return None
                payload = _dumps_schemaless(value)
                if self._schemas_enabled:
                    return _NULL_ENVELOPE_PREFIX + payload + b"}"
                return payload
            return self._encoder_for(schema)(value)
        except DataError as e:
            raise DataError(f"{e} (topic '{topic}')") from e
        except TypeError as e:  # orjson met a value no encoder vetted
            raise DataError(f"Cannot convert a value of topic '{topic}' to JSON: {e}") from e

    def _encoder_for(self, schema: Schema) -> MessageEncoder:
        known = self._by_identity.get(id(schema))
        if known is not None and known[0] is schema:
            encode_message = known[1]
        else:
            cached = self._from_connect_cache.get(schema)
            if cached is None:
                cached = self._message_encoder(schema)
                self._from_connect_cache.put(schema, cached)
            encode_message = cached
            if len(self._by_identity) >= self._identity_max:
                self._by_identity.clear()
            self._by_identity[id(schema)] = (schema, encode_message)
        self._last_schema = schema
        self._last_encode = encode_message
        return encode_message

    def _message_encoder(self, schema: Schema) -> MessageEncoder:
        encoders = self._encoders
        encode_any = encoders.value_encoder(schema, encoders.type_encoder(schema))
        prefix = None
        if self._schemas_enabled:
            prefix = b'{"schema":' + orjson.dumps(self.as_json_schema(schema)) + b',"payload":'
        if schema.type is Type.STRUCT and schema.name not in _LOGICAL_NAMES:
            return struct_message_encoder(encoders, schema, prefix, encode_any)
        dumps = orjson.dumps
        if prefix is None:
            return lambda value: dumps(encode_any(value))
        envelope = prefix.replace(b"%", b"%%") + b"%b}"
        return lambda value: envelope % dumps(encode_any(value))

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
            return _NULL
        try:
            if self._schemas_enabled:
                result = self._last_decode(data)
                if result is not None:
                    return result
                return self._decode_envelope(data)
            if not data:
                return _NULL
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                value = loads(data)  # Jackson's leniencies, or Kafka's error
            return _new_sv(SchemaAndValue, (None, value))
        except DataError as e:
            raise DataError(f"{e} (topic '{topic}')") from e

    # -- the columnar path ---------------------------------------------------------------------
    def from_connect_data_batch(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        """A column of strings that need no escaping: one join/encode/split
        (:func:`encode_string_column`); schemaless values without envelope: orjson per value
        in one ``map``; with a schema: the schema's message encoder mapped over the column;
        anything else (nulls,
        floats Java prints differently, a value that fails) per record."""
        if schema is not None:
            if schema.type is Type.STRING:
                encoded = self._string_column(schema, values)
                if encoded is not None:
                    return encoded  # type: ignore[return-value]
            try:
                return list(map(self._encoder_for(schema), values))
            except Exception:
                pass
        elif schema is None and not self._schemas_enabled and None not in values:
            encoded = encode_string_column(values)  # a column of str: no per-value dumps
            if encoded is not None:
                return encoded  # type: ignore[return-value]
            try:
                payloads = list(map(_dumps_plain, values))
            except TypeError:
                pass  # bytes, Decimal, ...: the per-record method knows their JSON form
            else:
                if not any(map(_has_java_only_float, values)):
                    return payloads  # type: ignore[return-value]
        return super().from_connect_data_batch(topic, schema, values)

    def _string_column(self, schema: Schema, values: list[Any]) -> list[bytes] | None:
        """A STRING schema's column through :func:`encode_string_column` (in its envelope
        when schemas are enabled); ``None`` when a value needs the per-value encoder."""
        if not self._schemas_enabled:
            return encode_string_column(values)
        prefix = b'{"schema":' + orjson.dumps(self.as_json_schema(schema)) + b',"payload":'
        return encode_string_column(values, prefix, b"}")

    def to_connect_data_batch(self, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
        """Schemaless messages: ``orjson.loads`` over the column; envelopes of the schema the
        previous message had: their payloads over the column; anything else (nulls, empty or
        malformed messages, a first or changed schema, a STRUCT's generated decoder) per
        record."""
        if set(map(type, datas)) == _ONLY_BYTES and b"" not in datas:
            if not self._schemas_enabled:
                try:
                    return ConnectDataBatch(None, list(map(orjson.loads, datas)))  # type: ignore[arg-type]
                except orjson.JSONDecodeError:
                    pass
            else:
                # Envelopes of the previous message's schema (their schema JSON is skipped);
                # a value that fails to decode is left to the per-record path to report.
                decode_batch = getattr(self._last_decode, "batch", None)
                try:
                    batch = decode_batch(datas) if decode_batch is not None else None
                except DataError:
                    batch = None
                if batch is not None:
                    return batch  # type: ignore[no-any-return]
        return super().to_connect_data_batch(topic, datas)

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
            entry = self._decoding(key, json_schema)
            self._to_connect_cache.put(key, entry)
        schema, decode_any, needs_exact, decode_message = entry
        if needs_exact and not exact:
            envelope = loads_exact(data)
        if needs_exact or not exact:
            # Messages that start with these same schema bytes skip the schema from now on
            # (with a Decimal in the schema their payload alone is parsed exactly).
            self._last_decode = decode_message
        return SchemaAndValue(schema, decode_any(envelope["payload"]))

    def _decoding(
        self, key: bytes, json_schema: Any
    ) -> tuple[Schema, Decoder, bool, MessageDecoder]:
        schema = self.as_connect_schema(json_schema)
        assert schema is not None
        decoders = self._decoders
        decode_any = decoders.value_decoder(schema, decoders.type_decoder(schema))
        prefix = b'{"schema":' + key + b',"payload":'
        needs_exact = contains_decimal(schema)
        parse = loads_payload_exact if needs_exact else orjson.loads
        if schema.type is Type.STRUCT and schema.name not in _LOGICAL_NAMES:
            decode_message = struct_message_decoder(decoders, schema, prefix, decode_any, parse)
        else:
            decode_message = _message_decoder(schema, prefix, decode_any, parse)
        return schema, decode_any, needs_exact, decode_message

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


def _message_decoder(
    schema: Schema, prefix: bytes, decode_any: Decoder, parse: Callable[[bytes], Any]
) -> MessageDecoder:
    """Decodes messages that are ``prefix`` + payload + ``}`` (``None`` for any other)."""
    skip = len(prefix)
    invalid = orjson.JSONDecodeError

    def decode_message(data: bytes) -> SchemaAndValue | None:
        if not (data.startswith(prefix) and data[-1] == 0x7D):  # "}"
            return None
        try:
            payload = parse(data[skip:-1])
        except invalid:  # not only a payload (extra fields, leading zeros): parse it all
            return None
        return _new_sv(SchemaAndValue, (schema, decode_any(payload)))

    starts, ends = methodcaller("startswith", prefix), methodcaller("endswith", b"}")

    def decode_batch(datas: list[bytes]) -> ConnectDataBatch | None:
        """The same values as ``decode_message`` per message, a step over the whole column
        at a time (``None`` when one message is not this schema's envelope)."""
        if not (all(map(starts, datas)) and all(map(ends, datas))):
            return None
        try:
            payloads = list(map(parse, [data[skip:-1] for data in datas]))
        except invalid:
            return None
        return ConnectDataBatch(schema, list(map(decode_any, payloads)))

    decode_message.batch = decode_batch  # type: ignore[attr-defined]
    return decode_message
