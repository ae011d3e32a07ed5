"""Connect values -> the values a protobuf message constructor takes, one converter per schema.

A struct becomes a dict of keyword arguments (nested structs nested dicts, maps dicts, arrays
lists), so one ``MessageClass(**kwargs)`` call builds the whole message in upb's C code. A
``None`` argument leaves a field unset, so a struct of primitives is a plain
``dict(zip(names, values))``. The choices (wrappers, enums, entry lists) follow the schema
mapping of :mod:`.protobuf_data` rule for rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf.protobuf_data import (
    ENUM,
    DataOptions,
    enum_numbers,
    is_union,
    scrub_name,
    wraps,
)

Convert = Callable[[Any], Any]
_MAP_KEY_TYPES = (Type.INT32, Type.INT64, Type.BOOLEAN, Type.STRING)


def to_protobuf(schema: Schema, options: DataOptions) -> Convert:
    """Struct of ``schema`` -> the keyword arguments of its message class."""
    convert = _convert(schema, options)
    assert convert is not None
    return convert


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


def _struct(schema: Schema, options: DataOptions) -> Convert:
    def name(text: str) -> str:
        return scrub_name(text) if options.scrub_invalid_names else text

    plan: list[tuple[int, str, Convert | None, Any]] = []
    unions: list[tuple[int, list[tuple[str, Convert | None]]]] = []
    for field in schema.fields:
        if is_union(field.schema):
            members = [(name(m.name), _convert(m.schema, options)) for m in field.schema.fields]
            unions.append((field.index, members))
            continue
        plan.append(
            (
                field.index,
                name(field.name),
                _convert(field.schema, options),
                field.schema.default_value,
            )
        )
    if not unions and all(conv is None and default is None for _, _, conv, default in plan):
        names = [n for _, n, _, _ in plan]
        return lambda struct: dict(zip(names, struct.values, strict=True))

    def convert(struct: Any) -> dict[str, Any]:
        values = struct.values
        out: dict[str, Any] = {}
        for index, field_name, conv, default in plan:
            value = values[index]
            if value is None:
                value = default
                if value is None:
                    continue
            out[field_name] = value if conv is None else conv(value)
        for index, members in unions:
            union = values[index]
            if union is None:
                continue
            for (member, conv), value in zip(members, union.values, strict=True):
                if value is not None:
                    out[member] = value if conv is None else conv(value)
                    break
            else:
                raise DataError("Cannot find non-null field")
        return out

    return convert
