"""Java regular expressions and replacement strings, as Kafka's SMTs and predicates use them.

Java's and Python's regex dialects agree on the common constructs. Translated here: named groups
``(?<name>...)`` become ``(?P<name>...)`` and ``\\p{Alpha}``-style POSIX classes their ASCII
sets; replacement strings (``$1``, ``${name}``, ``\\$`` escapes, Java's ``Matcher`` rules) are
parsed into a function of the match. Not translated (``re.error``): other ``\\p{...}`` Unicode
classes and Java-only flags. Matching with ``matches()`` semantics is ``pattern.fullmatch``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
}
_TOKEN = re.compile(r"\\\\|\\p\{(\w+)\}|\\P\{(\w+)\}|\(\?<([A-Za-z][A-Za-z0-9]*)>|\[|\]|\\.")


def _translate(java: str) -> str:
    out: list[str] = []
    pos = 0
    in_class = 0
    for m in _TOKEN.finditer(java):
        out.append(java[pos : m.start()])
        pos = m.end()
        text = m.group(0)
        if m.group(1) or m.group(2):
            name = m.group(1) or m.group(2)
            chars = _POSIX_CLASSES.get(name)
            if chars is None:
                raise re.error(f"Unsupported character class \\p{{{name}}}")
            negate = "^" if m.group(2) else ""
            out.append(chars if in_class and not negate else f"[{negate}{chars}]")
        elif m.group(3):
            out.append(f"(?P<{m.group(3)}>")
        elif text == "[":
            in_class += 1
            out.append(text)
        elif text == "]":
            in_class = max(0, in_class - 1)
            out.append(text)
        else:
            out.append(text)
    out.append(java[pos:])
    return "".join(out)


@lru_cache(maxsize=256)
def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regex; raises ``re.error`` (or ``TypeError`` for a non-string)."""
    if not isinstance(pattern, str):
        raise TypeError(f"expected a string pattern, found {type(pattern).__name__}")
    return re.compile(_translate(pattern))


def java_replacement(pattern: re.Pattern[str], replacement: str) -> Callable[[re.Match[str]], str]:
    """A function that expands Java ``Matcher`` replacement syntax for a match of ``pattern``.

    ``$n`` takes as many digits as still name an existing group (Java's rule), ``${name}`` a
    named group, ``\\x`` is ``x`` literally. Raises ``ValueError`` with Java's messages for an
    illegal reference.
    """
    parts: list[str | int] = []
    literal: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[i])
            i += 1
        elif c == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            group, i = _group_reference(pattern, replacement, i)
            if literal:
                parts.append("".join(literal))
                literal.clear()
            parts.append(group)
        else:
            literal.append(c)
            i += 1
    if literal:
        parts.append("".join(literal))

    def expand(match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)

    return expand


def _group_reference(pattern: re.Pattern[str], text: str, i: int) -> tuple[int, int]:
    if text[i] == "{":
        end = text.find("}", i)
        if end < 0:
            raise ValueError("named capturing group is missing trailing '}'")
        name = text[i + 1 : end]
        if name not in pattern.groupindex:
            raise ValueError(f"No group with name {{{name}}}")
        return pattern.groupindex[name], end + 1
    if not text[i].isdigit():
        raise ValueError("Illegal group reference")
    number = int(text[i])
    if number > pattern.groups:
        raise ValueError(f"No group {number}")
    i += 1
    while i < len(text) and text[i].isdigit():
        candidate = number * 10 + int(text[i])
        if candidate > pattern.groups:
            break
        number, i = candidate, i + 1
    return number, i


__all__ = ["compile_java_regex", "java_replacement"]
