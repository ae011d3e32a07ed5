"""AbstractConfig (part of ``sparkcat.api.config``; import it from there)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from sparkcat.api.config._def import ConfigDef
from sparkcat.api.config._types import ConfigType, Password, render
from sparkcat.api.errors import ConfigError


class AbstractConfig:
    """Parsed configuration with typed getters (Kafka's ``AbstractConfig``).

    Parses ``originals`` with ``definition`` on construction and raises :class:`ConfigError`
    like :meth:`ConfigDef.parse`. Subclasses may override :meth:`post_process_parsed_config`.
    The typed getters return the parsed value as is: ``None`` only for a key whose default
    is ``None`` (their annotations name the type of a non-``None`` value).
    """

    def __init__(self, definition: ConfigDef, originals: Mapping[str, Any]) -> None:
        for key in originals:
            if not isinstance(key, str):
                raise ConfigError(render(key), originals[key], "Key must be a string.")
        self._definition = definition
        self._originals: dict[str, Any] = dict(originals)
        self._values: dict[str, Any] = definition.parse(self._originals)
        self._values.update(self.post_process_parsed_config(dict(self._values)))
        self._used: set[str] = set()

    def post_process_parsed_config(self, parsed_values: Mapping[str, Any]) -> dict[str, Any]:
        """Values to change after parsing (default: none); called once by the constructor."""
        return {}

    @property
    def definition(self) -> ConfigDef:
        """The :class:`ConfigDef` these values were parsed with."""
        return self._definition

    def get(self, name: str) -> Any:
        """The parsed value of ``name``; ``ConfigError`` if ``name`` is not defined."""
        if name not in self._values:
            raise ConfigError(f"Unknown configuration '{name}'")
        self._used.add(name)
        return self._values[name]

    def get_short(self, name: str) -> int:
        return cast(int, self.get(name))

    def get_int(self, name: str) -> int:
        return cast(int, self.get(name))

    def get_long(self, name: str) -> int:
        return cast(int, self.get(name))

    def get_double(self, name: str) -> float:
        return cast(float, self.get(name))

    def get_boolean(self, name: str) -> bool:
        return cast(bool, self.get(name))

    def get_string(self, name: str) -> str:
        return cast(str, self.get(name))

    def get_list(self, name: str) -> list[str]:
        return cast(list[str], self.get(name))

    def get_password(self, name: str) -> Password:
        return cast(Password, self.get(name))

    def get_class(self, name: str) -> str:
        """The class name (``module:QualName`` or a Kafka class name) for the registry."""
        return cast(str, self.get(name))

    def type_of(self, name: str) -> ConfigType | None:
        """The defined type of ``name``, or ``None`` if not defined."""
        key = self._definition.config_keys().get(name)
        return None if key is None else key.type

    def documentation_of(self, name: str) -> str | None:
        """The documentation of ``name``, or ``None`` if not defined."""
        key = self._definition.config_keys().get(name)
        return None if key is None else key.documentation

    def ignore(self, name: str) -> None:
        """Mark ``name`` as used."""
        self._used.add(name)

    def unused(self) -> set[str]:
        """Original keys no getter has read."""
        return set(self._originals) - self._used

    def originals(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A copy of the settings as given, updated with ``overrides``."""
        copy = dict(self._originals)
        if overrides:
            copy.update(overrides)
        return copy

    def originals_strings(self) -> dict[str, str]:
        """The original settings, which must all be strings (else ``ConfigError``)."""
        for key, value in self._originals.items():
            if not isinstance(value, str):
                raise ConfigError(
                    f"Non-string value found in original settings for key {key}: "
                    + ("null" if value is None else type(value).__name__)
                )
        return cast(dict[str, str], dict(self._originals))

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """The original settings whose key starts with ``prefix`` (and is longer than it),
        with the prefix removed from the keys when ``strip``."""
        return {
            (k[len(prefix) :] if strip else k): v
            for k, v in self._originals.items()
            if k.startswith(prefix) and len(k) > len(prefix)
        }

    def values_with_prefix_override(self, prefix: str) -> dict[str, Any]:
        """The parsed values, overridden by ``prefix``-ed original settings of defined keys.

        ``producer.linger.ms`` overrides ``linger.ms``, parsed and validated like it.
        """
        result = dict(self._values)
        keys = self._definition.config_keys()
        for name, value in self.originals_with_prefix(prefix).items():
            key = keys.get(name)
            if key is not None:
                result[name] = ConfigDef.parse_value(key, value, True)
        return result

    def values(self) -> dict[str, Any]:
        """A copy of the parsed values of every defined key."""
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, AbstractConfig)
            and type(other) is type(self)
            and (other._originals == self._originals)
        )

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._originals)))
