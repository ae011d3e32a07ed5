"""Parsed JSON → Connect data, compiled once per schema, and the JSON parsing itself.

Payloads are parsed with orjson. Two inputs need more: numbers with leading zeros, which
Kafka's Jackson accepts (``ALLOW_LEADING_ZEROS_FOR_NUMBERS``) and orjson does not (the zeros
are stripped and the text re-parsed), and messages whose schema has a Decimal, whose numbers
must keep every digit and their scale (parsed with ``json`` and ``decimal.Decimal``).
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from sparkcat.api._java_format import to_float32
from sparkcat.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sparkcat.api.errors import DataError

Decoder = Callable[[Any], Any]

_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_NON_NUMERIC = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_LEADING_ZEROS = re.compile(r'("(?:[^"\\]|\\.)*")|(?<![\w.+-])(-?)0+(?=\d)')


def node_type(value: Any) -> str:
    """Jackson's ``JsonNodeType`` name of a parsed JSON value (for messages)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int | float | decimal.Decimal):
        return "NUMBER"
    if isinstance(value, str):
        return "STRING"
    return "ARRAY" if isinstance(value, list) else "OBJECT"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


def _strip_leading_zeros(data: bytes) -> bytes | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fixed = _LEADING_ZEROS.sub(lambda m: m.group(1) or m.group(2), text)
    return fixed.encode("utf-8") if fixed != text else None


def loads(data: bytes) -> Any:
    """Parse JSON like Kafka's deserializer (doubles for fractions); DataError if invalid."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        fixed = _strip_leading_zeros(data)
        if fixed is not None:
            try:
                return orjson.loads(fixed)
            except orjson.JSONDecodeError:
                pass
        raise DataError(
            f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}"
        ) from e


def loads_exact(data: bytes) -> Any:
    """Parse JSON keeping every number's exact decimal value (``decimal.Decimal``)."""
    fixed = _strip_leading_zeros(data)
    try:
        text = (fixed if fixed is not None else data).decode("utf-8")
        return json.loads(text, parse_float=decimal.Decimal, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(
            f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}"
        ) from e


def _has_float(value: Any) -> bool:
    cls = value.__class__
    if cls is float:
        return True
    if cls is dict:
        items: Any = value.values()
    elif cls is list:
        items = value
    else:
        return False
    for item in items:
        kind = item.__class__
        if kind is float or ((kind is dict or kind is list) and _has_float(item)):
            return True
    return False


def loads_payload_exact(payload: bytes) -> Any:
    """Parse a payload keeping exact decimals; ``orjson.JSONDecodeError`` if orjson rejects it.

    orjson parses integers, strings and BASE64 decimals exactly, so only a payload that holds
    a fraction or exponent (a float in orjson's result) is parsed again with ``decimal.Decimal``
    for its numbers. Input orjson rejects (leading zeros, huge integers, invalid JSON) raises,
    so that the caller parses the whole message the slow way, with Kafka's error texts.
    """
    value = orjson.loads(payload)
    if _has_float(value):
        return json.loads(payload, parse_float=decimal.Decimal)
    return value


def _invalid(schema: Schema, value: Any) -> DataError:
    return DataError(f"Invalid {node_type(value)} value for {schema.type} field: {value!r}")


class DecoderFactory:
    """Builds decoders for one converter configuration (null replacement)."""

    def __init__(self, replace_null_with_default: bool) -> None:
        self.replace_null = replace_null_with_default

    def value_decoder(self, schema: Schema | None, decode: Decoder | None = None) -> Decoder:
        """A decoder for any JSON value of ``schema`` (``None``: schemaless), null included;
        ``decode``, if given, is the already built :meth:`type_decoder` of ``schema``."""
        if schema is None:
            return _identity
        decode = decode or self.type_decoder(schema)
        on_null = self.null_handler(schema)

        def decode_value(value: Any) -> Any:
            return on_null() if value is None else decode(value)

        return decode_value

    def null_handler(self, schema: Schema) -> Callable[[], Any]:
        """What a JSON null (or a missing struct field) becomes for ``schema``."""
        default = schema.default_value
        if default is not None and self.replace_null:
            return lambda: default
        if schema.optional:
            return lambda: None
        message = f"Invalid null value for required {schema.type} field"

        def fail() -> Any:
            raise DataError(message)

        return fail

    @staticmethod
    def not_object(value: Any) -> Any:
        raise DataError(f"Structs should be encoded as JSON objects, but found {node_type(value)}")

    def type_decoder(self, schema: Schema) -> Decoder:
        """A decoder for non-null JSON values of ``schema``."""
        logical = _logical_decoder(schema)
        if logical is not None:
            return logical
        kind = schema.type
        if kind in _INT_RANGES:
            low, high = _INT_RANGES[kind]

            def decode_int(value: Any) -> Any:
                if value.__class__ is int and low <= value <= high:
                    return value
                raise _invalid(schema, value)

            return decode_int
        if kind is Type.FLOAT64 or kind is Type.FLOAT32:
            return _float_decoder(schema)
        if kind is Type.BOOLEAN or kind is Type.STRING:
            expected = bool if kind is Type.BOOLEAN else str

            def decode_plain(value: Any) -> Any:
                if value.__class__ is expected:
                    return value
                raise _invalid(schema, value)

            return decode_plain
        if kind is Type.BYTES:
            return _bytes_decoder(schema)
        if kind is Type.ARRAY:
            element = self.value_decoder(schema.value_schema)

            def decode_array(value: Any) -> Any:
                if value.__class__ is not list:
                    raise _invalid(schema, value)
                return [element(item) for item in value]

            return decode_array
        if kind is Type.MAP:
            return self._map_decoder(schema)
        from sparkcat.converters.json._struct_codegen import struct_decoder

        return struct_decoder(self, schema)  # type: ignore[no-any-return]

    def _map_decoder(self, schema: Schema) -> Decoder:
        key_schema = schema.key_schema
        keys = self.value_decoder(key_schema)
        values = self.value_decoder(schema.value_schema)
        if key_schema is None or key_schema.type is Type.STRING:

            def decode_object(value: Any) -> Any:
                if value.__class__ is not dict:
                    raise DataError(
                        "Maps with string fields should be encoded as JSON objects, but found "
                        f"{node_type(value)}"
                    )
                return {k: values(v) for k, v in value.items()}

            return decode_object

        def decode_pairs(value: Any) -> Any:
            if value.__class__ is not list:
                raise DataError(
                    "Maps with non-string fields should be encoded as JSON array of tuples, "
                    f"but found {node_type(value)}"
                )
            result = {}
            for entry in value:
                if entry.__class__ is not list:
                    raise DataError(
                        "Found invalid map entry instead of array tuple: " + node_type(entry)
                    )
                if len(entry) != 2:
                    raise DataError(
                        f"Found invalid map entry, expected length 2 but found :{len(entry)}"
                    )
                key = keys(entry[0])
                try:
                    result[key] = values(entry[1])
                except TypeError as e:
                    raise DataError(f"Unsupported map key: {key!r}") from e
            return result

        return decode_pairs


def _identity(value: Any) -> Any:
    return value


def _float_decoder(schema: Schema) -> Decoder:
    single = schema.type is Type.FLOAT32

    def decode_float(value: Any) -> Any:
        if value.__class__ is float:
            result = value
        elif isinstance(value, int | decimal.Decimal) and not isinstance(value, bool):
            result = float(value)
        elif isinstance(value, str) and value in _NON_NUMERIC:
            result = _NON_NUMERIC[value]
        else:
            raise _invalid(schema, value)
        return to_float32(result) if single else result

    return decode_float


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return base64.b64decode(value, validate=True)


def _bytes_decoder(schema: Schema) -> Decoder:
    def decode_bytes(value: Any) -> Any:
        try:
            return _b64(value)
        except (ValueError, binascii.Error) as e:
            raise DataError(f"Invalid bytes field: {e}") from e

    return decode_bytes


def _logical_decoder(schema: Schema) -> Decoder | None:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:

        def decode_decimal(value: Any) -> Any:
            if isinstance(value, decimal.Decimal):
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return decimal.Decimal(value)
            if isinstance(value, float):
                return decimal.Decimal(repr(value))
            if isinstance(value, str):
                try:
                    return Decimal.to_logical(schema, _b64(value))
                except (ValueError, binascii.Error, DataError) as e:
                    raise DataError("Invalid bytes for Decimal field") from e
            raise DataError(
                "Invalid type for Decimal, underlying representation should be numeric or bytes "
                f"but was {node_type(value)}"
            )

        return decode_decimal
    for logical, bits, what in (
        (Date, 32, "integer"),
        (Time, 32, "integer"),
        (Timestamp, 64, "integral"),
    ):
        if name == logical.LOGICAL_NAME:
            return _temporal_decoder(schema, logical, bits, what)
    return None


def _temporal_decoder(schema: Schema, logical: Any, bits: int, what: str) -> Decoder:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    label = logical.__name__

    def decode_temporal(value: Any) -> Any:
        if value.__class__ is not int or not low <= value <= high:
            raise DataError(
                f"Invalid type for {label}, underlying representation should be {what} but was "
                f"{node_type(value)}"
            )
        return logical.to_logical(schema, value)

    return decode_temporal
