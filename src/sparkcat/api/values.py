"""Conversions between Connect values and their string forms (Kafka's ``Values``).

Used by :class:`~sparkcat.converters.simple_header.SimpleHeaderConverter` and by SMTs that
coerce values (Cast, InsertHeader). Behaviour follows Kafka's ``Values``:

* :func:`convert_to_string` writes strings raw, numbers and booleans as Java prints them,
  bytes as base64, lists as ``[a,b]``, maps and structs as ``{k:v}`` with embedded strings
  quoted and escaped, and dates/times/timestamps in ISO-8601 (``yyyy-MM-dd``,
  ``HH:mm:ss.SSS'Z'``, ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'``, chosen from the instant as Kafka does).
* :func:`parse_string` infers a schema: booleans, ``null``, the smallest integer type that
  fits, FLOAT32/FLOAT64/Decimal for other numbers, ISO temporal literals, ``[..]`` arrays and
  ``{..}`` maps with a common element schema, else the original text as a STRING.
* ``convert_to_<type>`` coerce a value to one Connect type, narrowing integers like a Java cast.

Every failure raises :class:`~sparkcat.api.errors.DataError`. Dates and times are in UTC
(Kafka uses the JVM's default zone, which Connect deployments normally set to UTC).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from typing import Any

from sparkcat.api._java_format import java_double_str, java_float_str, to_float32
from sparkcat.api.data import (
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError

MILLIS_PER_DAY = 24 * 60 * 60 * 1000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_BYTES = (bytes, bytearray, memoryview)
_NULL_REQUIRED = "Unable to convert a null value to a schema that requires a value"


def _unable(value: Any, target: object) -> DataError:
    return DataError(f"Unable to convert {value} ({type(value)}) to {target}")


# --- numbers -------------------------------------------------------------------------------


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing integer cast: keep the low ``bits`` bits, two's complement."""
    half = 1 << (bits - 1)
    return ((value + half) & ((1 << bits) - 1)) - half


def _float_to_long(value: float) -> int:
    """Java's ``(long) double``: truncate, NaN → 0, saturate at the long range."""
    if value != value:
        return 0
    if math.isinf(value):
        return (1 << 63) - 1 if value > 0 else -(1 << 63)
    return max(-(1 << 63), min((1 << 63) - 1, int(value)))


def _parse_big_decimal(text: str) -> decimal.Decimal | None:
    from sparkcat.api._values_parser import parse_big_decimal

    return parse_big_decimal(text)


def _temporal_number(value: Any) -> int | None:
    """Days, ms of day or epoch ms of a date, time or timestamp (as Kafka's ``fromLogical``)."""
    if isinstance(value, datetime.datetime):
        return _epoch_millis(value)
    if isinstance(value, datetime.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, datetime.time):
        return _millis_of_day(value)
    return None


def _as_long(value: Any, from_schema: Schema | None) -> int:
    if isinstance(value, bool):
        raise _unable(value, from_schema if from_schema is not None else "a number")
    if isinstance(value, int):
        return _wrap(value, 64)
    if isinstance(value, float):
        return _float_to_long(value)
    if isinstance(value, decimal.Decimal):
        return _wrap(int(value), 64) if value.is_finite() else 0
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is not None:
            return _wrap(int(parsed), 64)
    temporal = _temporal_number(value)
    if temporal is not None:
        return temporal
    raise _unable(value, from_schema if from_schema is not None else "a number")


def _as_double(value: Any, from_schema: Schema | None) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is not None:
            return float(parsed)
    return float(_as_long(value, from_schema))


def convert_to_boolean(schema: Schema | None, value: Any) -> bool | None:
    """``value`` as a boolean: booleans as is, ``"true"``/``"false"``, else number ≠ 0."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        parsed = parse_string(value)
        if isinstance(parsed.value, bool):
            return parsed.value
    return _as_long(value, schema) != 0


def convert_to_byte(schema: Schema | None, value: Any) -> int | None:
    """``value`` as an INT8 (wrapping like Java's ``(byte)`` cast)."""
    return None if value is None else _wrap(_as_long(value, schema), 8)


def convert_to_short(schema: Schema | None, value: Any) -> int | None:
    """``value`` as an INT16 (wrapping like Java's ``(short)`` cast)."""
    return None if value is None else _wrap(_as_long(value, schema), 16)


def convert_to_integer(schema: Schema | None, value: Any) -> int | None:
    """``value`` as an INT32 (wrapping like Java's ``(int)`` cast)."""
    return None if value is None else _wrap(_as_long(value, schema), 32)


def convert_to_long(schema: Schema | None, value: Any) -> int | None:
    """``value`` as an INT64."""
    return None if value is None else _as_long(value, schema)


def convert_to_float(schema: Schema | None, value: Any) -> float | None:
    """``value`` as a FLOAT32 (rounded to single precision, as a Python float)."""
    return None if value is None else to_float32(_as_double(value, schema))


def convert_to_double(schema: Schema | None, value: Any) -> float | None:
    """``value`` as a FLOAT64."""
    return None if value is None else _as_double(value, schema)


# --- strings -------------------------------------------------------------------------------


def _epoch_millis(value: datetime.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _millis_of_day(value: datetime.time) -> int:
    seconds = value.hour * 3600 + value.minute * 60 + value.second
    return seconds * 1000 + value.microsecond // 1000


def _format_instant(millis: int) -> str:
    """Kafka's ``dateFormatFor``: time of day below one day, a date at midnight, else both."""
    instant = _EPOCH + datetime.timedelta(milliseconds=millis)
    clock = f"{instant:%H:%M:%S}.{instant.microsecond // 1000:03d}Z"
    if millis < MILLIS_PER_DAY:
        return clock
    day = f"{instant.year:04d}-{instant.month:02d}-{instant.day:02d}"
    if millis % MILLIS_PER_DAY == 0:
        return day
    return f"{day}T{clock}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        is_float32 = schema is not None and schema.type is Type.FLOAT32
        out.append(java_float_str(value) if is_float32 else java_double_str(value))
    elif isinstance(value, decimal.Decimal):
        out.append(str(value))  # same scientific-notation rules as BigDecimal.toString
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, _BYTES):
        encoded = base64.b64encode(bytes(value)).decode("ascii")
        out.append(f'"{encoded}"' if embedded else encoded)
    elif isinstance(value, list | tuple):
        element_schema = _child(schema, Type.ARRAY, "value")
        out.append("[")
        for index, element in enumerate(value):
            if index:
                out.append(",")
            _append(out, element_schema, element, True)
        out.append("]")
    elif isinstance(value, dict):
        key_schema = _child(schema, Type.MAP, "key")
        value_schema = _child(schema, Type.MAP, "value")
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(",")
            _append(out, key_schema, key, True)
            out.append(":")
            _append(out, value_schema, item, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for index, field in enumerate(value.schema.fields):
            if index:
                out.append(",")
            _append(out, None, field.name, True)
            out.append(":")
            _append(out, field.schema, value.get(field), True)
        out.append("}")
    else:
        _append_temporal(out, value)


def _append_temporal(out: list[str], value: Any) -> None:
    if isinstance(value, datetime.datetime):
        out.append(_format_instant(_epoch_millis(value)))
    elif isinstance(value, datetime.date):
        out.append(_format_instant((value - _EPOCH_DATE).days * MILLIS_PER_DAY))
    elif isinstance(value, datetime.time):
        out.append(_format_instant(_millis_of_day(value)))
    else:
        raise DataError(
            f"Failed to serialize unexpected value type {type(value).__qualname__}: {value}"
        )


def _child(schema: Schema | None, expected: Type, which: str) -> Schema | None:
    if schema is None or schema.type is not expected:
        return None
    return schema.key_schema if which == "key" else schema.value_schema


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """``value`` in Kafka's string form (see the module docs); ``None`` for ``None``."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, schema, value, False)
    return "".join(out)


# --- containers ----------------------------------------------------------------------------


def _parsed_if_string(value: Any) -> Any:
    return parse_string(value).value if isinstance(value, str) else value


def convert_to_list(schema: Schema | None, value: Any) -> list[Any]:
    """``value`` as a list; strings are parsed (``"[1,2]"``)."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    converted = _parsed_if_string(value)
    if isinstance(converted, list):
        return converted
    raise _unable(converted, "Schema{ARRAY}")


def convert_to_map(schema: Schema | None, value: Any) -> dict[Any, Any]:
    """``value`` as a map; strings are parsed (``"{a:1}"``)."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    converted = _parsed_if_string(value)
    if isinstance(converted, dict):
        return converted
    raise _unable(converted, "Schema{MAP}")


def convert_to_struct(schema: Schema | None, value: Any) -> Struct:
    """``value`` if it is a Struct, else :class:`DataError`."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    if isinstance(value, Struct):
        return value
    raise _unable(value, "Schema{STRUCT}")


# --- logical types -------------------------------------------------------------------------


def convert_to_date(schema: Schema | None, value: Any) -> datetime.date:
    """``value`` as a Date: a date, a timestamp's day, a day count, or an ISO string."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    value = _parsed_if_string(value)
    if isinstance(value, datetime.datetime):
        return Date.to_logical(Date.SCHEMA, int(_epoch_millis(value) / MILLIS_PER_DAY))
    if isinstance(value, datetime.date):
        return value
    return Date.to_logical(Date.SCHEMA, _wrap(_as_long(value, schema), 32))


def convert_to_time(schema: Schema | None, value: Any) -> datetime.time:
    """``value`` as a Time: a time, a timestamp's time of day, ms of day, or an ISO string."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    value = _parsed_if_string(value)
    if isinstance(value, datetime.datetime):
        return Time.to_logical(Time.SCHEMA, _epoch_millis(value) % MILLIS_PER_DAY)
    if isinstance(value, datetime.time):
        return value
    return Time.to_logical(Time.SCHEMA, _wrap(_as_long(value, schema), 32))


def convert_to_timestamp(schema: Schema | None, value: Any) -> datetime.datetime:
    """``value`` as a Timestamp: a timestamp, a date's midnight, a time on 1970-01-01, epoch
    ms, or an ISO string."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    value = _parsed_if_string(value)
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
    if isinstance(value, datetime.date):
        return Timestamp.to_logical(Timestamp.SCHEMA, (value - _EPOCH_DATE).days * MILLIS_PER_DAY)
    return Timestamp.to_logical(Timestamp.SCHEMA, _as_long(value, schema))


def convert_to_decimal(schema: Schema | None, value: Any, scale: int) -> decimal.Decimal:
    """``value`` as a Decimal: decimals as is, bytes decoded with ``scale``, numbers via their
    double value, strings parsed."""
    if value is None:
        raise DataError(_NULL_REQUIRED)
    return _to_decimal(Decimal.schema(scale), value)


def _to_decimal(target: Schema, value: Any) -> decimal.Decimal:
    if isinstance(value, _BYTES):
        return Decimal.to_logical(target, bytes(value))
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        # Java's BigDecimal.valueOf(double): the double's shortest decimal form.
        return decimal.Decimal(java_double_str(float(value)))
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is not None:
            return parsed
    raise _unable(value, target)


# --- schema inference and conversion to a target schema --------------------------------------


def infer_schema(value: Any) -> Schema | None:
    """The schema Kafka would infer for ``value``, or ``None`` (also for empty containers)."""
    from sparkcat.api._values_parser import infer_schema as infer

    return infer(value)


def convert_to(to_schema: Schema, from_schema: Schema | None, value: Any) -> Any:
    """Convert ``value`` to ``to_schema`` (Kafka's ``Values.convertTo``)."""
    if value is None:
        if to_schema.optional:
            return None
        raise DataError(_NULL_REQUIRED)
    name = to_schema.name
    kind = to_schema.type
    if kind is Type.BYTES:
        if name == Decimal.LOGICAL_NAME:
            return _to_decimal(to_schema, value)
        if isinstance(value, _BYTES):
            return bytes(value)
        if isinstance(value, decimal.Decimal):
            return Decimal.from_logical(to_schema, value)
        raise _unable(value, to_schema)
    if kind is Type.INT32 and name == Date.LOGICAL_NAME:
        return convert_to_date(from_schema, value)
    if kind is Type.INT32 and name == Time.LOGICAL_NAME:
        return convert_to_time(from_schema, value)
    if kind is Type.INT64 and name == Timestamp.LOGICAL_NAME:
        return convert_to_timestamp(from_schema, value)
    if kind is Type.STRUCT:
        return convert_to_struct(to_schema, value)
    return _SIMPLE[kind](from_schema, value)


_SIMPLE: dict[Type, Any] = {
    Type.STRING: convert_to_string,
    Type.BOOLEAN: convert_to_boolean,
    Type.INT8: convert_to_byte,
    Type.INT16: convert_to_short,
    Type.INT32: convert_to_integer,
    Type.INT64: convert_to_long,
    Type.FLOAT32: convert_to_float,
    Type.FLOAT64: convert_to_double,
    Type.ARRAY: convert_to_list,
    Type.MAP: convert_to_map,
}


def parse_string(text: str | None) -> SchemaAndValue:
    """Infer a schema and value from ``text`` (see the module docs)."""
    if text is None:
        return SchemaAndValue(None, None)
    if not text:
        return SchemaAndValue(STRING_SCHEMA, text)
    from sparkcat.api._values_parser import ValueParser

    parsed = ValueParser(text).parse(False)
    return parsed if parsed is not None else SchemaAndValue(None, None)


__all__ = [
    "convert_to",
    "convert_to_boolean",
    "convert_to_byte",
    "convert_to_date",
    "convert_to_decimal",
    "convert_to_double",
    "convert_to_float",
    "convert_to_integer",
    "convert_to_list",
    "convert_to_long",
    "convert_to_map",
    "convert_to_short",
    "convert_to_string",
    "convert_to_struct",
    "convert_to_time",
    "convert_to_timestamp",
    "infer_schema",
    "parse_string",
]
