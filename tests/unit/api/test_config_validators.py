"""Validators of sparkcat.api.config: Kafka's messages, descriptions and use through ConfigDef."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.config import (
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigType,
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


def _error(validator: Validator, value: Any, name: str = "k") -> str:
    with pytest.raises(ConfigError) as info:
        validator(name, value)
    return str(info.value)


def test_range_messages() -> None:
    between = Range.between(1, 10)
    between("k", 1)
    between("k", 10)
    between("k", 5.5)
    assert _error(between, 0) == "Invalid value 0 for configuration k: Value must be at least 1"
    assert (
        _error(between, 11) == "Invalid value 11 for configuration k: Value must be no more than 10"
    )
    assert _error(between, None) == "Invalid value null for configuration k: Value must be non-null"
    assert _error(Range.at_least(0), -1).endswith("Value must be at least 0")
    Range.at_least(0)("k", 10**12)


def test_range_rejects_non_numbers() -> None:
    assert "Value must be a number" in _error(Range.at_least(0), "5")
    assert "Value must be a number" in _error(Range.at_least(0), True)


def test_range_descriptions() -> None:
    assert str(Range.between(1, 10)) == "[1,...,10]"
    assert str(Range.at_least(0)) == "[0,...]"
    assert str(Range.at_least(0.5)) == "[0.5,...]"
    assert str(Range(None, 3)) == "[...,3]"
    assert str(Range(None, None)) == "[...]"


def test_range_error_keeps_value() -> None:
    with pytest.raises(ConfigError) as info:
        Range.at_least(5)("count", 3)
    assert (info.value.name, info.value.value) == ("count", 3)


def test_valid_string() -> None:
    validator = ValidString.in_("a", "b")
    validator("k", "a")
    assert (
        _error(validator, "A") == "Invalid value A for configuration k: String must be one of: a, b"
    )
    assert _error(validator, None).startswith("Invalid value null for configuration k")
    assert str(validator) == "[a, b]"


def test_case_insensitive_valid_string() -> None:
    validator = CaseInsensitiveValidString.in_("good", "values")
    for ok in ("gOOd", "VALUES", "good"):
        validator("k", ok)
    for bad in ("Bad", None, 5):
        assert "String must be one of (case insensitive): GOOD, VALUES" in _error(validator, bad)
    assert str(validator) == "(case insensitive) [GOOD, VALUES]"


def test_valid_list() -> None:
    validator = ValidList.in_("1", "2", "3")
    validator("k", ["1", "3"])
    validator("k", [])
    assert _error(validator, ["1", "4"], "y") == (
        "Invalid value 4 for configuration y: String must be one of: 1, 2, 3"
    )
    assert str(validator) == "[1, 2, 3]"


def test_non_null_validator() -> None:
    NonNullValidator()("k", "")
    assert _error(NonNullValidator(), None) == (
        "Invalid value null for configuration k: entry must be non null"
    )
    assert str(NonNullValidator()) == "non-null string"


def test_non_empty_string() -> None:
    NonEmptyString()("k", "x")
    NonEmptyString()("k", None)
    assert _error(NonEmptyString(), "").endswith(": String must be non-empty")
    assert str(NonEmptyString()) == "non-empty string"


@pytest.mark.parametrize(
    "value",
    [
        "test",
        "test/test",
        "test\u1234",
        "\u1324name\\",
        "/+%>&):??<&()?-",
        "+1",
        "\U0001f601",
        "\uf3b1",
        None,
    ],
)
def test_non_empty_string_without_control_chars_accepts(value: str | None) -> None:
    NonEmptyStringWithoutControlChars()("k", value)


@pytest.mark.parametrize(
    ("value", "codes"),
    [
        ("nontrailing\nnotallowed", "10"),
        ("as\u0001cii control char", "1"),
        ("tes\rt", "13"),
        ("test\btest", "8"),
        ("1\t2", "9"),
        ("a\n\rb\x7f\x85", "10, 13, 127, 133"),
    ],
)
def test_non_empty_string_without_control_chars_rejects(value: str, codes: str) -> None:
    message = _error(NonEmptyStringWithoutControlChars(), value)
    assert message.endswith(
        "String may not contain control sequences but had the following ASCII chars: " + codes
    )


def test_non_empty_string_without_control_chars_empty() -> None:
    assert _error(NonEmptyStringWithoutControlChars(), "") == (
        "Invalid value  for configuration k: String may not be empty"
    )
    assert str(NonEmptyStringWithoutControlChars()) == (
        "non-empty string without ISO control characters"
    )


def test_composite_validator_applies_all_in_order() -> None:
    validator = CompositeValidator.of(NonNullValidator(), ValidString.in_("a", "b"))
    validator("k", "b")
    assert _error(validator, None).endswith("entry must be non null")
    assert _error(validator, "c").endswith("String must be one of: a, b")
    assert str(validator) == "non-null string, [a, b]"


def test_lambda_validator() -> None:
    def even(name: str, value: Any) -> None:
        if value % 2:
            raise ConfigError(name, value, "must be even")

    validator = LambdaValidator.with_(even, lambda: "an even number")
    validator("k", 4)
    assert _error(validator, 3) == "Invalid value 3 for configuration k: must be even"
    assert str(validator) == "an even number"
    assert str(LambdaValidator.with_(even, "even")) == "even"


def test_list_size() -> None:
    validator = ListSize.at_most_of_size(2)
    validator("k", ["a", "b"])
    assert _error(validator, ["a", "b", "c"]).endswith("exceeds maximum list size of [2].")
    assert str(validator) == "List containing maximum of 2 elements"


@pytest.mark.parametrize(
    ("type_", "validator", "default", "ok", "bad"),
    [
        (ConfigType.INT, Range.between(0, 10), 5, [1, 5, 9, "3"], [-1, 11, None]),
        (
            ConfigType.STRING,
            ValidString.in_("good", "values", "default"),
            "default",
            ["good", "values", " default "],
            ["bad", "DEFAULT", None],
        ),
        (
            ConfigType.STRING,
            CaseInsensitiveValidString.in_("good", "values", "default"),
            "default",
            ["gOOd", "VALUES"],
            ["Bad", None],
        ),
        (ConfigType.LIST, ValidList.in_("1", "2", "3"), "1", ["1", "1,2", ["3"]], ["4", "1,5"]),
        (ConfigType.STRING, NonNullValidator(), "a", ["abb"], [None]),
        (
            ConfigType.STRING,
            CompositeValidator.of(NonNullValidator(), ValidString.in_("a", "b")),
            "a",
            ["a", "b"],
            [None, "c"],
        ),
    ],
)
def test_validators_through_parse(
    type_: ConfigType, validator: Validator, default: Any, ok: list[Any], bad: list[Any]
) -> None:
    definition = ConfigDef().define("name", type_, default, validator)
    for value in ok:
        definition.parse({"name": value})
    for value in bad:
        with pytest.raises(ConfigError):
            definition.parse({"name": value})


def test_invalid_default_is_rejected_at_define() -> None:
    with pytest.raises(ConfigError, match="Value must be at least 0"):
        ConfigDef().define("name", ConfigType.INT, -1, Range.between(0, 10))
    with pytest.raises(ConfigError, match="String must be one of: valid, values"):
        ConfigDef().define("name", ConfigType.STRING, "bad", ValidString.in_("valid", "values"))


def test_none_default_is_not_validated_but_explicit_none_is() -> None:
    definition = ConfigDef().define("name", ConfigType.STRING, None, ValidString.in_("a"))
    assert definition.parse({}) == {"name": None}
    with pytest.raises(ConfigError, match="String must be one of: a"):
        definition.parse({"name": None})


def test_required_key_with_validator() -> None:
    definition = ConfigDef().define(
        "enum_test", ConfigType.STRING, ConfigDef.NO_DEFAULT_VALUE, ValidString.in_("ONE", "TWO")
    )
    assert definition.parse({"enum_test": "ONE"}) == {"enum_test": "ONE"}
