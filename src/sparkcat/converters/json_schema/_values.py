"""Connect values <-> JSON values for JsonSchemaConverter (Confluent's ``JsonSchemaData``).

Writing gives what ``orjson.dumps`` turns into the bytes Jackson writes: floats become
``orjson.Fragment`` with Java's ``Double.toString``/``Float.toString`` text, BYTES (and
Decimal with ``decimal.format=BASE64``) base64 text, Decimal with ``NUMERIC`` its plain
decimal text, Date/Time/Timestamp their int/long, maps with non-string keys arrays of
``{"key","value"}`` objects. A null field without default and not optional is left out of its
object, as Confluent does.
"""

from __future__ import annotations

import base64
import binascii
import decimal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from sparkcat.api._java_format import java_double_str, java_float_str
from sparkcat.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type
from sparkcat.api.errors import DataError

if TYPE_CHECKING:
    from sparkcat.converters.json_schema.json_schema_data import JsonSchemaMapping

Convert = Callable[[Any], Any]
OMIT = object()  # a value Confluent leaves out of its object
_new_struct = Struct.from_valid_values


def _fragment(text: str) -> Any:
    return orjson.Fragment(text.encode())


def _float64(value: Any) -> Any:
    return _fragment(java_double_str(float(value)))


def _float32(value: Any) -> Any:
    return _fragment(java_float_str(float(value)))


def _b64(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


def _string_keys(schema: Schema) -> bool:
    key = schema.key_schema
    return key is not None and key.type is Type.STRING and not key.optional


# -- Connect -> JSON ------------------------------------------------------------------------
def to_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    """Converter of Connect values of ``schema`` (including ``None``) to JSON values or OMIT."""
    inner = _to_json(mapping, schema)
    default = schema.default_value
    optional = schema.optional

    def convert(value: Any) -> Any:
        if value is None:
            if default is not None:
                return inner(default)
            return None if optional else OMIT
        return inner(value)

    return convert


def to_json_default(mapping: JsonSchemaMapping, schema: Schema, value: Any) -> Any:
    """The plain-JSON form of a default value (for the schema document)."""
    return orjson.loads(orjson.dumps(_to_json(mapping, schema)(value)))


def _to_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    name, kind = schema.name, schema.type
    if name == Decimal.LOGICAL_NAME:
        if mapping.decimal_numeric:
            return lambda v: _fragment(str(v))
        return lambda v: _b64(Decimal.from_logical(schema, v))
    if name == Date.LOGICAL_NAME:
        return lambda v: Date.from_logical(schema, v)
    if name == Time.LOGICAL_NAME:
        return lambda v: Time.from_logical(schema, v)
    if name == Timestamp.LOGICAL_NAME:
        return lambda v: Timestamp.from_logical(schema, v)
    if kind is Type.FLOAT64:
        return _float64
    if kind is Type.FLOAT32:
        return _float32
    if kind is Type.BYTES:
        return _b64
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = to_json(mapping, schema.value_schema)
        return lambda v: [None if (x := item(e)) is OMIT else x for e in v]
    if kind is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key, value = to_json(mapping, schema.key_schema), to_json(mapping, schema.value_schema)
        if _string_keys(schema):
            return lambda v: {k: _null(value(x)) for k, x in v.items()}
        return lambda v: [{"key": _null(key(k)), "value": _null(value(x))} for k, x in v.items()]
    if kind is Type.STRUCT:
        return _struct_to_json(mapping, schema)
    return _same


def _null(value: Any) -> Any:
    return None if value is OMIT else value


def _same(value: Any) -> Any:
    return value


def _struct_to_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    pairs = tuple((f.name, to_json(mapping, f.schema)) for f in schema.fields)

    def convert(struct: Any) -> dict[str, Any]:
        if not isinstance(struct, Struct):
            raise DataError(f"Invalid type for STRUCT: {type(struct)}")
        if struct.schema is not schema and struct.schema != schema:
            raise DataError("Mismatching schema.")
        out = {}
        for (name, conv), value in zip(pairs, struct.values, strict=True):
            converted = conv(value)
            if converted is not OMIT:
                out[name] = converted
        return out

    return convert


# -- JSON -> Connect ------------------------------------------------------------------------
def from_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    """Converter of JSON values (``None`` for JSON null or a missing property) to Connect."""
    inner = _from_json(mapping, schema)
    default = schema.default_value
    optional = schema.optional
    kind = schema.type

    def convert(value: Any) -> Any:
        if value is None:
            if default is not None:
                return default
            if optional:
                return None
            raise DataError(f"Invalid null value for required {kind} field")
        return inner(value)

    return convert


def _check(kind: Type, value: Any, expected: type | tuple[type, ...]) -> None:
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        raise DataError(f"Invalid JSON value for {kind}: {value!r}")


def _from_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    name, kind = schema.name, schema.type
    if name == Decimal.LOGICAL_NAME:
        return lambda v: _decimal(schema, v)
    if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        logical = {
            Date.LOGICAL_NAME: Date.to_logical,
            Time.LOGICAL_NAME: Time.to_logical,
            Timestamp.LOGICAL_NAME: Timestamp.to_logical,
        }[name]

        def to_logical(v: Any) -> Any:
            _check(kind, v, int)
            return logical(schema, v)

        return to_logical
    if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):

        def to_int(v: Any) -> int:
            _check(kind, v, (int, float, decimal.Decimal))
            return int(v)

        return to_int
    if kind in (Type.FLOAT32, Type.FLOAT64):

        def to_float(v: Any) -> float:
            _check(kind, v, (int, float, decimal.Decimal))
            return float(v)

        return to_float
    if kind is Type.BOOLEAN:

        def to_bool(v: Any) -> bool:
            _check(kind, v, bool)
            return bool(v)

        return to_bool
    if kind is Type.STRING:
        return lambda v: v if isinstance(v, str) else None
    if kind is Type.BYTES:
        return _bytes
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = from_json(mapping, schema.value_schema)
        return lambda v: [item(e) for e in _list(v)]
    if kind is Type.MAP:
        return _map_from_json(mapping, schema)
    return _struct_from_json(mapping, schema)


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise DataError(f"Arrays should be encoded as JSON arrays, but found {value!r}")
    return value


def _bytes(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DataError("Invalid bytes field")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as e:
        raise DataError("Invalid bytes field") from e


def _decimal(schema: Schema, value: Any) -> decimal.Decimal:
    if isinstance(value, bool):
        raise DataError(f"Invalid type for Decimal: {value!r}")
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, int):
        return decimal.Decimal(value)
    if isinstance(value, float):
        return decimal.Decimal(repr(value))
    if isinstance(value, str):
        return Decimal.to_logical(schema, _bytes(value))
    raise DataError(f"Invalid type for Decimal: {value!r}")


def _map_from_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    assert schema.key_schema is not None and schema.value_schema is not None
    key, value = from_json(mapping, schema.key_schema), from_json(mapping, schema.value_schema)
    if _string_keys(schema):

        def object_map(v: Any) -> dict[Any, Any]:
            if not isinstance(v, dict):
                raise DataError(
                    "Maps with string fields should be encoded as JSON objects, but found "
                    f"{type(v).__name__}"
                )
            return {k: value(x) for k, x in v.items()}

        return object_map

    def entry_map(v: Any) -> dict[Any, Any]:
        result = {}
        for entry in _list(v):
            if not isinstance(entry, dict) or len(entry) != 2:
                raise DataError(f"Found invalid map entry: {entry!r}")
            result[key(entry.get("key"))] = value(entry.get("value"))
        return result

    return entry_map


def _struct_from_json(mapping: JsonSchemaMapping, schema: Schema) -> Convert:
    fields = tuple(
        (f.name, from_json(mapping, f.schema), f.schema.default_value) for f in schema.fields
    )

    def convert(v: Any) -> Struct:
        if not isinstance(v, dict):
            raise DataError(f"Structs should be encoded as JSON objects, but found {v!r}")
        values = []
        for name, conv, default in fields:
            if name in v:
                values.append(conv(v[name]))
            else:
                values.append(default)  # a missing property: its default or null, never an error
        return _new_struct(schema, values)

    return convert


def contains_decimal(schema: Schema) -> bool:
    """Whether values of ``schema`` need exact number parsing."""
    if schema.name == Decimal.LOGICAL_NAME:
        return True
    if schema.type is Type.STRUCT:
        return any(contains_decimal(f.schema) for f in schema.fields)
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return contains_decimal(schema.key_schema) or contains_decimal(schema.value_schema)
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return contains_decimal(schema.value_schema)
    return False
