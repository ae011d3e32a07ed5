"""Column types to Connect schemas and values, as Debezium maps them.

A database connector describes each captured column as a :class:`Column` of one of the
generic ``KIND_*`` kinds (PostgreSQL's ``numeric(10,2)`` and MySQL's ``DECIMAL(10,2)`` are both
``decimal`` with precision 10 and scale 2) and hands this module plain Python values
(``int``, ``decimal.Decimal``, ``datetime.datetime``, ...). :func:`column_schema` and
:func:`value_converter` then apply ``decimal.handling.mode``, ``time.precision.mode`` and
``binary.handling.mode`` exactly as Debezium's ``JdbcValueConverters`` do, with Debezium's
semantic type names (``io.debezium.time.MicroTimestamp``, ``io.debezium.data.Json``, ...).
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sparkcat.api.data import Date as ConnectDate
from sparkcat.api.data import Decimal as ConnectDecimal
from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.data import Time as ConnectTime
from sparkcat.api.data import Timestamp as ConnectTimestamp

KIND_BOOLEAN = "boolean"
KIND_INT16 = "int16"
KIND_INT32 = "int32"
KIND_INT64 = "int64"
KIND_FLOAT32 = "float32"
KIND_FLOAT64 = "float64"
KIND_DECIMAL = "decimal"
"""``precision`` ``None`` means a NUMERIC without a declared precision (variable scale)."""
KIND_MONEY = "money"
"""A decimal with the fixed ``scale`` (``money.fraction.digits``) and no precision."""
KIND_STRING = "string"
KIND_BYTES = "bytes"
KIND_DATE = "date"
KIND_TIME = "time"
"""``precision``: fractional second digits (``None``: 6)."""
KIND_TIMESTAMP = "timestamp"
KIND_TIMESTAMP_TZ = "timestamptz"
KIND_TIME_TZ = "timetz"
KIND_UUID = "uuid"
KIND_JSON = "json"
KIND_XML = "xml"
KIND_INTERVAL = "interval"
"""Values are ``int`` microseconds (``interval.handling.mode=numeric``)."""
KIND_BITS = "bits"
"""``precision``: the number of bits (more than 1; ``bit(1)`` is a boolean)."""
KIND_ENUM = "enum"
"""MySQL's ENUM: a string whose schema lists ``Column.allowed``."""
KIND_ENUM_SET = "enumset"
"""MySQL's SET: values are the chosen members joined by commas, in declaration order."""
KIND_YEAR = "year"

DEBEZIUM_DATE = "io.debezium.time.Date"
DEBEZIUM_TIME = "io.debezium.time.Time"
DEBEZIUM_MICRO_TIME = "io.debezium.time.MicroTime"
DEBEZIUM_TIMESTAMP = "io.debezium.time.Timestamp"
DEBEZIUM_MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
DEBEZIUM_ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
DEBEZIUM_ZONED_TIME = "io.debezium.time.ZonedTime"
DEBEZIUM_MICRO_DURATION = "io.debezium.time.MicroDuration"
DEBEZIUM_VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
DEBEZIUM_UUID = "io.debezium.data.Uuid"
DEBEZIUM_JSON = "io.debezium.data.Json"
DEBEZIUM_XML = "io.debezium.data.Xml"
DEBEZIUM_BITS = "io.debezium.data.Bits"
DEBEZIUM_ENUM = "io.debezium.data.Enum"
DEBEZIUM_ENUM_SET = "io.debezium.data.EnumSet"
DEBEZIUM_YEAR = "io.debezium.time.Year"
PRECISION_PARAMETER = "connect.decimal.precision"

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_UTC = datetime.UTC
_US = datetime.timedelta(microseconds=1)

Converter = Callable[[Any], Any]
"""Turns a non-null database value into the Connect value of the column's schema."""


@dataclass(frozen=True, slots=True)
class Column:
    """One captured column, in the database's order."""

    name: str
    kind: str
    optional: bool = True
    precision: int | None = None
    scale: int | None = None
    type_name: str = ""
    allowed: tuple[str, ...] = ()
    """The members of an ENUM or SET column, in declaration order."""


@dataclass(frozen=True, slots=True)
class TypeModes:
    """The three mapping modes, lower-cased config values."""

    decimal: str = "precise"
    time_precision: str = "adaptive"
    binary: str = "bytes"


def _named(builder: SchemaBuilder, name: str) -> SchemaBuilder:
    return builder.name(name).version(1)


VARIABLE_SCALE_DECIMAL_SCHEMA = (
    _named(SchemaBuilder.struct(), DEBEZIUM_VARIABLE_SCALE_DECIMAL)
    .doc("Variable scaled decimal")
    .field("scale", SchemaBuilder.int32().build())
    .field("value", SchemaBuilder.bytes().build())
    .build()
)


def column_schema(column: Column, modes: TypeModes) -> Schema:
    """The Connect schema of ``column`` (optional when the column is nullable)."""
    builder = _schema_builder(column, modes)
    if column.optional:
        builder.optional()
    return builder.build()


def _schema_builder(column: Column, modes: TypeModes) -> SchemaBuilder:
    kind = column.kind
    simple = _SIMPLE.get(kind)
    if simple is not None:
        return simple()
    if kind in (KIND_DECIMAL, KIND_MONEY):
        return _decimal_builder(column, modes)
    if kind == KIND_BYTES:
        return SchemaBuilder.bytes() if modes.binary == "bytes" else SchemaBuilder.string()
    if kind in _TEMPORAL:
        return _temporal_builder(column, modes)
    if kind == KIND_BITS:
        return _named(SchemaBuilder.bytes(), DEBEZIUM_BITS).parameter(
            "length", str(column.precision or 1)
        )
    if kind in (KIND_ENUM, KIND_ENUM_SET):
        name = DEBEZIUM_ENUM if kind == KIND_ENUM else DEBEZIUM_ENUM_SET
        return _named(SchemaBuilder.string(), name).parameter("allowed", ",".join(column.allowed))
    if kind == KIND_YEAR:
        return _named(SchemaBuilder.int32(), DEBEZIUM_YEAR)
    return SchemaBuilder.string()


_SIMPLE: dict[str, Callable[[], SchemaBuilder]] = {
    KIND_BOOLEAN: SchemaBuilder.boolean,
    KIND_INT16: SchemaBuilder.int16,
    KIND_INT32: SchemaBuilder.int32,
    KIND_INT64: SchemaBuilder.int64,
    KIND_FLOAT32: SchemaBuilder.float32,
    KIND_FLOAT64: SchemaBuilder.float64,
    KIND_STRING: SchemaBuilder.string,
    KIND_UUID: lambda: _named(SchemaBuilder.string(), DEBEZIUM_UUID),
    KIND_JSON: lambda: _named(SchemaBuilder.string(), DEBEZIUM_JSON),
    KIND_XML: lambda: _named(SchemaBuilder.string(), DEBEZIUM_XML),
    KIND_INTERVAL: lambda: _named(SchemaBuilder.int64(), DEBEZIUM_MICRO_DURATION),
    KIND_TIMESTAMP_TZ: lambda: _named(SchemaBuilder.string(), DEBEZIUM_ZONED_TIMESTAMP),
    KIND_TIME_TZ: lambda: _named(SchemaBuilder.string(), DEBEZIUM_ZONED_TIME),
}
_TEMPORAL = (KIND_DATE, KIND_TIME, KIND_TIMESTAMP)


def _decimal_builder(column: Column, modes: TypeModes) -> SchemaBuilder:
    if modes.decimal == "double":
        return SchemaBuilder.float64()
    if modes.decimal == "string":
        return SchemaBuilder.string()
    if column.kind == KIND_MONEY:
        return ConnectDecimal.builder(column.scale or 0)
    if column.precision is None:
        builder = SchemaBuilder.struct().name(DEBEZIUM_VARIABLE_SCALE_DECIMAL).version(1)
        builder.doc("Variable scaled decimal")
        for field in VARIABLE_SCALE_DECIMAL_SCHEMA.fields:
            builder.field(field.name, field.schema)
        return builder
    return ConnectDecimal.builder(column.scale or 0).parameter(
        PRECISION_PARAMETER, str(column.precision)
    )


def _fraction_digits(column: Column) -> int:
    return 6 if column.precision is None else column.precision


def _temporal_builder(column: Column, modes: TypeModes) -> SchemaBuilder:
    connect = modes.time_precision == "connect"
    if column.kind == KIND_DATE:
        return ConnectDate.builder() if connect else _named(SchemaBuilder.int32(), DEBEZIUM_DATE)
    millis = _fraction_digits(column) <= 3
    if column.kind == KIND_TIME:
        if connect:
            return ConnectTime.builder()
        if millis and modes.time_precision == "adaptive":
            return _named(SchemaBuilder.int32(), DEBEZIUM_TIME)
        return _named(SchemaBuilder.int64(), DEBEZIUM_MICRO_TIME)
    if connect:
        return ConnectTimestamp.builder()
    name = DEBEZIUM_TIMESTAMP if millis else DEBEZIUM_MICRO_TIMESTAMP
    return _named(SchemaBuilder.int64(), name)


# ----------------------------------------------------------------------------- values
def value_converter(column: Column, schema: Schema, modes: TypeModes) -> Converter:
    """A function from the database's Python value of ``column`` to its Connect value."""
    kind = column.kind
    if kind in (KIND_DECIMAL, KIND_MONEY):
        return _decimal_converter(column, schema, modes)
    if kind == KIND_BYTES:
        return _BINARY[modes.binary]
    if kind == KIND_DATE:
        return _identity if schema.name == ConnectDate.LOGICAL_NAME else _epoch_days
    if kind == KIND_TIME:
        return _time_converter(schema)
    if kind == KIND_TIMESTAMP:
        return _timestamp_converter(schema)
    if kind == KIND_TIMESTAMP_TZ:
        return zoned_timestamp
    if kind == KIND_TIME_TZ:
        return zoned_time
    if kind == KIND_BITS:
        return _bits
    if kind == KIND_YEAR:
        return int
    if kind == KIND_ENUM_SET:
        return lambda v: _enum_set(column.allowed, v)
    if kind == KIND_STRING or kind not in _SIMPLE:
        return str
    if kind in (KIND_FLOAT32, KIND_FLOAT64):
        return float
    if kind == KIND_BOOLEAN:
        return bool
    if kind in (KIND_INT16, KIND_INT32, KIND_INT64, KIND_INTERVAL):
        return int
    return str


def _identity(value: Any) -> Any:
    return value


def _decimal_converter(column: Column, schema: Schema, modes: TypeModes) -> Converter:
    if modes.decimal == "double":
        return float
    if modes.decimal == "string":
        return lambda v: format(decimal.Decimal(v), "f")
    if schema.name == DEBEZIUM_VARIABLE_SCALE_DECIMAL:
        return lambda v: variable_scale_decimal(schema, decimal.Decimal(v))
    exponent = decimal.Decimal(1).scaleb(-(column.scale or 0))
    return lambda v: decimal.Decimal(v).quantize(exponent)


def variable_scale_decimal(schema: Schema, value: decimal.Decimal) -> Struct:
    """Debezium's ``VariableScaleDecimal``: the scale and the unscaled two's complement."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int), "NaN and infinities have no variable-scale form"
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    length = max(1, (unscaled.bit_length() + 8) // 8)
    struct = Struct(schema)
    struct.put("scale", -exponent)
    struct.put("value", unscaled.to_bytes(length, "big", signed=True))
    return struct


def _epoch_days(value: datetime.date) -> int:
    return (value - _EPOCH_DATE).days


def _micros_of_day(value: datetime.time | datetime.timedelta) -> int:
    if isinstance(value, datetime.timedelta):
        return value // _US
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (value.microsecond)


def _time_converter(schema: Schema) -> Converter:
    if schema.name == ConnectTime.LOGICAL_NAME:
        return _as_time
    if schema.name == DEBEZIUM_TIME:
        return lambda v: _micros_of_day(v) // 1000
    return _micros_of_day


def _as_time(value: datetime.time | datetime.timedelta) -> datetime.time:
    if isinstance(value, datetime.time):
        return value
    micros = value // _US
    return (datetime.datetime.min + datetime.timedelta(microseconds=micros)).time()


def _epoch_micros(value: datetime.datetime) -> int:
    naive = value if value.tzinfo is None else value.astimezone(_UTC).replace(tzinfo=None)
    return (naive - _EPOCH) // _US


def _timestamp_converter(schema: Schema) -> Converter:
    if schema.name == ConnectTimestamp.LOGICAL_NAME:
        return _identity
    if schema.name == DEBEZIUM_TIMESTAMP:
        return lambda v: _epoch_micros(v) // 1000
    return _epoch_micros


def _iso_fraction(micros: int) -> str:
    # java.time's ISO formatters print the fraction with as few digits as it needs.
    return f".{micros:06d}".rstrip("0") if micros else ""


def zoned_timestamp(value: datetime.datetime) -> str:
    """Debezium's ``ZonedTimestamp`` text: ISO-8601 in UTC, ``Z`` suffix."""
    utc = value.astimezone(_UTC) if value.tzinfo is not None else value
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + _iso_fraction(utc.microsecond) + "Z"


def zoned_time(value: datetime.time) -> str:
    """Debezium's ``ZonedTime`` text: the time in UTC, ``Z`` suffix."""
    offset = value.utcoffset() or datetime.timedelta(0)
    shifted = datetime.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None)) - offset
    return shifted.strftime("%H:%M:%S") + _iso_fraction(shifted.microsecond) + "Z"


def _bits(value: Any) -> bytes:
    """A bit string (``'0101'``) or ``int`` as Debezium's little-endian ``BitSet`` bytes."""
    number = int(value, 2) if isinstance(value, str) else int(value)
    length = max(1, (number.bit_length() + 7) // 8)
    return number.to_bytes(length, "little")


def _enum_set(allowed: tuple[str, ...], value: Any) -> str:
    """A SET value (a set of members, or their comma-joined text) in declaration order."""
    chosen = set(value.split(",")) if isinstance(value, str) else set(value)
    return ",".join(m for m in allowed if m in chosen)


_BINARY: dict[str, Converter] = {
    "bytes": bytes,
    "base64": lambda v: base64.b64encode(bytes(v)).decode("ascii"),
    "base64-url-safe": lambda v: base64.urlsafe_b64encode(bytes(v)).decode("ascii"),
    "hex": lambda v: bytes(v).hex(),
}


__all__ = [
    "VARIABLE_SCALE_DECIMAL_SCHEMA",
    "Column",
    "Converter",
    "TypeModes",
    "column_schema",
    "value_converter",
    "variable_scale_decimal",
    "zoned_time",
    "zoned_timestamp",
]
