"""Cast: cast fields, or the whole key/value, to another primitive type (Kafka's ``Cast``)."""

from __future__ import annotations

import decimal
import math
import re
import struct as _struct
from collections.abc import Mapping
from typing import Any

from sparkcat.api import values
from sparkcat.api.config import ConfigDef, ConfigType, Importance, LambdaValidator
from sparkcat.api.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaUpdateCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_getter,
    java_list,
    require_map,
    require_struct,
    type_name,
)

SPEC_CONFIG = "spec"

OVERVIEW_DOC = (
    "Cast fields or the entire key or value to a specific type, e.g. to force an integer field "
    "to a smaller width. Cast from integers, floats, boolean and string to any other type, and "
    "cast binary to string (base64 encoded).<p/>Use the concrete transformation type designed "
    "for the record key (<code>org.apache.kafka.connect.transforms.Cast$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.Cast$Value</code>)."
)
_PURPOSE = "cast types"

_INPUT_TYPES = (
    Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64,
    Type.BOOLEAN, Type.STRING, Type.BYTES,
)  # fmt: skip
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_PACK_F = _struct.Struct(">f")
# Marks the whole-value cast in the parsed spec (Kafka uses a null field name).
WHOLE_VALUE = None


def _java_set(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _valid_output(type_: Type) -> Type:
    if type_ not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Cast transformation does not support casting to {type_.name}; supported types "
            f"are {_java_set(_OUTPUT_TYPES)}"
        )
    return type_


def _type_named(text: str) -> Type:
    try:
        return Type[text.strip().upper()]
    except KeyError:
        raise ConfigError(f"Invalid type found in casting spec: {text.strip()}") from None


def parse_field_types(mappings: list[str]) -> dict[str | None, Type]:
    """The ``spec`` as field → target type (``None`` → the whole value); ConfigError with
    Kafka's messages."""
    casts: dict[str | None, Type] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()  # Java's String.split drops trailing empty strings
        if len(parts) > 2:
            # Kafka reports this under the ReplaceField key name; kept for fidelity.
            raise ConfigError("renames", java_list(mappings), f"Invalid rename mapping: {mapping}")
        if len(parts) == 1:
            casts[WHOLE_VALUE] = _valid_output(_type_named(parts[0]))
            whole = True
        else:
            casts[parts[0].strip()] = _valid_output(_type_named(parts[1]))
    if whole and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only "
            "specify a single cast in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigError("Must specify at least one field to cast.")
    parse_field_types(value)


CONFIG_DEF = ConfigDef().define(
    SPEC_CONFIG,
    ConfigType.LIST,
    validator=LambdaValidator.with_(
        _validate_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
    ),
    importance=Importance.HIGH,
    documentation="List of fields and the type to cast them to of the form field1:type,"
    "field2:type to cast fields of Maps or Structs. A single type to cast the entire value. "
    "Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note "
    "that binary fields can only be cast to string.",
)
define_replace_null_with_default(CONFIG_DEF)


def _inferred_type(value: Any) -> Type | None:
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, bytes | bytearray | memoryview):
        return Type.BYTES
    if isinstance(value, list):
        return Type.ARRAY
    if isinstance(value, dict):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    if isinstance(value, decimal.Decimal):
        return Type.BYTES
    return None


def _wrap(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return ((value + half) & ((1 << bits) - 1)) - half


def _to_integer(value: Any, target: Type) -> int:
    bits = _INT_BITS[target]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float | decimal.Decimal):
        if isinstance(value, float) and math.isnan(value):
            return 0
        if isinstance(value, decimal.Decimal) and not value.is_finite():
            return 0
        # Java narrows a double through int (or long for INT64), saturating first.
        limit = 32 if bits < 64 and isinstance(value, float) else 64
        lo, hi = -(1 << (limit - 1)), (1 << (limit - 1)) - 1
        as_int = hi if value == math.inf else lo if value == -math.inf else int(value)
        return _wrap(max(lo, min(hi, as_int)) if isinstance(value, float) else as_int, bits)
    if isinstance(value, str):
        if not _JAVA_INTEGER.fullmatch(value):
            raise ValueError(value)
        parsed = int(value)
        if parsed != _wrap(parsed, bits):
            raise ValueError(value)
        return parsed
    raise DataError(f"Unexpected type in Cast transformation: {type_name(value)}")


def _to_float(value: Any, target: Type) -> float:
    if isinstance(value, str):
        result = float(value.strip())
    elif isinstance(value, bool | int | float | decimal.Decimal):
        result = float(value)
    else:
        raise DataError(f"Unexpected type in Cast transformation: {type_name(value)}")
    if target is Type.FLOAT32 and math.isfinite(result):
        try:
            result = float(_PACK_F.unpack(_PACK_F.pack(result))[0])
        except OverflowError:
            result = math.copysign(math.inf, result)
    return result


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | decimal.Decimal):
        return _to_integer(value, Type.INT64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataError(f"Unexpected type in Cast transformation: {type_name(value)}")


def _encode_logical(schema: Schema, value: Any) -> Any:
    for logical in (Date, Time, Timestamp):
        if schema.name == logical.LOGICAL_NAME:
            return logical.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """``value`` (described by ``schema``, or inferred when ``None``) cast to ``target``."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else _inferred_type(value)
    if inferred is None:
        raise DataError(
            f"Cast transformation was passed a value of type {type_name(value)} which is not "
            "supported by Connect's data API"
        )
    if inferred not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {inferred.name}; supported "
            f"types are {_java_set(_INPUT_TYPES)}"
        )
    if schema is not None and schema.name is not None and target is not Type.STRING:
        value = _encode_logical(schema, value)
    try:
        if target in _INT_BITS:
            return _to_integer(value, target)
        if target in (Type.FLOAT32, Type.FLOAT64):
            return _to_float(value, target)
        if target is Type.BOOLEAN:
            return _to_boolean(value)
        return values.convert_to_string(schema, value)
    except ValueError:
        raise DataError(f"Value ({value}) was out of range for requested data type") from None


def _builder_for(type_: Type) -> SchemaBuilder:
    return SchemaBuilder.type(type_)


class Cast(KeyValueTransformation):
    """Casts top-level fields of a Struct/Map, or the whole key/value, per ``spec``."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._casts = parse_field_types(parsed[SPEC_CONFIG])
        self._whole: Type | None = self._casts.get(WHOLE_VALUE)
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self._whole is not None:
                return self.new_record(record, None, cast_value(None, value, self._whole))
            original = require_map(value, _PURPOSE)
            updated = dict(original)
            for name, target in self._casts.items():
                if name is not None:
                    updated[name] = cast_value(None, original.get(name), target)
            return self.new_record(record, None, updated)
        updated_schema = self._cache.get_or_build(schema, self._updated_schema)
        if self._whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self._whole))
        struct = require_struct(value, _PURPOSE)
        out = Struct(updated_schema)
        for field, out_field in zip(struct.schema.fields, updated_schema.fields, strict=False):
            v = self._get(struct, field)
            cast_to = self._casts.get(field.name)
            out.put(out_field, cast_value(field.schema, v, cast_to) if cast_to is not None else v)
        return self.new_record(record, updated_schema, out)

    def _updated_schema(self, schema: Schema) -> Schema:
        target_type: Type = self._whole if self._whole is not None else Type.STRUCT
        if self._whole is not None:
            builder = copy_schema_basics(schema, _builder_for(self._whole))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                field_target = self._casts.get(field.name)
                if field_target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = _builder_for(field_target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(
                        cast_value(field.schema, field.schema.default_value, field_target)
                    )
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, target_type))
        return builder.build()

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "Cast", "cast_value", "parse_field_types"]
