"""PostgreSQL column types: a type OID and modifier to a :class:`Column`, and the text form of
a value (what ``pgoutput`` sends, and what the snapshot reads) to a Python value.

The sessions set ``DateStyle=ISO``, ``IntervalStyle=iso_8601`` and ``lc_monetary=C`` so the
text forms parsed here are the same whatever the server's defaults.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable
from typing import Any

from sparkcat.connectors.debezium import types as t

SESSION_OPTIONS = "-c DateStyle=ISO -c IntervalStyle=iso_8601 -c lc_monetary=C -c TimeZone=UTC"

BOOL, BYTEA, CHAR, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 18, 19, 20, 21, 23, 25, 26
JSON, XML, FLOAT4, FLOAT8, MONEY, BPCHAR, VARCHAR = 114, 142, 700, 701, 790, 1042, 1043
DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL, TIMETZ = 1082, 1083, 1114, 1184, 1186, 1266
BIT, VARBIT, NUMERIC, UUID, JSONB = 1560, 1562, 1700, 2950, 3802

_KINDS = {
    BOOL: t.KIND_BOOLEAN, BYTEA: t.KIND_BYTES, CHAR: t.KIND_STRING, NAME: t.KIND_STRING,
    INT8: t.KIND_INT64, INT2: t.KIND_INT16, INT4: t.KIND_INT32, TEXT: t.KIND_STRING,
    OID: t.KIND_INT64, JSON: t.KIND_JSON, JSONB: t.KIND_JSON, XML: t.KIND_XML,
    FLOAT4: t.KIND_FLOAT32, FLOAT8: t.KIND_FLOAT64, MONEY: t.KIND_MONEY,
    BPCHAR: t.KIND_STRING, VARCHAR: t.KIND_STRING, DATE: t.KIND_DATE, TIME: t.KIND_TIME,
    TIMESTAMP: t.KIND_TIMESTAMP, TIMESTAMPTZ: t.KIND_TIMESTAMP_TZ, TIMETZ: t.KIND_TIME_TZ,
    INTERVAL: t.KIND_INTERVAL, NUMERIC: t.KIND_DECIMAL, UUID: t.KIND_UUID,
    BIT: t.KIND_BITS, VARBIT: t.KIND_BITS,
}  # fmt: skip

KNOWN_OIDS = tuple(_KINDS)


def column(
    name: str, type_oid: int, modifier: int, optional: bool, money_digits: int = 2
) -> t.Column:
    """The generic description of a column of type ``type_oid(modifier)``."""
    kind = _KINDS.get(type_oid, t.KIND_STRING)
    precision: int | None = None
    scale: int | None = None
    if kind == t.KIND_DECIMAL and modifier >= 4:
        precision, scale = ((modifier - 4) >> 16) & 0xFFFF, (modifier - 4) & 0xFFFF
    elif kind in (t.KIND_TIME, t.KIND_TIMESTAMP, t.KIND_TIME_TZ, t.KIND_TIMESTAMP_TZ):
        precision = modifier if modifier >= 0 else None
    elif kind == t.KIND_MONEY:
        scale = money_digits
    elif kind == t.KIND_BITS:
        precision = modifier if modifier > 0 else None
        if type_oid == BIT and precision in (None, 1):
            kind = t.KIND_BOOLEAN
    return t.Column(name, kind, optional, precision, scale, str(type_oid))


def parser(col: t.Column) -> Callable[[str], Any]:
    """Text form → the Python value :mod:`~sparkcat.connectors.debezium.types` expects."""
    kind = col.kind
    if kind == t.KIND_BOOLEAN:
        return _bool
    return _PARSERS.get(kind, str)


def _bool(text: str) -> bool:
    return text in ("t", "true", "1")


def _bytea(text: str) -> bytes:
    if text.startswith("\\x"):
        return bytes.fromhex(text[2:])
    return text.encode("latin-1").decode("unicode_escape").encode("latin-1")


def _money(text: str) -> decimal.Decimal:
    negative = text.startswith("-") or text.startswith("(")
    digits = re.sub(r"[^0-9.]", "", text)
    value = decimal.Decimal(digits)
    return -value if negative else value


def _timestamptz(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(_full_offset(text))


def _timetz(text: str) -> datetime.time:
    return datetime.time.fromisoformat(_full_offset(text))


def _full_offset(text: str) -> str:
    # PostgreSQL prints whole-hour offsets as "+02"; fromisoformat wants "+02:00".
    match = re.search(r"([+-]\d\d)(:?\d\d)?(:?\d\d)?$", text)
    if match and match.group(2) is None:
        return text + ":00"
    return text


_INTERVAL = re.compile(
    r"^(-)?P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?$"
)
_DAYS_PER_MONTH = decimal.Decimal("365.25") / 12


def _interval(text: str) -> int:
    """ISO-8601 interval → microseconds, with Debezium's average month (365.25 / 12 days)."""
    match = _INTERVAL.match(text)
    if match is None:
        raise ValueError(f"unexpected interval text {text!r}")
    sign, years, months, days, hours, minutes, seconds = match.groups()
    total_months = int(years or 0) * 12 + int(months or 0)
    micros = decimal.Decimal(total_months) * _DAYS_PER_MONTH * 86_400_000_000
    micros += int(days or 0) * 86_400_000_000
    micros += (int(hours or 0) * 60 + int(minutes or 0)) * 60_000_000
    micros += decimal.Decimal(seconds or 0) * 1_000_000
    value = int(micros)
    return -value if sign else value


_PARSERS: dict[str, Callable[[str], Any]] = {
    t.KIND_INT16: int,
    t.KIND_INT32: int,
    t.KIND_INT64: int,
    t.KIND_FLOAT32: float,
    t.KIND_FLOAT64: float,
    t.KIND_DECIMAL: decimal.Decimal,
    t.KIND_MONEY: _money,
    t.KIND_BYTES: _bytea,
    t.KIND_DATE: datetime.date.fromisoformat,
    t.KIND_TIME: datetime.time.fromisoformat,
    t.KIND_TIMESTAMP: datetime.datetime.fromisoformat,
    t.KIND_TIMESTAMP_TZ: _timestamptz,
    t.KIND_TIME_TZ: _timetz,
    t.KIND_INTERVAL: _interval,
}


__all__ = ["KNOWN_OIDS", "SESSION_OPTIONS", "column", "parser"]
