"""Java ``.properties`` files, read as ``java.util.Properties.load`` reads them.

Kafka's tools read worker and connector configs with ``Properties.load``; users bring those
files unchanged, so the syntax is the same:

* natural lines end with ``\\n``, ``\\r\\n`` or ``\\r``; leading whitespace (space, tab,
  form feed) is skipped; blank lines are ignored;
* a line whose first non-whitespace character is ``#`` or ``!`` is a comment (only at the
  start of a logical line: a continuation line is never a comment);
* a line ending in an odd number of backslashes continues on the next natural line, whose
  leading whitespace is dropped;
* the key ends at the first unescaped ``=``, ``:`` or whitespace; whitespace around the
  separator is skipped, and one ``=`` or ``:`` may follow whitespace;
* escapes ``\\t \\n \\r \\f \\uXXXX``; a backslash before any other character stands for that
  character (``\\=``, ``\\:``, ``\\ ``, ``\\\\``);
* a key given twice keeps its last value.

One difference: files are decoded as UTF-8 (``Properties.load(InputStream)`` uses ISO-8859-1);
ASCII files, the usual case, read the same either way.
"""

from __future__ import annotations

import re
from pathlib import Path

from sparkcat.api.errors import ConfigError

_NEWLINE = re.compile(r"\r\n|\r|\n")
_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[str]:
    """Join continued natural lines; drop blank and comment lines."""
    lines: list[str] = []
    pending: str | None = None
    for natural in _NEWLINE.split(text):
        stripped = natural.lstrip(_WHITESPACE)
        if pending is None:
            if not stripped or stripped[0] in "#!":
                continue
            current = stripped
        else:
            current = pending + stripped
        trailing = len(current) - len(current.rstrip("\\"))
        if trailing % 2 == 1:
            pending = current[:-1]
            continue
        pending = None
        lines.append(current)
    if pending is not None and pending:
        lines.append(pending)
    return lines


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if char != "\\" or i >= len(text):
            out.append(char)
            continue
        char = text[i]
        i += 1
        if char == "u":
            digits = text[i : i + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(char, char))
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    """Split a logical line into its raw (still escaped) key and value."""
    key_end = len(line)
    value_start = len(line)
    has_separator = False
    backslash = False
    for i, char in enumerate(line):
        if char in "=:" and not backslash:
            key_end, value_start, has_separator = i, i + 1, True
            break
        if char in _WHITESPACE and not backslash:
            key_end, value_start = i, i + 1
            break
        backslash = (char == "\\") and not backslash
    while value_start < len(line):
        char = line[value_start]
        if char in _WHITESPACE:
            value_start += 1
        elif not has_separator and char in "=:":
            has_separator = True
            value_start += 1
        else:
            break
    return line[:key_end], line[value_start:]


def parse_properties(text: str) -> dict[str, str]:
    """The key/value pairs of a ``.properties`` text, in file order (last duplicate wins).

    Raises :class:`ConfigError` for a malformed ``\\uXXXX`` escape.
    """
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        result[_unescape(key)] = _unescape(value)
    return result


def load_properties(path: str | Path) -> dict[str, str]:
    """Read and parse a ``.properties`` file (UTF-8). Raises ``OSError`` if unreadable."""
    return parse_properties(Path(path).read_text(encoding="utf-8"))


__all__ = ["load_properties", "parse_properties"]
