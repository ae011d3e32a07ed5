"""Connect logical types: :class:`Decimal`, :class:`Date`, :class:`Time`, :class:`Timestamp`.

Each maps a Python value onto the primitive it is carried as (Kafka's logical type classes):

====================  ==========  ===========================================================
logical type          carried as  Python value
====================  ==========  ===========================================================
Decimal (``scale``)   BYTES       ``decimal.Decimal``; bytes = big-endian two's complement
                                  of the unscaled value, minimal length
Date                  INT32       ``datetime.date``; days since 1970-01-01
Time                  INT32       ``datetime.time`` (naive, UTC); milliseconds since midnight
Timestamp             INT64       ``datetime.datetime`` (UTC-aware; naive is taken as UTC);
                                  milliseconds since the epoch
====================  ==========  ===========================================================

Private module; import the public names from :mod:`sparkcat.api.data`.
"""

from __future__ import annotations

import datetime
import decimal
from typing import ClassVar

from sparkcat.api._builder import SchemaBuilder
from sparkcat.api._schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
)
from sparkcat.api.errors import DataError

_UTC = datetime.UTC
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_MS = datetime.timedelta(milliseconds=1)
_MILLIS_PER_DAY = 24 * 60 * 60 * 1000


class Decimal:
    """Arbitrary-precision decimal with a fixed scale, carried as BYTES."""

    LOGICAL_NAME: ClassVar[str] = DECIMAL_LOGICAL_NAME
    SCALE_FIELD: ClassVar[str] = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes()
            .name(DECIMAL_LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(scale))
            .version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal) -> bytes:
        """The two's complement bytes of ``value``'s unscaled value; its scale must match."""
        schema_scale = _scale(schema)
        sign, digits, exponent = value.as_tuple()
        if not isinstance(exponent, int):
            raise DataError(f"Decimal value is not finite: {value}")
        if -exponent != schema_scale:
            raise DataError(
                "Decimal value has mismatching scale for given Decimal schema. "
                f"Schema has scale {schema_scale}, value has scale {-exponent}."
            )
        unscaled = int("".join(map(str, digits)) or "0")
        if sign:
            unscaled = -unscaled
        # Java's BigInteger.toByteArray: the fewest bytes that still hold the sign bit.
        bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> decimal.Decimal:
        """The decimal whose unscaled value ``value`` encodes, at the schema's scale."""
        scale = _scale(schema)
        if len(value) == 0:
            raise DataError("Invalid Decimal value: zero length byte array")
        unscaled = int.from_bytes(value, "big", signed=True)
        digits = tuple(int(d) for d in str(abs(unscaled)))
        return decimal.Decimal((1 if unscaled < 0 else 0, digits, -scale))


def _scale(schema: Schema) -> int:
    text = None if schema.parameters is None else schema.parameters.get(Decimal.SCALE_FIELD)
    if text is None:
        raise DataError("Invalid Decimal schema: scale parameter not found.")
    try:
        return int(text)
    except ValueError as e:
        raise DataError(f"Invalid scale parameter found in Decimal schema: {text}") from e


def _check_name(schema: Schema, name: str, what: str) -> None:
    if schema.name != name:
        raise DataError(f"Requested conversion of {what} object but the schema does not match.")


class Date:
    """A calendar date, carried as INT32 days since the epoch."""

    LOGICAL_NAME: ClassVar[str] = DATE_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(DATE_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.date) -> int:
        """Days since 1970-01-01; a ``datetime`` must be midnight UTC."""
        _check_name(schema, DATE_LOGICAL_NAME, "Date")
        if isinstance(value, datetime.datetime):
            utc = _as_utc(value)
            if utc.time() != datetime.time(0):
                raise DataError(
                    "Kafka Connect Date type should not have any time fields set to non-zero "
                    "values."
                )
            value = utc.date()
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.date:
        _check_name(schema, DATE_LOGICAL_NAME, "Date")
        return _EPOCH_DATE + datetime.timedelta(days=value)


class Time:
    """A time of day, carried as INT32 milliseconds since midnight (0 .. 86,399,999)."""

    LOGICAL_NAME: ClassVar[str] = TIME_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(TIME_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.time) -> int:
        """Milliseconds since midnight UTC (an aware time is shifted to UTC first)."""
        _check_name(schema, TIME_LOGICAL_NAME, "Time")
        millis = (
            (value.hour * 60 + value.minute) * 60 + value.second
        ) * 1000 + value.microsecond // 1000
        offset = value.utcoffset()
        if offset is not None:
            millis -= offset // _MS
        if not 0 <= millis < _MILLIS_PER_DAY:
            raise DataError(
                "Kafka Connect Time type should not have any date fields set to non-zero values."
            )
        return millis

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.time:
        """The naive time ``value`` ms after midnight (UTC)."""
        _check_name(schema, TIME_LOGICAL_NAME, "Time")
        if not 0 <= value < _MILLIS_PER_DAY:
            raise DataError(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        seconds, millis = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, millis * 1000)


class Timestamp:
    """An instant, carried as INT64 milliseconds since the epoch (UTC)."""

    LOGICAL_NAME: ClassVar[str] = TIMESTAMP_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(TIMESTAMP_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.datetime) -> int:
        """Milliseconds since the epoch (floored); a naive ``value`` is taken as UTC."""
        _check_name(schema, TIMESTAMP_LOGICAL_NAME, "Timestamp")
        return (_as_utc(value) - _EPOCH) // _MS

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.datetime:
        """The UTC-aware datetime ``value`` ms after the epoch."""
        _check_name(schema, TIMESTAMP_LOGICAL_NAME, "Timestamp")
        return _EPOCH + datetime.timedelta(milliseconds=value)


def _as_utc(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=_UTC)
    return value.astimezone(_UTC)


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()
