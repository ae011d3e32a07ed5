"""Which tables and columns are captured, and which columns make the key.

Debezium's rules: the include/exclude lists are comma-separated regular expressions that must
match the *whole* identifier (``schema.table`` or ``db.table`` for tables, with ``.column``
appended for columns), case-insensitively; an include list wins over its exclude list.
``message.key.columns`` is ``<table regex>:<column>,<column>;<table regex>:<column>...``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sparkcat.api.errors import ConfigError


def _patterns(regexes: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(r.strip(), re.IGNORECASE) for r in regexes if r.strip())


def _split_regexes(value: str | Sequence[str]) -> list[str]:
    # Debezium splits on commas that are not escaped (a comma inside {m,n} is written \,).
    if not isinstance(value, str):
        return [v for v in value if v]
    return [p.replace("\\,", ",") for p in re.split(r"(?<!\\),", value) if p.strip()]


@dataclass(frozen=True)
class NameFilter:
    """An include list or an exclude list (or neither) of anchored regular expressions."""

    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, include: str | Sequence[str], exclude: str | Sequence[str]) -> NameFilter:
        return cls(_patterns(_split_regexes(include)), _patterns(_split_regexes(exclude)))

    def matches(self, name: str) -> bool:
        if self.include:
            return any(p.fullmatch(name) for p in self.include)
        return not any(p.fullmatch(name) for p in self.exclude)

    @property
    def is_empty(self) -> bool:
        return not self.include and not self.exclude


@dataclass(frozen=True)
class KeyColumns:
    """``message.key.columns``: the key columns of the tables it names."""

    rules: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = ()

    @classmethod
    def parse(cls, value: str) -> KeyColumns:
        rules: list[tuple[re.Pattern[str], tuple[str, ...]]] = []
        for entry in (e.strip() for e in (value or "").split(";")):
            if not entry:
                continue
            table, sep, columns = entry.rpartition(":")
            names = tuple(c.strip() for c in columns.split(",") if c.strip())
            if not sep or not table.strip() or not names:
                raise ConfigError(
                    f"Invalid value {value} for configuration message.key.columns: "
                    f"'{entry}' is not '<fully qualified table>:<column>[,<column>...]'"
                )
            rules.append((re.compile(table.strip(), re.IGNORECASE), names))
        return cls(tuple(rules))

    def for_table(self, table: str) -> tuple[str, ...] | None:
        """The key columns ``message.key.columns`` gives ``table``, or ``None``."""
        for pattern, columns in self.rules:
            if pattern.fullmatch(table):
                return columns
        return None


__all__ = ["KeyColumns", "NameFilter"]
