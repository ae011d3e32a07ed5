"""Config validators with Kafka's messages (part of ``sparkcat.api.config``).

A validator is any callable ``validator(name, value)`` that raises :class:`ConfigError` when
``value`` (already parsed to the key's type) is not acceptable. The classes here also describe
themselves through ``str()`` the way Kafka's do; generated docs show that text as
"Valid Values". Everything here is re-exported by :mod:`sparkcat.api.config`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from sparkcat.api.config._types import invalid


class Validator(Protocol):
    """Checks one parsed value; raises :class:`ConfigError` when it is not acceptable."""

    def __call__(self, name: str, value: Any) -> None: ...


class Range:
    """A number between optional bounds (inclusive). ``None`` is rejected."""

    __slots__ = ("max", "min")

    def __init__(self, min: float | None, max: float | None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        """A number ``>= min``."""
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        """A number in ``[min, max]``."""
        return cls(min, max)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise invalid(name, None, "Value must be non-null")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise invalid(name, value, "Value must be a number")
        if self.min is not None and value < self.min:
            raise invalid(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise invalid(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{self.max}]"
        if self.max is None:
            return f"[{self.min},...]"
        return f"[{self.min},...,{self.max}]"


class ValidString:
    """One of a fixed set of strings (case-sensitive)."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = tuple(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidString:
        """One of ``valid_strings``."""
        return cls(valid_strings)

    def __call__(self, name: str, value: Any) -> None:
        if value not in self.valid_strings:
            raise invalid(name, value, "String must be one of: " + ", ".join(self.valid_strings))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"


class CaseInsensitiveValidString:
    """One of a fixed set of strings, compared case-insensitively."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        # Kafka upper-cases the set and shows it upper-cased in messages and docs.
        self.valid_strings = tuple(dict.fromkeys(s.upper() for s in valid_strings))

    @classmethod
    def in_(cls, *valid_strings: str) -> CaseInsensitiveValidString:
        """One of ``valid_strings``, ignoring case."""
        return cls(valid_strings)

    def __call__(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value.upper() not in self.valid_strings:
            raise invalid(
                name,
                value,
                "String must be one of (case insensitive): " + ", ".join(self.valid_strings),
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"


class ValidList:
    """A list whose every entry is one of a fixed set of strings."""

    __slots__ = ("valid_string",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_string = ValidString(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidList:
        """Every entry one of ``valid_strings``."""
        return cls(valid_strings)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise invalid(name, None, "Value must be non-null")
        for entry in value:
            self.valid_string(name, entry)

    def __str__(self) -> str:
        return str(self.valid_string)


class NonNullValidator:
    """Any value but ``None``."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise invalid(name, None, "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"


class NonEmptyString:
    """A string that is not empty (``None`` passes)."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonEmptyStringWithoutControlChars:
    """A non-empty string without ISO control characters (``None`` passes).

    ``None`` passes because a missing required value is reported by the required check.
    """

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            return
        if value == "":
            raise invalid(name, value, "String may not be empty")
        found = [str(ord(c)) for c in value if unicodedata.category(c) == "Cc"]
        if found:
            raise invalid(
                name,
                value,
                "String may not contain control sequences but had the following ASCII chars: "
                + ", ".join(found),
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class ListSize:
    """A list of at most ``max_size`` entries."""

    __slots__ = ("max_size",)

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size

    @classmethod
    def at_most_of_size(cls, max_size: int) -> ListSize:
        """A list of at most ``max_size`` entries."""
        return cls(max_size)

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and len(value) > self.max_size:
            raise invalid(name, value, f"exceeds maximum list size of [{self.max_size}].")

    def __str__(self) -> str:
        return f"List containing maximum of {self.max_size} elements"


class CompositeValidator:
    """All of several validators, applied in order; the first failure is raised."""

    __slots__ = ("validators",)

    def __init__(self, validators: Iterable[Validator]) -> None:
        self.validators = tuple(validators)

    @classmethod
    def of(cls, *validators: Validator) -> CompositeValidator:
        """All of ``validators``."""
        return cls(validators)

    def __call__(self, name: str, value: Any) -> None:
        for validator in self.validators:
            validator(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class LambdaValidator:
    """A validator from a function and a description (Kafka's ``LambdaValidator.with``)."""

    __slots__ = ("_describe", "_ensure_valid")

    def __init__(
        self, ensure_valid: Callable[[str, Any], None], describe: Callable[[], str] | str
    ) -> None:
        self._ensure_valid = ensure_valid
        self._describe = describe

    @classmethod
    def with_(
        cls, ensure_valid: Callable[[str, Any], None], describe: Callable[[], str] | str
    ) -> LambdaValidator:
        """``ensure_valid(name, value)`` raises ``ConfigError``; ``describe`` is the docs text
        (a string or a function returning it)."""
        return cls(ensure_valid, describe)

    def __call__(self, name: str, value: Any) -> None:
        self._ensure_valid(name, value)

    def __str__(self) -> str:
        return self._describe if isinstance(self._describe, str) else self._describe()


__all__ = [
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Range",
    "ValidList",
    "ValidString",
    "Validator",
]
