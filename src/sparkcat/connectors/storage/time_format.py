"""Joda-Time patterns (``path.format``) printed in Python, and Joda's ISO date-time parser
for string timestamps (``RecordFieldTimestampExtractor``).

Supported pattern letters: ``G`` era, ``C`` century, ``Y``/``y``/``x`` year (``yy``: two
digits), ``M`` month (3+: text), ``w`` week of weekyear, ``D`` day of year, ``d`` day of month,
``E`` day of week (text), ``e`` day of week (number), ``a`` halfday, ``H``/``k``/``h``/``K``
hours, ``m`` minute, ``s`` second, ``S`` fraction, ``Z`` offset, quoted literals (``''`` is a
quote). Text is English whatever ``locale`` says.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from sparkcat.api.errors import ConfigError, DataError

_Field = Callable[[datetime, int], str]


def _num(value: int, width: int) -> str:
    return str(value).zfill(width)


def _year(d: datetime, n: int) -> str:
    return _num(d.year % 100, 2) if n == 2 else _num(d.year, n)


def _month(d: datetime, n: int) -> str:
    if n >= 4:
        return d.strftime("%B")
    if n == 3:
        return d.strftime("%b")
    return _num(d.month, n)


def _weekday(d: datetime, n: int) -> str:
    return d.strftime("%A") if n >= 4 else d.strftime("%a")


def _fraction(d: datetime, n: int) -> str:
    return str(d.microsecond // 1000).zfill(3)[:n].ljust(n, "0")


def _offset(d: datetime, n: int) -> str:
    text = d.strftime("%z")
    return text[:3] + ":" + text[3:] if n == 2 else text


_FIELDS: dict[str, _Field] = {
    "G": lambda d, n: "AD",
    "C": lambda d, n: _num(d.year // 100, n),
    "Y": _year,
    "y": _year,
    "x": lambda d, n: _num(d.isocalendar()[0] % 100, 2) if n == 2 else _num(d.isocalendar()[0], n),
    "M": _month,
    "w": lambda d, n: _num(d.isocalendar()[1], n),
    "D": lambda d, n: _num(d.timetuple().tm_yday, n),
    "d": lambda d, n: _num(d.day, n),
    "E": _weekday,
    "e": lambda d, n: _num(d.isoweekday(), n),
    "a": lambda d, n: "AM" if d.hour < 12 else "PM",
    "H": lambda d, n: _num(d.hour, n),
    "k": lambda d, n: _num(d.hour or 24, n),
    "h": lambda d, n: _num(d.hour % 12 or 12, n),
    "K": lambda d, n: _num(d.hour % 12, n),
    "m": lambda d, n: _num(d.minute, n),
    "s": lambda d, n: _num(d.second, n),
    "S": _fraction,
    "Z": _offset,
}


class JodaFormat:
    """A compiled Joda ``DateTimeFormat`` pattern printing in one timezone."""

    __slots__ = ("_parts", "_zone", "pattern")

    def __init__(self, pattern: str, zone: ZoneInfo) -> None:
        self.pattern = pattern
        self._zone = zone
        self._parts = _compile(pattern)

    def format_ms(self, epoch_ms: int) -> str:
        moment = datetime.fromtimestamp(epoch_ms / 1000.0, self._zone)
        return "".join(
            part if isinstance(part, str) else part[0](moment, part[1]) for part in self._parts
        )


def _compile(pattern: str) -> list[str | tuple[_Field, int]]:
    parts: list[str | tuple[_Field, int]] = []
    i, size = 0, len(pattern)
    while i < size:
        char = pattern[i]
        if char == "'":
            end = i + 1
            literal = []
            while end < size:
                if pattern[end] == "'":
                    if end + 1 < size and pattern[end + 1] == "'":
                        literal.append("'")
                        end += 2
                        continue
                    break
                literal.append(pattern[end])
                end += 1
            parts.append("".join(literal) if end > i + 1 else "'")
            i = end + 1
        elif char.isalpha():
            run = i
            while run < size and pattern[run] == char:
                run += 1
            field = _FIELDS.get(char)
            if field is None:
                raise ConfigError(f"Illegal pattern component: {char} in path.format {pattern!r}")
            parts.append((field, run - i))
            i = run
        else:
            parts.append(char)
            i += 1
    return parts


def parse_iso_ms(text: str) -> int:
    """Epoch milliseconds of an ISO-8601 date-time (UTC when it carries no offset, as Joda's
    ``ISODateTimeFormat.dateTimeParser()`` with the default UTC zone)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise DataError(f"Could not parse timestamp {text!r} as ISO-8601") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo("UTC"))
    return int(moment.timestamp() * 1000)


__all__ = ["JodaFormat", "parse_iso_ms"]
