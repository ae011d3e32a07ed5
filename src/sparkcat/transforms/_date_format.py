"""Java ``SimpleDateFormat`` patterns, in UTC, for TimestampConverter and TimestampRouter.

The pattern is split into Java's tokens (runs of one letter, ``'quoted'`` text, ``''`` for a
quote) and each supported letter is formatted/parsed directly, which keeps Java's semantics where
``strftime`` has no equivalent (``S`` is milliseconds padded to the run length, ``yy`` a two-digit
year, abutting numeric fields such as ``yyyyMMdd`` parse by width).

Supported letters: ``y`` year, ``M`` month (number, ``MMM`` short name, ``MMMM`` full name),
``d`` day of month, ``D`` day of year, ``E`` day name, ``u`` day number of week (1 = Monday),
``a`` AM/PM, ``H`` hour 0-23, ``k`` hour 1-24, ``K`` hour 0-11, ``h`` hour 1-12, ``m`` minute,
``s`` second, ``S`` millisecond, ``z`` zone name, ``Z`` RFC 822 offset, ``X`` ISO 8601 offset.
Formatting always renders UTC (``z`` → ``UTC``, ``Z`` → ``+0000``, ``X`` → ``Z``).
Not supported (:class:`ValueError` when the pattern is compiled): ``G`` era, ``Y`` week year,
``w``/``W`` week of year/month, ``F`` day of week in month, ``L`` stand-alone month. Letters Java
rejects are rejected too. Parsing is lenient like Java's default (``2024-13-01`` rolls over into
2025) and, like ``DateFormat.parse(String)``, ignores text after the pattern.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache

_JAVA_LETTERS = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
_UNSUPPORTED = frozenset("GYwWFL")
_NUMERIC = frozenset("yMdDuHkKhmsS")
_MONTHS = [calendar.month_name[i] for i in range(1, 13)]
_DAYS = [calendar.day_name[i] for i in range(7)]  # Monday first
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Token = tuple[str, int]  # (letter, run length); letter "" means literal text in the count slot


def _tokenize(pattern: str) -> list[tuple[str, int | str]]:
    tokens: list[tuple[str, int | str]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(("", "'"))
                i += 2
                continue
            end = i + 1
            text: list[str] = []
            while True:
                if end >= n:
                    raise ValueError(f"Unterminated quote in pattern: {pattern}")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            tokens.append(("", "".join(text)))
            i = end + 1
        elif c.isascii() and c.isalpha():
            if c not in _JAVA_LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            if c in _UNSUPPORTED:
                raise ValueError(f"Pattern letter '{c}' is not supported")
            run = i
            while run < n and pattern[run] == c:
                run += 1
            tokens.append((c, run - i))
            i = run
        else:
            tokens.append(("", c))
            i += 1
    return tokens


def _pad(number: int, width: int) -> str:
    return str(number).zfill(width)


def _format_token(letter: str, count: int, dt: datetime) -> str:
    simple: dict[str, int] = {
        "d": dt.day,
        "D": dt.timetuple().tm_yday,
        "u": dt.isoweekday(),
        "H": dt.hour,
        "k": dt.hour or 24,
        "K": dt.hour % 12,
        "h": dt.hour % 12 or 12,
        "m": dt.minute,
        "s": dt.second,
        "S": dt.microsecond // 1000,
    }
    if letter in simple:
        return _pad(simple[letter], count)
    if letter == "y":
        return _pad(dt.year % 100, 2) if count == 2 else _pad(dt.year, count)
    if letter == "M":
        if count >= 4:
            return _MONTHS[dt.month - 1]
        return _MONTHS[dt.month - 1][:3] if count == 3 else _pad(dt.month, count)
    if letter == "E":
        name = _DAYS[dt.weekday()]
        return name if count >= 4 else name[:3]
    if letter == "a":
        return "AM" if dt.hour < 12 else "PM"
    if letter == "z":
        return "UTC" if count < 4 else "Coordinated Universal Time"
    if letter == "Z":
        return "+0000"
    return "Z"  # X


class JavaDateFormat:
    """A compiled ``SimpleDateFormat`` pattern working in UTC on epoch milliseconds."""

    __slots__ = ("_regex", "_setters", "_tokens", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        self._regex, self._setters = self._parser()

    def format(self, epoch_millis: int) -> str:
        """Render ``epoch_millis`` (UTC)."""
        dt = _EPOCH + timedelta(milliseconds=epoch_millis)
        return "".join(
            str(arg) if not letter else _format_token(letter, int(arg), dt)
            for letter, arg in self._tokens
        )

    def parse(self, text: str) -> int:
        """Epoch milliseconds for ``text``; raises ``ValueError`` if it does not match."""
        m = self._regex.match(text)
        if m is None:
            raise ValueError(f'Unparseable date: "{text}"')
        fields: dict[str, int] = {}
        for group, setter in self._setters:
            setter(fields, m.group(group))
        return _to_millis(fields)

    def _parser(
        self,
    ) -> tuple[re.Pattern[str], list[tuple[str, Callable[[dict[str, int], str], None]]]]:
        parts: list[str] = []
        setters: list[tuple[str, Callable[[dict[str, int], str], None]]] = []
        tokens = self._tokens
        for index, (letter, arg) in enumerate(tokens):
            if not letter:
                parts.append(re.escape(str(arg)))
                continue
            count = int(arg)
            group = f"g{index}"
            following = tokens[index + 1][0] if index + 1 < len(tokens) else ""
            abutting = letter in _NUMERIC and following in _NUMERIC and following != ""
            regex, setter = _field_parser(letter, count, abutting)
            parts.append(f"(?P<{group}>{regex})")
            setters.append((group, setter))
        return re.compile("".join(parts), re.IGNORECASE), setters


def _number(
    key: str, transform: Callable[[int], int] = lambda v: v
) -> Callable[[dict[str, int], str], None]:
    def set_field(fields: dict[str, int], text: str) -> None:
        fields[key] = transform(int(text))

    return set_field


def _two_digit_year(value: int) -> int:
    # Java resolves two-digit years into the century starting 80 years before now.
    now = datetime.now(UTC).year
    start = now - 80
    year = start - start % 100 + value
    return year + 100 if year < start else year


def _field_parser(
    letter: str, count: int, abutting: bool
) -> tuple[str, Callable[[dict[str, int], str], None]]:
    digits = rf"\d{{{count}}}" if abutting else r"[+-]?\d+"
    if letter == "y":
        if count == 2:
            return (r"\d{2}" if abutting else r"\d+"), _number(
                "year", lambda v: _two_digit_year(v) if v < 100 else v
            )
        return digits, _number("year")
    if letter == "M" and count >= 3:
        names = "|".join(_MONTHS + [m[:3] for m in _MONTHS])
        return names, _named("month", [m.lower() for m in _MONTHS])
    if letter == "E":
        names = "|".join(_DAYS + [d[:3] for d in _DAYS])
        return names, lambda fields, text: None  # the day name does not determine the date
    if letter == "a":
        return "AM|PM", lambda fields, text: fields.__setitem__("pm", int(text.upper() == "PM"))
    if letter in "zZX":
        return r"Z|UTC|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}(?::?\d{2})?", _zone
    key = {
        "M": "month",
        "d": "day",
        "D": "yday",
        "u": "ignored",
        "H": "hour",
        "k": "hour24",
        "K": "hour12",
        "h": "hour12h",
        "m": "minute",
        "s": "second",
        "S": "milli",
    }[letter]
    return digits, _number(key)


def _named(key: str, names: list[str]) -> Callable[[dict[str, int], str], None]:
    def set_field(fields: dict[str, int], text: str) -> None:
        lowered = text.lower()
        for i, name in enumerate(names):
            if name.startswith(lowered):
                fields[key] = i + 1
                return

    return set_field


def _zone(fields: dict[str, int], text: str) -> None:
    upper = text.upper()
    if upper in ("Z", "UTC", "GMT"):
        fields["offset"] = 0
        return
    sign_at = max(upper.find("+"), upper.find("-"))
    body = upper[sign_at + 1 :].replace(":", "")
    hours = int(body[:-2]) if len(body) > 2 else int(body)
    minutes = int(body[-2:]) if len(body) > 2 else 0
    offset = hours * 60 + minutes
    fields["offset"] = -offset if upper[sign_at] == "-" else offset


def _to_millis(f: dict[str, int]) -> int:
    hour = f.get("hour", 0)
    if "hour24" in f:
        hour = f["hour24"] % 24
    elif "hour12" in f or "hour12h" in f:
        hour = f["hour12"] if "hour12" in f else f["hour12h"] % 12
        hour += 12 * f.get("pm", 0)
    elif "pm" in f and hour < 12:
        hour += 12 * f["pm"]
    year = f.get("year", 1970)
    month = f.get("month", 1) - 1
    year += month // 12
    start = datetime(year, month % 12 + 1, 1, tzinfo=UTC)
    days = f["yday"] - 1 if "yday" in f and "day" not in f else f.get("day", 1) - 1
    delta = timedelta(
        days=days,
        hours=hour,
        minutes=f.get("minute", 0) - f.get("offset", 0),
        seconds=f.get("second", 0),
        milliseconds=f.get("milli", 0),
    )
    return (start + delta - _EPOCH) // timedelta(milliseconds=1)


@lru_cache(maxsize=64)
def java_date_format(pattern: str) -> JavaDateFormat:
    """A compiled (cached) ``SimpleDateFormat`` pattern; ``ValueError`` if it is invalid or
    uses an unsupported letter."""
    return JavaDateFormat(pattern)


__all__ = ["JavaDateFormat", "java_date_format"]
