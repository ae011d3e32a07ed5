"""Connect values <-> the Python values fastavro reads and writes, one converter per schema.

Each converter is built once per Connect schema and cached by the converter; ``None`` stands
for "no conversion needed" so that callers skip a call per value (the common case for
primitives, and for structs of primitives, whose values list becomes the record dict in one
``dict(zip(...))``). Logical types go to their Avro int/long/bytes form here, so fastavro
works on schemas without ``logicalType`` and never second-guesses Connect's conversions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.avro._constants import (
    AVRO_TYPE_ENUM,
    AVRO_TYPE_UNION,
    CONNECT_AVRO_FIXED_SIZE_PROP,
    LOGICAL_TO_AVRO,
    LOGICAL_TO_CONNECT,
    PRIMITIVES,
)

Convert = Callable[[Any], Any]

# The Avro type of a union member of a Connect type (fastavro's tuple notation names a branch)
_BRANCH_TYPES = {**PRIMITIVES, Type.ARRAY: "array"}
_NULL_ERROR = "Found null value for non-optional schema"
_new_struct = Struct.from_valid_values


def _optional(schema: Schema, convert: Convert | None) -> Convert | None:
    if convert is None or not schema.optional:
        return convert
    inner = convert
    return lambda value: None if value is None else inner(value)


def _string_keys(schema: Schema) -> bool:
    key = schema.key_schema
    return key is not None and key.type is Type.STRING and not key.optional


# -- Connect -> Avro ----------------------------------------------------------------------------
def to_avro(schema: Schema) -> Convert | None:
    """The converter of Connect values of ``schema`` to fastavro's values (``None``: as is)."""
    return _optional(schema, _to_avro(schema))


def _to_avro(schema: Schema) -> Convert | None:
    logical = LOGICAL_TO_AVRO.get(schema.name) if schema.name is not None else None
    size = (schema.parameters or {}).get(CONNECT_AVRO_FIXED_SIZE_PROP)
    if logical is not None and size is not None:
        return lambda value: _pad(logical(schema, value), int(size))
    if logical is not None:
        return lambda value: logical(schema, value)
    kind = schema.type
    if kind is Type.BYTES:
        return _bytes
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = to_avro(schema.value_schema)
        if item is None:
            return None
        return lambda value: [item(v) for v in value]
    if kind is Type.MAP:
        return _map_to_avro(schema)
    if kind is Type.STRUCT and schema.name == AVRO_TYPE_UNION:
        return _union_to_avro(schema)
    if kind is Type.STRUCT:
        return _struct_to_avro(schema)
    return None


def _pad(unscaled: bytes, size: int) -> bytes:
    """A decimal's two's-complement bytes sign-extended to an Avro ``fixed`` size."""
    if len(unscaled) > size:
        raise DataError(
            f"Unscaled value byte array length {len(unscaled)} is greater than fixed size {size}"
        )
    fill = b"\xff" if unscaled and unscaled[0] & 0x80 else b"\x00"
    return fill * (size - len(unscaled)) + unscaled


def _bytes(value: Any) -> bytes:
    return value if value.__class__ is bytes else bytes(value)


def _map_to_avro(schema: Schema) -> Convert | None:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None
    value_conv = to_avro(value_schema)
    if _string_keys(schema):
        if value_conv is None:
            return None
        known: Convert = value_conv
        return lambda value: {k: known(v) for k, v in value.items()}
    key_conv: Convert = to_avro(key_schema) or _same
    entry_conv: Convert = value_conv or _same
    return lambda value: [{"key": key_conv(k), "value": entry_conv(v)} for k, v in value.items()]


def _same(value: Any) -> Any:
    return value


def _struct_to_avro(schema: Schema) -> Convert:
    fields = schema.fields
    names = tuple(f.name for f in fields)
    convs = tuple(to_avro(f.schema) for f in fields)
    # The fields' defaults in the form fastavro writes (Connect's Struct.get gives them)
    defaults = tuple(_avro_default(f.schema) for f in fields)
    required = tuple(i for i, f in enumerate(fields) if not f.schema.optional)
    plain = all(c is None for c in convs) and all(d is None for d in defaults)

    def check(struct: Any) -> list[Any]:
        if struct.__class__ is not Struct and not isinstance(struct, Struct):
            raise DataError(f"Invalid type for STRUCT: {type(struct)}")
        if struct.schema is not schema and struct.schema != schema:
            raise DataError("Mismatching struct schema")
        return struct.values

    if plain:

        def write_plain(struct: Any) -> dict[str, Any]:
            values = check(struct)
            if None in values:
                for i in required:
                    if values[i] is None:
                        raise DataError(f"{_NULL_ERROR} (field {names[i]})")
            return dict(zip(names, values, strict=True))

        return write_plain

    def write(struct: Any) -> dict[str, Any]:
        values = check(struct)
        out = {}
        for name, conv, default, value in zip(names, convs, defaults, values, strict=True):
            if value is None:
                value = default
            elif conv is not None:
                value = conv(value)
            out[name] = value
        if None in values:
            for i in required:
                if out[names[i]] is None:
                    raise DataError(f"{_NULL_ERROR} (field {names[i]})")
        return out

    return write


def _avro_default(schema: Schema) -> Any:
    """A field's Connect default in the form fastavro writes (``None`` if there is none)."""
    if schema.default_value is None:
        return None
    convert = to_avro(schema)
    return schema.default_value if convert is None else convert(schema.default_value)


# -- Avro -> Connect ----------------------------------------------------------------------------
def to_connect(schema: Schema) -> Convert | None:
    """The converter of fastavro's values to Connect values of ``schema`` (``None``: as is)."""
    return _optional(schema, _to_connect(schema))


def _to_connect(schema: Schema) -> Convert | None:
    logical = LOGICAL_TO_CONNECT.get(schema.name) if schema.name is not None else None
    if logical is not None:
        return lambda value: logical(schema, value)
    kind = schema.type
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = to_connect(schema.value_schema)
        if item is None:
            return None
        return lambda value: [item(v) for v in value]
    if kind is Type.MAP:
        return _map_to_connect(schema)
    if kind is Type.STRUCT and schema.name == AVRO_TYPE_UNION:
        return _union_to_connect(schema)
    if kind is Type.STRUCT:
        return _struct_to_connect(schema)
    return None


def _map_to_connect(schema: Schema) -> Convert | None:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None
    value_conv = to_connect(value_schema)
    if _string_keys(schema):
        if value_conv is None:
            return None
        known: Convert = value_conv
        return lambda value: {k: known(v) for k, v in value.items()}
    key_conv: Convert = to_connect(key_schema) or _same
    entry_conv: Convert = value_conv or _same
    return lambda value: {key_conv(entry["key"]): entry_conv(entry["value"]) for entry in value}


def _struct_to_connect(schema: Schema) -> Convert:
    fields = schema.fields
    names = tuple(f.name for f in fields)
    convs = tuple(to_connect(f.schema) for f in fields)
    if all(c is None for c in convs):
        # fastavro builds the record dict in the writer schema's field order, which is the
        # order of this schema's fields (it was derived from that writer schema).
        return lambda record: _new_struct(schema, list(record.values()))
    pairs = tuple(zip(names, convs, strict=True))

    def read(record: dict[str, Any]) -> Struct:
        values = [
            record[name] if conv is None or record[name] is None else conv(record[name])
            for name, conv in pairs
        ]
        return _new_struct(schema, values)

    return read


# -- unions (Connect STRUCTs named io.confluent.connect.avro.Union) -----------------------------
def _named_type(schema: Schema) -> str | None:
    """The Avro full name of a union member that is an Avro named type, else ``None``."""
    params = schema.parameters or {}
    if schema.type is Type.STRUCT:
        return schema.name
    if schema.type is Type.STRING and AVRO_TYPE_ENUM in params:
        return params[AVRO_TYPE_ENUM]
    if schema.type is Type.BYTES and CONNECT_AVRO_FIXED_SIZE_PROP in params:
        return schema.name
    return None


def _branch(schema: Schema) -> str | None:
    """The branch name for fastavro's ``(name, value)`` notation (``None``: let it match)."""
    if schema.type is Type.STRUCT or AVRO_TYPE_ENUM in (schema.parameters or {}):
        return schema.name if schema.type is Type.STRUCT else None
    if schema.type is Type.BYTES and CONNECT_AVRO_FIXED_SIZE_PROP in (schema.parameters or {}):
        return schema.name
    if schema.type is Type.MAP:
        return "map" if _string_keys(schema) else "array"
    return _BRANCH_TYPES.get(schema.type)


def _union_to_avro(schema: Schema) -> Convert:
    members = tuple(
        (f.schema, to_avro(f.schema) or _same, _branch(f.schema)) for f in schema.fields
    )

    def write(struct: Any) -> Any:
        if not isinstance(struct, Struct) or struct.schema != schema:
            raise DataError("Mismatching struct schema")
        for (member, conv, branch), value in zip(members, struct.values, strict=True):
            if value is None:
                value = member.default_value
            if value is not None:
                converted = conv(value)
                return converted if branch is None else (branch, converted)
        return None

    return write


_PY_CLASSES = {
    Type.INT8: int,
    Type.INT16: int,
    Type.INT32: int,
    Type.INT64: int,
    Type.FLOAT32: float,
    Type.FLOAT64: float,
    Type.BOOLEAN: bool,
    Type.STRING: str,
    Type.BYTES: bytes,
    Type.ARRAY: list,
    Type.STRUCT: dict,
}


def _union_to_connect(schema: Schema) -> Convert:
    """fastavro (read with ``return_named_type`` and its override) gives ``(full name,
    value)`` for named members of unions with several named types and the bare value
    otherwise; bare values are matched to their member by Python class, which must be
    unambiguous (an ``int`` and a ``long`` member cannot be told apart)."""
    fields = schema.fields
    size = len(fields)
    by_name: dict[str, tuple[int, Convert]] = {}
    by_class: dict[type, tuple[int, Convert]] = {}
    named = [f for f in fields if _named_type(f.schema) is not None]
    for f in fields:
        conv = to_connect(f.schema) or _same
        full = _named_type(f.schema)
        if full is not None:
            by_name[full] = by_name[f.name] = (f.index, conv)
            if len(named) > 1:
                continue
        if f.schema.type is Type.MAP:
            cls: type = dict if _string_keys(f.schema) else list
        else:
            cls = _PY_CLASSES[f.schema.type]
        if cls in by_class:
            raise DataError(
                f"The Avro union {[f.name for f in fields]} cannot be decoded unambiguously "
                "by sparkcat (two members read as the same Python type)"
            )
        by_class[cls] = (f.index, conv)

    def read(value: Any) -> Struct:
        if value.__class__ is tuple:
            name, inner = value
            found = by_name.get(name) or by_name.get(name.rpartition(".")[2])
        else:
            inner = value
            found = by_class.get(value.__class__)
        if found is None:
            raise DataError(f"Did not find matching union field for data: {value!r}")
        values: list[Any] = [None] * size
        values[found[0]] = found[1](inner)
        return _new_struct(schema, values)

    return read
