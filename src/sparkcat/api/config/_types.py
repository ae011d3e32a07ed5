"""Config value types, Kafka's coercion rules and rendering (part of ``sparkcat.api.config``).

Everything here is re-exported by :mod:`sparkcat.api.config`; import it from there.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Final

from sparkcat.api.errors import ConfigError


class ConfigType(enum.Enum):
    """The type of a configuration value (Kafka's ``ConfigDef.Type``).

    The enum value is Kafka's lowercase name, as shown in generated docs and the REST API.
    """

    BOOLEAN = "boolean"
    STRING = "string"
    INT = "int"
    SHORT = "short"
    LONG = "long"
    DOUBLE = "double"
    LIST = "list"
    CLASS = "class"
    PASSWORD = "password"

    @property
    def is_sensitive(self) -> bool:
        """True for types whose values must never be shown (``PASSWORD``)."""
        return self is ConfigType.PASSWORD


class Importance(enum.Enum):
    """How important a configuration is to a user (Kafka's ``ConfigDef.Importance``)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Width(enum.Enum):
    """The width of a configuration value in a UI (Kafka's ``ConfigDef.Width``)."""

    NONE = "none"
    SHORT = "short"
    MEDIUM = "medium"
    LONG = "long"


class Password:
    """A secret configuration value: ``str()`` and ``repr()`` never reveal it.

    Equal to another ``Password`` with the same secret; hashable. The secret is :attr:`value`.
    """

    HIDDEN: Final = "[hidden]"
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    @property
    def value(self) -> str:
        """The secret itself."""
        return self._value

    def __str__(self) -> str:
        return Password.HIDDEN

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
# What Java's Double.parseDouble accepts, less hexadecimal floats.
_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)", re.ASCII
)
# type -> (bits, what Kafka calls it in "Expected value to be a ..., but it was a ...")
_INTEGERS: Final = {
    ConfigType.INT: (32, "32-bit integer"),
    ConfigType.SHORT: (16, "16-bit integer (short)"),
    ConfigType.LONG: (64, "64-bit integer (long)"),
}


# The worker imports each plugin.path plugin's modules under a namespace of its own
# (``_sparkcat_plugin_<dir>_<hash>.<module>``) so that plugins bundling different versions of
# one library never share it; names shown to users leave that namespace out.
PLUGIN_NAMESPACE_PREFIX = "_sparkcat_plugin_"


def public_module(module: str) -> str:
    """``module`` as users name it: a plugin's module without its private namespace."""
    if module.startswith(PLUGIN_NAMESPACE_PREFIX):
        return module.partition(".")[2] or module
    return module


def type_name(value: object) -> str:
    """The name of ``value``'s class as error messages show it (``int``, ``mypkg.Thing``)."""
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{public_module(cls.__module__)}.{cls.__qualname__}"


def class_name(cls: type) -> str:
    """The ``module:QualName`` string that stands for a Python class in CLASS values."""
    return f"{public_module(cls.__module__)}:{cls.__qualname__}"


def render(value: Any) -> str:
    """Render a value the way Java's ``toString`` would in Kafka's messages.

    ``None`` is ``null``, booleans are lowercase, lists are ``[a, b]``, mappings ``{k=v}``,
    passwords ``[hidden]`` and classes ``module:QualName``.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render(k)}={render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, type):
        return class_name(value)
    return str(value)


def invalid(name: str, value: Any, reason: str) -> ConfigError:
    """A ``ConfigError`` for one key whose message renders ``value`` as Kafka does.

    :attr:`ConfigError.value` keeps the original Python value.
    """
    error = ConfigError(name, render(value), reason)
    error.value = value
    return error


def _parse_integer(name: str, value: Any, trimmed: str | None, type_: ConfigType) -> int:
    bits, described = _INTEGERS[type_]
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
        if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
            raise invalid(name, value, f"Expected value to be a {described}, but it was a int")
        return number
    if trimmed is None:
        raise invalid(
            name, value, f"Expected value to be a {described}, but it was a {type_name(value)}"
        )
    if _INTEGER.fullmatch(trimmed) is None:
        raise invalid(name, value, f"Not a number of type {type_.name}")
    number = int(trimmed)
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise invalid(name, value, f"Not a number of type {type_.name}")
    return number


def _parse_double(name: str, value: Any, trimmed: str | None) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if trimmed is None:
        raise invalid(
            name, value, f"Expected value to be a double, but it was a {type_name(value)}"
        )
    if _DOUBLE.fullmatch(trimmed) is None:
        raise invalid(name, value, "Not a number of type DOUBLE")
    return float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))


def parse_type(name: str, value: Any, type_: ConfigType) -> Any:
    """Coerce ``value`` to ``type_`` with Kafka's rules (``ConfigDef.parseType``).

    ``None`` stays ``None``; strings are trimmed first. Raises :class:`ConfigError` with Kafka's
    message when the value cannot be coerced.
    """
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) else None
    if type_ is ConfigType.STRING or type_ is ConfigType.PASSWORD:
        if trimmed is not None:
            return trimmed if type_ is ConfigType.STRING else Password(trimmed)
        if type_ is ConfigType.PASSWORD and isinstance(value, Password):
            return value
        raise invalid(
            name, value, f"Expected value to be a string, but it was a {type_name(value)}"
        )
    if type_ is ConfigType.BOOLEAN:
        if isinstance(value, bool):
            return value
        if trimmed is not None and trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise invalid(name, value, "Expected value to be either true or false")
    if type_ in _INTEGERS:
        return _parse_integer(name, value, trimmed, type_)
    if type_ is ConfigType.DOUBLE:
        return _parse_double(name, value, trimmed)
    if type_ is ConfigType.LIST:
        if isinstance(value, list | tuple):
            return list(value)
        if trimmed is not None:
            return _COMMA_WITH_WHITESPACE.split(trimmed) if trimmed else []
        raise invalid(name, value, "Expected a comma separated list.")
    if type_ is ConfigType.CLASS:
        if isinstance(value, type):
            return class_name(value)
        if trimmed is not None:
            return trimmed
        raise invalid(name, value, "Expected a Class instance or class name.")
    raise ValueError(f"Unknown type {type_!r}")


def convert_to_string(value: Any, type_: ConfigType | None) -> str | None:
    """Kafka's string rendering of a parsed value (``ConfigDef.convertToString``).

    ``None`` → ``None``; lists are comma-joined without spaces; passwords are ``[hidden]``
    (any value of a ``PASSWORD`` key, even one left unparsed); booleans are lowercase; classes
    are ``module:QualName``. With ``type_=None`` the value is rendered by its own kind.
    """
    if value is None:
        return None
    if type_ is ConfigType.PASSWORD:
        return Password.HIDDEN
    if type_ is ConfigType.LIST or (type_ is None and isinstance(value, list | tuple)):
        return ",".join(render(v) for v in value)
    if type_ is ConfigType.DOUBLE and isinstance(value, int | float):
        return str(float(value))
    return render(value)


def convert_to_string_map_with_password_values(configs: dict[str, Any]) -> dict[str, str]:
    """Render every value as a string, revealing passwords; ``None`` values are left out.

    Kafka's ``ConfigDef.convertToStringMapWithPasswordValues``: used to hand parsed configs
    back to plugins as a plain string map.
    """
    result: dict[str, str] = {}
    for key, value in configs.items():
        text = value.value if isinstance(value, Password) else convert_to_string(value, None)
        if text is not None:
            result[key] = text
    return result
