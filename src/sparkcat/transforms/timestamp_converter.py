"""TimestampConverter: convert timestamps between strings, Unix epoch numbers and Connect's
Date/Time/Timestamp (Kafka's ``TimestampConverter``). All conversions are in UTC.

Java ``SimpleDateFormat`` patterns are supported for the letters listed in
:mod:`sparkcat.transforms._date_format`; others are rejected by :meth:`configure`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance, ValidString
from sparkcat.api.data import (
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import ConfigError, ConnectError, DataError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaUpdateCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_getter,
    require_map,
    require_struct_or_null,
    type_name,
)
from sparkcat.transforms._date_format import JavaDateFormat, java_date_format

FIELD_CONFIG = "field"
TARGET_TYPE_CONFIG = "target.type"
FORMAT_CONFIG = "format"
UNIX_PRECISION_CONFIG = "unix.precision"
TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP = (
    "string", "unix", "Date", "Time", "Timestamp",
)  # fmt: skip
PRECISION_MILLIS, PRECISION_MICROS, PRECISION_NANOS, PRECISION_SECONDS = (
    "milliseconds", "microseconds", "nanoseconds", "seconds",
)  # fmt: skip
OVERVIEW_DOC = (
    "Convert timestamps between different formats such as Unix epoch, strings, and Connect "
    "Date/Timestamp types.Applies to individual fields or to the entire value.<p/>Use the "
    "concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.TimestampConverter$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.TimestampConverter$Value</code>)."
)
_PURPOSE = "converting timestamps formats"
_MILLIS_PER_DAY = 86_400_000
_PER_MILLI = {PRECISION_SECONDS: None, PRECISION_MILLIS: 1, PRECISION_MICROS: 1000,
              PRECISION_NANOS: 1_000_000}  # fmt: skip

CONFIG_DEF = (
    ConfigDef()
    .define(
        FIELD_CONFIG,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="The field containing the timestamp, or empty if the entire value is a "
        "timestamp",
    )
    .define(
        TARGET_TYPE_CONFIG,
        ConfigType.STRING,
        validator=ValidString.in_(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
        importance=Importance.HIGH,
        documentation="The desired timestamp representation: string, unix, Date, Time, or "
        "Timestamp",
    )
    .define(
        FORMAT_CONFIG,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="A SimpleDateFormat-compatible format for the timestamp. Used to generate "
        "the output when type=string or used to parse the input if the input is a string.",
    )
    .define(
        UNIX_PRECISION_CONFIG,
        ConfigType.STRING,
        PRECISION_MILLIS,
        validator=ValidString.in_(
            PRECISION_NANOS, PRECISION_MICROS, PRECISION_MILLIS, PRECISION_SECONDS
        ),
        importance=Importance.LOW,
        documentation="The desired Unix precision for the timestamp: seconds, milliseconds, "
        "microseconds, or nanoseconds. Used to generate the output when type=unix or used to "
        "parse the input if the input is a Long.Note: This SMT will cause precision loss during "
        "conversions from, and to, values with sub-millisecond components.",
    )
)
define_replace_null_with_default(CONFIG_DEF)

_SCHEMAS: dict[str, tuple[Schema, Schema]] = {
    TYPE_STRING: (OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
    TYPE_UNIX: (OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
    TYPE_DATE: (Date.builder().optional().build(), Date.SCHEMA),
    TYPE_TIME: (Time.builder().optional().build(), Time.SCHEMA),
    TYPE_TIMESTAMP: (Timestamp.builder().optional().build(), Timestamp.SCHEMA),
}


def _type_schema(target: str, optional: bool) -> Schema:
    return _SCHEMAS[target][0 if optional else 1]


def _truncating_div(value: int, divisor: int) -> int:
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient


class TimestampConverter(KeyValueTransformation):
    """Converts the whole key/value (``field`` empty) or one top-level field to
    ``target.type``. The source representation comes from the schema (logical name, STRING,
    INT64) or, schemaless, from the Python type (``datetime`` → Timestamp, ``date`` → Date,
    ``time`` → Time, ``int`` → unix, ``str`` → string)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._field: str = parsed[FIELD_CONFIG]
        self._target: str = parsed[TARGET_TYPE_CONFIG]
        pattern: str = parsed[FORMAT_CONFIG]
        self._precision: str = parsed[UNIX_PRECISION_CONFIG]
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        if self._target == TYPE_STRING and not pattern.strip():
            raise ConfigError(
                "TimestampConverter requires format option to be specified when using string "
                "timestamps"
            )
        self._format: JavaDateFormat | None = None
        if pattern.strip():
            try:
                self._format = java_date_format(pattern)
            except ValueError as e:
                raise ConfigError(
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for "
                    f"string timestamps: {pattern} ({e})"
                ) from e
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()
        self._to_raw: dict[str, Callable[[Any], int]] = {
            TYPE_STRING: self._string_to_raw,
            TYPE_UNIX: self._unix_to_raw,
            TYPE_DATE: _date_to_raw,
            TYPE_TIME: _time_to_raw,
            TYPE_TIMESTAMP: _timestamp_to_raw,
        }

    # -- record level -------------------------------------------------------------------------

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None or not self._field:
                return self.new_record(record, None, self.convert(value))
            updated = dict(require_map(value, _PURPOSE))
            updated[self._field] = self.convert(updated.get(self._field))
            return self.new_record(record, None, updated)
        if not self._field:
            converted = self.convert(value, _type_from_schema(schema))
            return self.new_record(record, _type_schema(self._target, schema.optional), converted)
        struct = require_struct_or_null(value, _PURPOSE)
        updated_schema = self._cache.get_or_build(schema, self._updated_schema)
        return self.new_record(record, updated_schema, self._convert_struct(struct, updated_schema))

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self._field:
                builder.field(field.name, _type_schema(self._target, field.schema.optional))
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            bare = builder.build()
            builder.default_value(self._convert_struct(schema.default_value, bare))
        return builder.build()

    def _convert_struct(self, struct: Struct | None, updated_schema: Schema) -> Struct | None:
        if struct is None:
            return None
        out = Struct(updated_schema)
        for field, out_field in zip(struct.schema.fields, updated_schema.fields, strict=False):
            v = self._get(struct, field)
            if field.name == self._field:
                v = self.convert(v, _type_from_schema(field.schema))
            out.put(out_field, v)
        return out

    # -- value level --------------------------------------------------------------------------

    def convert(self, timestamp: Any, source_type: str | None = None) -> Any:
        """``timestamp`` (of ``source_type``, inferred when ``None``) in ``target.type``."""
        if timestamp is None:
            return None
        if source_type is None:
            source_type = _infer_type(timestamp)
        raw = self._to_raw[source_type](timestamp)
        return self._from_raw(raw)

    def _string_to_raw(self, value: Any) -> int:
        if not isinstance(value, str):
            raise DataError(
                f"Expected string timestamp to be a String, but found {type_name(value)}"
            )
        assert self._format is not None  # configure() requires a format for string inputs
        try:
            return self._format.parse(value)
        except (ValueError, OverflowError) as e:
            raise DataError(
                f"Could not parse timestamp: value ({value}) does not match pattern "
                f"({self._format.pattern})"
            ) from e

    def _unix_to_raw(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(f"Expected Unix timestamp to be a Long, but found {type_name(value)}")
        per_milli = _PER_MILLI[self._precision]
        if per_milli is None:
            return value * 1000
        return _truncating_div(value, per_milli)

    def _from_raw(self, millis: int) -> Any:
        target = self._target
        if target == TYPE_STRING:
            if self._format is None:
                raise ConnectError("TimestampConverter requires format option")
            return self._format.format(millis)
        if target == TYPE_UNIX:
            per_milli = _PER_MILLI[self._precision]
            return _truncating_div(millis, 1000) if per_milli is None else millis * per_milli
        if target == TYPE_DATE:
            return Date.to_logical(Date.SCHEMA, millis // _MILLIS_PER_DAY)
        if target == TYPE_TIME:
            return Time.to_logical(Time.SCHEMA, millis % _MILLIS_PER_DAY)
        return Timestamp.to_logical(Timestamp.SCHEMA, millis)


def _date_to_raw(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return _timestamp_to_raw(value)
    if not isinstance(value, datetime.date):
        raise DataError(f"Expected Date to be a java.util.Date, but found {type_name(value)}")
    return Date.from_logical(Date.SCHEMA, value) * _MILLIS_PER_DAY


def _time_to_raw(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return _timestamp_to_raw(value) % _MILLIS_PER_DAY
    if not isinstance(value, datetime.time):
        raise DataError(f"Expected Time to be a java.util.Date, but found {type_name(value)}")
    return Time.from_logical(Time.SCHEMA, value)


def _timestamp_to_raw(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, datetime.date):
        return _date_to_raw(value)
    if isinstance(value, datetime.time):
        return _time_to_raw(value)
    raise DataError(f"Expected Timestamp to be a java.util.Date, but found {type_name(value)}")


def _type_from_schema(schema: Schema) -> str:
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is Type.STRING:
        return TYPE_STRING
    if schema.type is Type.INT64:
        return TYPE_UNIX
    raise ConnectError(f"Schema {schema} does not correspond to a known timestamp type format")


def _infer_type(value: Any) -> str:
    if isinstance(value, datetime.datetime):
        return TYPE_TIMESTAMP
    if isinstance(value, datetime.date):
        return TYPE_DATE
    if isinstance(value, datetime.time):
        return TYPE_TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataError(f"TimestampConverter does not support {type_name(value)} objects as timestamps")


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "TimestampConverter"]
