"""ConfigKey, ConfigValue and ConfigDef (part of ``sparkcat.api.config``; import from there)."""

from __future__ import annotations

from collections.abc import Iterable, KeysView, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol

from sparkcat.api.config._docs import to_enriched_rst, to_rst
from sparkcat.api.config._types import (
    ConfigType,
    Importance,
    Width,
    convert_to_string,
    convert_to_string_map_with_password_values,
    parse_type,
    render,
)
from sparkcat.api.config._validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    Validator,
    ValidList,
    ValidString,
)
from sparkcat.api.errors import ConfigError


class _NoDefault:
    """The type of :data:`NO_DEFAULT_VALUE`: marks a key as required."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT_VALUE"


NO_DEFAULT_VALUE: Final = _NoDefault()


class Recommender(Protocol):
    """Suggests values for a key and says whether it applies, given the other parsed values.

    Used only by :meth:`ConfigDef.validate_all` (for UIs); ``parse`` ignores recommenders.
    Either method may raise :class:`ConfigError`, which is reported on the key.
    """

    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool: ...


def _missing_required(name: str) -> str:
    return f'Missing required configuration "{name}" which has no default value.'


class ConfigKey:
    """The definition of one configuration key (immutable by convention).

    The default is parsed to ``type`` and checked by ``validator`` on construction (a ``None``
    default is not validated); a bad default raises :class:`ConfigError`.
    """

    __slots__ = (
        "default",
        "dependents",
        "display_name",
        "documentation",
        "group",
        "importance",
        "internal_config",
        "name",
        "order_in_group",
        "recommender",
        "type",
        "validator",
        "width",
    )

    def __init__(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT_VALUE,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
        internal_config: bool = False,
    ) -> None:
        self.name = name
        self.type = type
        has_default = default is not NO_DEFAULT_VALUE
        self.default: Any = parse_type(name, default, type) if has_default else NO_DEFAULT_VALUE
        if validator is not None and has_default and self.default is not None:
            validator(name, self.default)
        self.validator = validator
        self.importance = importance
        self.documentation = documentation
        self.group = group
        self.order_in_group = order_in_group
        self.width = width
        self.display_name = name if display_name is None else display_name
        self.dependents: tuple[str, ...] = tuple(dependents)
        self.recommender = recommender
        self.internal_config = internal_config

    def has_default(self) -> bool:
        """True unless the key is required (defined without a default)."""
        return self.default is not NO_DEFAULT_VALUE

    def __repr__(self) -> str:
        default = render(self.default) if self.has_default() else "NO_DEFAULT_VALUE"
        return f"ConfigKey({self.name!r}, {self.type.name}, default={default})"


@dataclass(slots=True)
class ConfigValue:
    """The outcome of validating one key: Kafka's ``ConfigValue``, rendered by the REST API.

    ``value`` is the parsed value (``None`` when it could not be parsed or is missing).
    """

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    error_messages: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error_message(self, message: str) -> None:
        """Record one more problem with this key."""
        self.error_messages.append(message)

    def __str__(self) -> str:
        return (
            f"[{self.name},{render(self.value)},{render(self.recommended_values)},"
            f"{render(self.error_messages)},{render(self.visible)}]"
        )


# Module-level names for annotations: inside ConfigDef the enums are class attributes.
_Importance = Importance
_Width = Width


class ConfigDef:
    """An ordered set of :class:`ConfigKey` definitions (Kafka's ``ConfigDef``).

    ``ConfigDef(base)`` starts from a copy of ``base``'s keys and groups.
    """

    Type = ConfigType
    Importance = Importance
    Width = Width
    NO_DEFAULT_VALUE: Final = NO_DEFAULT_VALUE
    # Kafka's nested validator classes, reachable the same way.
    Range = Range
    ValidString = ValidString
    CaseInsensitiveValidString = CaseInsensitiveValidString
    ValidList = ValidList
    NonEmptyString = NonEmptyString
    NonNullValidator = NonNullValidator
    NonEmptyStringWithoutControlChars = NonEmptyStringWithoutControlChars
    CompositeValidator = CompositeValidator
    LambdaValidator = LambdaValidator
    ListSize = ListSize

    __slots__ = ("_groups", "_keys")

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base is not None else {}
        self._groups: list[str] = list(base._groups) if base is not None else []

    def define(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT_VALUE,
        validator: Validator | None = None,
        importance: _Importance = _Importance.MEDIUM,
        documentation: str = "",
        group: str | None = None,
        order_in_group: int = -1,
        width: _Width = _Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
    ) -> ConfigDef:
        """Define one key and return ``self`` (chainable).

        Raises :class:`ConfigError` if ``name`` is already defined or the default is invalid.
        """
        key = ConfigKey(
            name,
            type,
            default,
            validator,
            importance,
            documentation,
            group,
            order_in_group,
            width,
            display_name,
            dependents,
            recommender,
        )
        return self.define_key(key)

    def define_internal(
        self,
        name: str,
        type: ConfigType,
        default: Any,
        importance: _Importance = _Importance.LOW,
        validator: Validator | None = None,
        documentation: str = "",
    ) -> ConfigDef:
        """Define a key that generated docs leave out (Kafka's ``defineInternal``)."""
        return self.define_key(
            ConfigKey(
                name, type, default, validator, importance, documentation, "", internal_config=True
            )
        )

    def define_key(self, key: ConfigKey) -> ConfigDef:
        """Add an already built :class:`ConfigKey`; raises :class:`ConfigError` if defined."""
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice.")
        if key.group is not None and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def merge(self, other: ConfigDef) -> ConfigDef:
        """Define every key of ``other`` here, in order; return ``self``.

        Raises :class:`ConfigError` if a key is defined in both.
        """
        for key in other._keys.values():
            self.define_key(key)
        return self

    def names(self) -> KeysView[str]:
        """The defined key names in definition order (a read-only, set-like view)."""
        return MappingProxyType(self._keys).keys()

    def config_keys(self) -> Mapping[str, ConfigKey]:
        """Name → :class:`ConfigKey`, in definition order (read-only)."""
        return MappingProxyType(self._keys)

    def groups(self) -> list[str]:
        """The groups in order of first use."""
        return list(self._groups)

    def default_values(self) -> dict[str, Any]:
        """The parsed default of every key that has one."""
        return {k.name: k.default for k in self._keys.values() if k.has_default()}

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Parse and validate ``props`` into a value for every defined key.

        Unknown keys in ``props`` are ignored. Raises :class:`ConfigError` at the first key that
        is missing (required), cannot be coerced, or fails its validator.
        """
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigError(
                "Some configurations in are referred in the dependents, but not defined: "
                + ",".join(undefined)
            )
        return {
            key.name: self.parse_value(key, props.get(key.name), key.name in props)
            for key in self._keys.values()
        }

    @staticmethod
    def parse_value(key: ConfigKey, value: Any, is_set: bool) -> Any:
        """Parse one key's value (``is_set=False`` takes the default); raises ConfigError."""
        if is_set:
            parsed = parse_type(key.name, value, key.type)
        elif not key.has_default():
            raise ConfigError(_missing_required(key.name))
        else:
            parsed = key.default
        if key.validator is not None and (is_set or parsed is not None):
            key.validator(key.name, parsed)
        return parsed

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """:meth:`validate_all` as a list, in definition order."""
        return list(self.validate_all(props).values())

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """Validate every key, collecting all problems instead of raising.

        As Kafka's ``validateAll``: keys are visited from those that are nobody's dependent,
        each followed by its dependents; a key reached twice is checked twice (so its errors
        may repeat, as in Kafka). Each :class:`ConfigValue` carries the parsed value (or
        ``None``), its error messages, and the recommender's values and visibility (recommended
        values of a key reached again are narrowed to those recommended before). A value that
        fails to parse gets exactly that one error: its validator is not run. A dependent
        that is not defined gets the error ``<name> is referred in the dependents, but not
        defined.`` and is invisible.
        """
        results = {name: ConfigValue(name) for name in self._keys}
        for name in self._undefined_dependents():
            missing = ConfigValue(name, visible=False)
            missing.add_error_message(f"{name} is referred in the dependents, but not defined.")
            results[name] = missing
        roots = self._configs_with_no_parent()
        parsed: dict[str, Any] = {}
        for name in roots:
            self._parse_for_validate(name, props, parsed, results)
        for name in roots:
            self._recommend(name, parsed, results)
        return results

    def _parse_for_validate(
        self,
        name: str,
        props: Mapping[str, Any],
        parsed: dict[str, Any],
        results: dict[str, ConfigValue],
    ) -> None:
        key = self._keys.get(name)
        if key is None:
            return
        result = results[name]
        value: Any = None
        is_set = name in props
        parsed_ok = True
        if is_set:
            try:
                value = parse_type(name, props[name], key.type)
            except ConfigError as e:
                result.add_error_message(str(e))
                parsed_ok = False
        elif not key.has_default():
            result.add_error_message(_missing_required(name))
        else:
            value = key.default
        # A value that failed to parse is reported once: running the validator on the
        # missing result would add a second, misleading error ("Value must be non-null").
        if key.validator is not None and parsed_ok and (is_set or value is not None):
            try:
                key.validator(name, value)
            except ConfigError as e:
                result.add_error_message(str(e))
        result.value = value
        parsed[name] = value
        for dependent in key.dependents:
            self._parse_for_validate(dependent, props, parsed, results)

    def _recommend(
        self, name: str, parsed: Mapping[str, Any], results: dict[str, ConfigValue]
    ) -> None:
        key = self._keys.get(name)
        if key is None:
            return
        result = results[name]
        if key.recommender is not None:
            try:
                recommended = list(key.recommender.valid_values(name, parsed))
                if result.recommended_values:
                    earlier = result.recommended_values
                    recommended = [v for v in recommended if v in earlier]
                result.recommended_values = recommended
                result.visible = key.recommender.visible(name, parsed)
            except ConfigError as e:
                result.add_error_message(str(e))
        for dependent in key.dependents:
            self._recommend(dependent, parsed, results)

    def _undefined_dependents(self) -> list[str]:
        undefined = {d for k in self._keys.values() for d in k.dependents if d not in self._keys}
        return sorted(undefined)

    def _configs_with_no_parent(self) -> list[str]:
        with_parent = {d for k in self._keys.values() for d in k.dependents}
        return [name for name in self._keys if name not in with_parent]

    parse_type = staticmethod(parse_type)
    convert_to_string = staticmethod(convert_to_string)
    convert_to_string_map_with_password_values = staticmethod(
        convert_to_string_map_with_password_values
    )

    def to_rst(self) -> str:
        """Reference docs of the non-internal keys in Kafka's RST layout."""
        return to_rst(self._keys.values(), self._groups)

    def to_enriched_rst(self) -> str:
        """:meth:`to_rst` with group headings and dependents."""
        return to_enriched_rst(self._keys.values(), self._groups)

    def __repr__(self) -> str:
        return f"ConfigDef({list(self._keys)})"
