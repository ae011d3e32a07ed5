"""Default values between Connect and Avro schema JSON, as Confluent's ``AvroData`` writes
them: numbers and strings as such, BYTES (and Decimal's bytes) as ISO-8859-1 text, Date/Time/
Timestamp as their int/long, string-keyed maps as objects, other maps as arrays of
``[key, value]`` pairs, structs as objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.avro._constants import LOGICAL_TO_AVRO, LOGICAL_TO_CONNECT

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _string_keys(schema: Schema) -> bool:
    key = schema.key_schema
    return key is not None and key.type is Type.STRING and not key.optional


def default_to_avro(schema: Schema, value: Any) -> Any:
    """The JSON form of the Connect value ``value`` as an Avro default."""
    if value is None:
        return None
    convert = LOGICAL_TO_AVRO.get(schema.name) if schema.name is not None else None
    if convert is not None:
        value = convert(schema, value)
    kind = schema.type
    if kind is Type.BYTES:
        return bytes(value).decode("latin-1")
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        return [default_to_avro(schema.value_schema, item) for item in value]
    if kind is Type.MAP:
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        if _string_keys(schema):
            return {k: default_to_avro(value_schema, v) for k, v in value.items()}
        return [
            [default_to_avro(key_schema, k), default_to_avro(value_schema, v)]
            for k, v in value.items()
        ]
    if kind is Type.STRUCT:
        if not isinstance(value, Struct):
            raise DataError(f"Invalid type used for default value of STRUCT field: {type(value)}")
        return {f.name: default_to_avro(f.schema, value.get(f)) for f in schema.fields}
    if kind in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    return value


def default_from_avro(schema: Schema, value: Any) -> Any:
    """The Connect value of the Avro default ``value`` (JSON) for ``schema``."""
    if value is None:
        return None
    kind = schema.type
    result: Any
    if kind is Type.BYTES:
        if not isinstance(value, str):
            raise DataError(f"Invalid default for BYTES: {value!r}")
        result = value.encode("latin-1")
    elif kind is Type.ARRAY:
        assert schema.value_schema is not None
        result = [default_from_avro(schema.value_schema, item) for item in value]
    elif kind is Type.MAP:
        result = _map_default(schema, value)
    elif kind is Type.STRUCT:
        if not isinstance(value, dict):
            raise DataError(f"Invalid default for STRUCT: {value!r}")
        struct = Struct(schema)
        for field in schema.fields:
            if field.name in value:
                struct.put(field, default_from_avro(field.schema, value[field.name]))
        result = struct
    elif kind in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataError(f"Invalid default for {kind}: {value!r}")
        result = float(value)
    else:
        result = value
    convert = LOGICAL_TO_CONNECT.get(schema.name) if schema.name is not None else None
    return convert(schema, result) if convert is not None else result


def _map_default(schema: Schema, value: Any) -> dict[Any, Any]:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None
    if isinstance(value, dict):
        return {
            default_from_avro(key_schema, k): default_from_avro(value_schema, v)
            for k, v in value.items()
        }
    result = {}
    for entry in value:
        if isinstance(entry, dict):
            k, v = entry.get("key"), entry.get("value")
        else:
            k, v = entry
        result[default_from_avro(key_schema, k)] = default_from_avro(value_schema, v)
    return result


def default_is_valid(avro: Any, value: Any, lookup: Callable[[str], Any]) -> bool:
    """Whether Avro accepts ``value`` as a default of type ``avro`` (its ``isValidDefault``)."""
    if isinstance(avro, list):
        return bool(avro) and default_is_valid(avro[0], value, lookup)
    if isinstance(avro, str):
        node: Any = {"type": avro} if avro in _SIMPLE_CHECKS or avro == "null" else lookup(avro)
        if node is None:
            return False
    else:
        node = avro
    kind = node["type"]
    if kind == "null":
        return value is None
    check = _SIMPLE_CHECKS.get(kind)
    if check is not None:
        return check(value)
    if kind in ("enum", "fixed"):
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list) and all(
            default_is_valid(node["items"], v, lookup) for v in value
        )
    if kind == "map":
        return isinstance(value, dict) and all(
            default_is_valid(node["values"], v, lookup) for v in value.values()
        )
    if kind in ("record", "error"):
        return isinstance(value, dict) and all(
            default_is_valid(f["type"], value[f["name"]], lookup)
            if f["name"] in value
            else "default" in f
            for f in node["fields"]
        )
    return False


def _is_int(value: Any, bounds: tuple[int, int]) -> bool:
    return (
        isinstance(value, int) and not isinstance(value, bool) and (bounds[0] <= value <= bounds[1])
    )


_SIMPLE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "bytes": lambda v: isinstance(v, str),
    "int": lambda v: _is_int(v, _INT32),
    "long": lambda v: _is_int(v, _INT64),
    "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "double": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}
