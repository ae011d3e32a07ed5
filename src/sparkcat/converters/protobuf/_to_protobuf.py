"""Connect values -> the values a protobuf message constructor takes, one converter per schema.

The root struct becomes one call of its message class with keyword arguments (nested structs
nested dicts, maps dicts, arrays lists), so upb's C code builds the whole message; a ``None``
argument leaves a field unset, so a struct of primitives passes its values as they are. The
choices (wrappers, enums, entry lists) follow the schema mapping of :mod:`.protobuf_data`
rule for rule.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf._common import (
    ENUM,
    DataOptions,
    enum_numbers,
    int_type,
    is_union,
    scrub_name,
    wraps,
)

Convert = Callable[[Any], Any]
_RAW: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.from_logical,
    Date.LOGICAL_NAME: Date.from_logical,
    Time.LOGICAL_NAME: Time.from_logical,
    Timestamp.LOGICAL_NAME: Timestamp.from_logical,
}
_UINT64 = (1 << 64) - 1
_MAP_KEY_TYPES = (Type.INT32, Type.INT64, Type.BOOLEAN, Type.STRING)


def to_protobuf(
    schema: Schema, options: DataOptions, message_class: Any, prefix: bytes
) -> Callable[[Any], bytes]:
    """A value of ``schema`` -> ``prefix`` + its message (of ``message_class``)'s bytes: a
    Struct, or a primitive in its wrapper message (logical values as their raw values)."""
    if schema.type is Type.STRUCT:
        return _struct(schema, options, message_class, prefix)
    convert = _raw(schema) or _convert(schema, DataOptions())

    if convert is None:
        return lambda value: prefix + message_class(value=value).SerializeToString()
    return lambda value: prefix + message_class(value=convert(value)).SerializeToString()


def _raw(schema: Schema) -> Convert | None:
    """A logical value -> its raw Connect value (a logical root travels as its raw type)."""
    logical = _RAW.get(schema.name) if schema.name else None
    if logical is None:
        return None
    return lambda value: logical(schema, value)


def _logical(schema: Schema) -> Convert | None:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return lambda value: _decimal(schema, value)
    if name == Date.LOGICAL_NAME:
        return lambda value: {"year": value.year, "month": value.month, "day": value.day}
    if name == Time.LOGICAL_NAME:
        return lambda value: _time(Time.from_logical(schema, value))
    if name == Timestamp.LOGICAL_NAME:
        return lambda value: _timestamp(Timestamp.from_logical(schema, value))
    return None


def _decimal(schema: Schema, value: Any) -> dict[str, Any]:
    unscaled = Decimal.from_logical(schema, value)
    _, digits, exponent = value.as_tuple()
    # Java's BigDecimal.precision() and scale() of the value
    return {"value": unscaled, "precision": len(digits), "scale": -int(exponent)}


def _time(millis: int) -> dict[str, int]:
    seconds, ms = divmod(millis, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return {"hours": hour, "minutes": minute, "seconds": second, "nanos": ms * 1_000_000}


def _timestamp(millis: int) -> dict[str, int]:
    seconds, ms = divmod(millis, 1000)
    return {"seconds": seconds, "nanos": ms * 1_000_000}


def _bytes(value: Any) -> bytes:
    return value if value.__class__ is bytes else bytes(value)


def _convert(schema: Schema, options: DataOptions) -> Convert | None:
    if schema.name is not None:
        logical = _logical(schema)
        if logical is not None:
            return logical
    kind = schema.type
    params = schema.parameters or {}
    if ENUM in params and kind in (Type.STRING, Type.INT32):
        if kind is Type.INT32:
            return None
        numbers = enum_numbers(schema)
        return lambda value: _enum(numbers, value)
    if int_type(schema) in ("uint64", "fixed64"):  # read as Java's signed long
        if wraps(options, schema):
            return lambda value: {"value": value & _UINT64}
        return lambda value: value & _UINT64
    if wraps(options, schema):
        inner = _bytes if kind is Type.BYTES else None
        if inner is None:
            return lambda value: {"value": value}
        return lambda value: {"value": inner(value)}
    if kind is Type.BYTES:
        return _bytes
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        item = _convert(schema.value_schema, options)
        if item is None:
            return None
        return lambda values: [item(v) for v in values]
    if kind is Type.MAP:
        return _map(schema, options)
    if kind is Type.STRUCT:
        return _struct(schema, options)
    return None


def _enum(numbers: dict[str, int], symbol: str) -> int:
    number = numbers.get(symbol)
    if number is None:
        raise DataError(f"Unknown enum symbol {symbol!r}; known: {sorted(numbers)}")
    return number


def is_map_field(schema: Schema, options: DataOptions) -> bool:
    """Whether a Connect MAP is written as a protobuf map (else a list of entry messages)."""
    key, value = schema.key_schema, schema.value_schema
    assert key is not None and value is not None
    return (
        key.type in _MAP_KEY_TYPES
        and key.name is None
        and ENUM not in (key.parameters or {})
        and not wraps(options, key)
        and value.type not in (Type.ARRAY, Type.MAP)
    )


def _map(schema: Schema, options: DataOptions) -> Convert | None:
    assert schema.key_schema is not None and schema.value_schema is not None
    key = _convert(schema.key_schema, options)
    value = _convert(schema.value_schema, options)
    if is_map_field(schema, options):
        if key is None and value is None:
            return None
        k: Convert = key or _same
        v: Convert = value or _same
        return lambda items: {k(kk): v(vv) for kk, vv in items.items()}
    ke: Convert = key or _same
    ve: Convert = value or _same
    return lambda items: [{"key": ke(kk), "value": ve(vv)} for kk, vv in items.items()]


def _same(value: Any) -> Any:
    return value


def _union(members: list[tuple[str, Convert | None]]) -> Convert:
    """A union Struct -> ``{member: value}`` of its one set member (keyword arguments)."""

    def convert(union: Any) -> dict[str, Any]:
        if union is None:
            return {}
        for (member, conv), value in zip(members, union.values, strict=True):
            if value is not None:
                return {member: value if conv is None else conv(value)}
        raise DataError("Cannot find non-null field")

    return convert


def _struct(
    schema: Schema, options: DataOptions, target: Any = dict, prefix: bytes | None = None
) -> Convert:
    """Struct -> ``target(**fields)``: a dict for nested messages; at the root (``prefix``
    given) the message class, serialized after ``prefix``. One generated straight-line
    function per schema: only indices and fixed snippets are spliced into the source; names,
    converters and defaults are passed as globals."""

    def name(text: str) -> str:
        return scrub_name(text) if options.scrub_invalid_names else text

    namespace: dict[str, Any] = {"target": target, "prefix": prefix}
    keywords: list[str] = []
    extras: list[str] = []
    for field in schema.fields:
        i = field.index
        if is_union(field.schema):
            members = [(name(m.name), _convert(m.schema, options)) for m in field.schema.fields]
            namespace[f"u{i}"] = _union(members)
            extras.append(f"**u{i}(v{i})")
            continue
        conv = _convert(field.schema, options)
        default = field.schema.default_value
        expression = f"v{i}"
        if conv is not None:
            namespace[f"c{i}"] = conv
            expression = f"(None if v{i} is None else c{i}(v{i}))"
        if default is not None:
            namespace[f"d{i}"] = default if conv is None else conv(default)
            expression = f"(d{i} if v{i} is None else {expression})"
        proto_name = name(field.name)
        if proto_name.isidentifier() and not keyword.iskeyword(proto_name):
            keywords.append(f"{proto_name}={expression}")
        else:
            namespace[f"n{i}"] = proto_name
            extras.append(f"**{{n{i}: {expression}}}")
    arguments = ", ".join(keywords + extras)
    result = f"target({arguments})"
    if prefix is not None:
        result = f"prefix + {result}.SerializeToString()"
    # "v0, = ..." keeps one field valid; unpacking the values list is one bytecode
    unpack = "".join(f"v{f.index}, " for f in schema.fields) or "_"
    values = "struct.values" if schema.fields else "()"
    source = f"def build(struct):\n    {unpack} = {values}\n    return {result}\n"
    exec(compile(source, f"<sparkcat.protobuf {schema.name}>", "exec"), namespace)
    return namespace["build"]  # type: ignore[no-any-return]
