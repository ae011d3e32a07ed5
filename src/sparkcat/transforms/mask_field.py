"""MaskField: replace fields with a type-appropriate "empty" value or a replacement
(Kafka's ``MaskField``)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from sparkcat.api import values
from sparkcat.api.config import ConfigDef, ConfigType, Importance, NonEmptyString
from sparkcat.api.data import Field, Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    NonEmptyListValidator,
    SchemaUpdateCache,
    define_replace_null_with_default,
    field_getter,
    require_map,
    require_struct,
    type_name,
)
from sparkcat.transforms._field_copy import FieldCopy

FIELDS_CONFIG = "fields"
REPLACEMENT_CONFIG = "replacement"

OVERVIEW_DOC = (
    "Mask specified fields with a valid null value for the field type (i.e. 0, false, empty "
    "string, and so on).<p/>For numeric and string fields, an optional replacement value can be "
    "specified that is converted to the correct type.<p/>Use the concrete transformation type "
    "designed for the record key (<code>org.apache.kafka.connect.transforms.MaskField$Key</code>) "
    "or value (<code>org.apache.kafka.connect.transforms.MaskField$Value</code>)."
)
_PURPOSE = "mask fields"

CONFIG_DEF = (
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        ConfigType.LIST,
        validator=NonEmptyListValidator(),
        importance=Importance.HIGH,
        documentation="Names of fields to mask.",
    )
    .define(
        REPLACEMENT_CONFIG,
        ConfigType.STRING,
        None,
        validator=NonEmptyString(),
        importance=Importance.LOW,
        documentation="Custom value replacement, that will be applied to all 'fields' values "
        "(numeric or non-empty string values only).",
    )
)
define_replace_null_with_default(CONFIG_DEF)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# Java boxes Connect's integer types as Byte/Short/Integer/Long; Python has one int, so with a
# schema the field's type picks the conversion and schemaless ints are treated as Long.
_INT_CONVERTERS: dict[Type | None, Callable[..., Any]] = {
    Type.INT8: values.convert_to_byte,
    Type.INT16: values.convert_to_short,
    Type.INT32: values.convert_to_integer,
    Type.INT64: values.convert_to_long,
    None: values.convert_to_long,
}
_FLOAT_CONVERTERS: dict[Type | None, Callable[..., Any]] = {
    Type.FLOAT32: values.convert_to_float,
    Type.FLOAT64: values.convert_to_double,
    None: values.convert_to_double,
}


_MISSING: Any = object()
_IMMUTABLE = (bool, int, float, str, decimal.Decimal, datetime.date, datetime.time)


def _empty(value: Any) -> Any:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, datetime.datetime):
        return _EPOCH
    if isinstance(value, datetime.date):
        return _EPOCH.date()
    if isinstance(value, datetime.time):
        return datetime.time(0)
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    raise DataError(f"Cannot mask value of type: {type_name(value)}")


def _replaced(value: Any, replacement: str, field_type: Type | None) -> Any:
    try:
        if isinstance(value, bool):
            pass
        elif isinstance(value, int):
            convert = _INT_CONVERTERS[field_type if field_type in _INT_CONVERTERS else None]
            return convert(None, replacement)
        elif isinstance(value, float):
            convert = _FLOAT_CONVERTERS[field_type if field_type in _FLOAT_CONVERTERS else None]
            return convert(None, replacement)
        elif isinstance(value, str):
            return replacement
        elif isinstance(value, decimal.Decimal):
            return decimal.Decimal(replacement)
    except (ValueError, ArithmeticError) as e:
        raise DataError(
            f"Unable to convert {replacement} (class java.lang.String) to number"
        ) from e
    raise DataError(f"Cannot mask value of type {type_name(value)} with custom replacement.")


class _Plan(NamedTuple):
    fields: tuple[tuple[Field, bool], ...]  # (field, whether it is masked)
    copy: FieldCopy
    masked: tuple[Field, ...]
    # (field index, class of the value) -> masked value, for immutable masked values.
    constants: dict[tuple[int, type], Any]


class MaskField(KeyValueTransformation):
    """Masks the listed fields of a Struct or Map. ``None`` field values stay ``None``."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._fields = frozenset(parsed[FIELDS_CONFIG])
        self._replacement: str | None = parsed[REPLACEMENT_CONFIG]
        self._replace_null = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._get = field_getter(self._replace_null)
        self._plans: SchemaUpdateCache[Schema, _Plan] = SchemaUpdateCache()

    def _plan(self, schema: Schema) -> _Plan:
        return _Plan(
            tuple((f, f.name in self._fields) for f in schema.fields),
            FieldCopy(schema.fields, schema, self._replace_null),
            tuple(f for f in schema.fields if f.name in self._fields),
            {},
        )

    def _masked(self, value: Any, field_type: Type | None) -> Any:
        if value is None:
            return None
        if self._replacement is None:
            return _empty(value)
        return _replaced(value, self._replacement, field_type)

    def _masked_constant(
        self, constants: dict[tuple[int, type], Any], field: Field, value: Any
    ) -> Any:
        """The masked ``value`` of ``field``, validated as put() would. The result depends only
        on the field and the value's class: immutable results are kept in ``constants``."""
        masked = self._masked(value, field.schema.type)
        Schema.validate_value(field.schema, masked, field.name)
        if isinstance(masked, _IMMUTABLE):
            constants[(field.index, value.__class__)] = masked
        return masked

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if self.operating_schema(record) is None:
            original = require_map(value, _PURPOSE)
            updated = dict(original)
            for name in self._fields:
                updated[name] = self._masked(original.get(name), None)
            return self.new_record(record, None, updated)
        struct = value if value.__class__ is Struct else require_struct(value, _PURPOSE)
        schema = struct.schema
        cache = self._plans
        plan = (
            cache.last_value if schema is cache.last_key else cache.get_or_build(schema, self._plan)
        )
        copied = plan.copy.read(struct)
        if copied is None:  # a null in a required field: put() raises Kafka's error for it
            out = Struct(schema)
            get = self._get
            for field, masked in plan.fields:
                v = get(struct, field)
                out.put(field, self._masked(v, field.schema.type) if masked else v)
        else:
            # Only the masked values are new; the others are valid already. Fields are checked
            # in order as put() would (the copied ones cannot fail): same error, same message.
            constants = plan.constants
            for field in plan.masked:
                i = field.index
                v = copied[i]
                if v is not None:
                    copied[i] = constants.get((i, v.__class__), _MISSING)
                    if copied[i] is _MISSING:
                        copied[i] = self._masked_constant(constants, field, v)
            out = Struct.from_valid_values(schema, copied)
        return self.new_record(record, self.operating_schema(record), out)


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "MaskField"]
