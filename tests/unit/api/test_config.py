"""ConfigDef, ConfigValue, Password and AbstractConfig (mirrors Kafka's ConfigDefTest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparkcat.api.config as config_module
from sparkcat.api.config import (
    AbstractConfig,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonNullValidator,
    Password,
    Range,
    ValidString,
    Width,
)
from sparkcat.api.config._types import parse_type
from sparkcat.api.errors import ConfigError


def _parse_one(type_: ConfigType, value: Any) -> Any:
    return ConfigDef().define("name", type_).parse({"name": value})["name"]


def _parse_error(type_: ConfigType, value: Any) -> str:
    with pytest.raises(ConfigError) as info:
        _parse_one(type_, value)
    return str(info.value)


class Plugin:
    class Nested:
        pass


def test_basic_types() -> None:
    definition = (
        ConfigDef()
        .define("a", ConfigDef.Type.INT, 5, Range.between(0, 14), ConfigDef.Importance.HIGH, "d")
        .define("b", ConfigType.LONG, importance=Importance.HIGH, documentation="docs")
        .define("c", ConfigType.STRING, "hello")
        .define("d", ConfigType.LIST)
        .define("e", ConfigType.DOUBLE)
        .define("f", ConfigType.CLASS)
        .define("g", ConfigType.BOOLEAN)
        .define("h", ConfigType.BOOLEAN)
        .define("i", ConfigType.BOOLEAN)
        .define("j", ConfigType.PASSWORD)
    )
    props = {
        "a": "1   ",
        "b": 2,
        "d": " a , b, c",
        "e": 42.5,
        "f": "org.example.Thing",
        "g": "true",
        "h": "FalSE",
        "i": " TRUE ",
        "j": "password",
    }
    assert definition.parse(props) == {
        "a": 1,
        "b": 2,
        "c": "hello",
        "d": ["a", "b", "c"],
        "e": 42.5,
        "f": "org.example.Thing",
        "g": True,
        "h": False,
        "i": True,
        "j": Password("password"),
    }


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        (ConfigType.BOOLEAN, False, False),
        (ConfigType.STRING, "  x y ", "x y"),
        (ConfigType.INT, 2**31 - 1, 2**31 - 1),
        (ConfigType.INT, "-2147483648", -(2**31)),
        (ConfigType.INT, "+7", 7),
        (ConfigType.SHORT, "32767", 32767),
        (ConfigType.SHORT, -5, -5),
        (ConfigType.LONG, "9223372036854775807", 2**63 - 1),
        (ConfigType.DOUBLE, 3, 3.0),
        (ConfigType.DOUBLE, " 1.5e3 ", 1500.0),
        (ConfigType.DOUBLE, "2d", 2.0),
        (ConfigType.DOUBLE, "-Infinity", float("-inf")),
        (ConfigType.LIST, "", []),
        (ConfigType.LIST, "   ", []),
        (ConfigType.LIST, "a, b,c", ["a", "b", "c"]),
        (ConfigType.LIST, "a,,b,", ["a", "", "b", ""]),
        (ConfigType.LIST, ("x", "y"), ["x", "y"]),
        (ConfigType.CLASS, " a.b.C ", "a.b.C"),
        (ConfigType.CLASS, Plugin.Nested, f"{__name__}:Plugin.Nested"),
        (ConfigType.PASSWORD, " s ", Password("s")),
        (ConfigType.PASSWORD, Password("p"), Password("p")),
    ],
)
def test_coercion(type_: ConfigType, value: Any, expected: Any) -> None:
    parsed = _parse_one(type_, value)
    assert parsed == expected
    assert type(parsed) is type(expected)


@pytest.mark.parametrize(
    ("type_", "value", "message"),
    [
        (ConfigType.BOOLEAN, "truee", "Invalid value truee for configuration name: "),
        (ConfigType.BOOLEAN, 1, "Expected value to be either true or false"),
        (ConfigType.INT, "hello", "Not a number of type INT"),
        (ConfigType.INT, "42.5", "Not a number of type INT"),
        (ConfigType.INT, "1_000", "Not a number of type INT"),
        (ConfigType.INT, str(2**31), "Not a number of type INT"),
        (ConfigType.INT, 42.5, "Expected value to be a 32-bit integer, but it was a float"),
        (ConfigType.INT, 2**31, "Expected value to be a 32-bit integer, but it was a int"),
        (ConfigType.INT, True, "Expected value to be a 32-bit integer, but it was a bool"),
        (ConfigType.INT, object(), "Expected value to be a 32-bit integer, but it was a object"),
        (ConfigType.SHORT, "40000", "Not a number of type SHORT"),
        (ConfigType.SHORT, 40000, "Expected value to be a 16-bit integer (short), but it was"),
        (ConfigType.LONG, str(2**63) + "00", "Not a number of type LONG"),
        (ConfigType.LONG, 2**63, "Expected value to be a 64-bit integer (long), but it was a int"),
        (ConfigType.DOUBLE, "hello", "Not a number of type DOUBLE"),
        (ConfigType.DOUBLE, [1], "Expected value to be a double, but it was a list"),
        (ConfigType.STRING, 5, "Expected value to be a string, but it was a int"),
        (ConfigType.PASSWORD, 5, "Expected value to be a string, but it was a int"),
        (ConfigType.LIST, 53, "Invalid value 53 for configuration name: Expected a comma sep"),
        (ConfigType.CLASS, 1, "Expected a Class instance or class name."),
    ],
)
def test_bad_inputs(type_: ConfigType, value: Any, message: str) -> None:
    assert message in _parse_error(type_, value)


def test_bad_input_message_renders_values_like_kafka() -> None:
    assert _parse_error(ConfigType.BOOLEAN, "hello") == (
        "Invalid value hello for configuration name: Expected value to be either true or false"
    )
    assert _parse_error(ConfigType.STRING, True).startswith("Invalid value true for")
    assert _parse_error(ConfigType.INT, ["a", "b"]).startswith("Invalid value [a, b] for")


def test_bad_input_error_carries_name_and_value() -> None:
    with pytest.raises(ConfigError) as info:
        _parse_one(ConfigType.INT, "x1")
    assert (info.value.name, info.value.value) == ("name", "x1")


def test_password_is_hidden() -> None:
    secret = Password("s3cret")
    assert str(secret) == repr(secret) == Password.HIDDEN == "[hidden]"
    assert f"{[secret]}" == "[[hidden]]"
    assert secret.value == "s3cret"
    assert secret == Password("s3cret") and secret != Password("other") and secret != "s3cret"
    assert hash(secret) == hash(Password("s3cret"))
    parsed = ConfigDef().define("p", ConfigType.PASSWORD).parse({"p": "s3cret"})
    assert "s3cret" not in repr(parsed)
    with pytest.raises(ConfigError) as info:
        ConfigDef().define("p", ConfigType.PASSWORD, validator=ValidString.in_("x")).parse(
            {"p": "s3cret"}
        )
    assert "s3cret" not in str(info.value)


def test_missing_required() -> None:
    definition = ConfigDef().define("a", ConfigType.INT, importance=Importance.HIGH)
    with pytest.raises(ConfigError) as info:
        definition.parse({})
    assert str(info.value) == 'Missing required configuration "a" which has no default value.'


def test_defaults() -> None:
    definition = (
        ConfigDef()
        .define("none", ConfigType.INT, None)
        .define("empty", ConfigType.STRING, "")
        .define("list", ConfigType.LIST, "x, y")
        .define("flag", ConfigType.BOOLEAN, "TRUE")
    )
    assert definition.parse({}) == {"none": None, "empty": "", "list": ["x", "y"], "flag": True}
    assert definition.default_values() == definition.parse({})
    assert definition.config_keys()["list"].default == ["x", "y"]


def test_invalid_default() -> None:
    with pytest.raises(ConfigError, match="Not a number of type INT"):
        ConfigDef().define("a", ConfigType.INT, "hello")


def test_unknown_keys_are_ignored() -> None:
    definition = ConfigDef().define("a", ConfigType.STRING, "x")
    assert definition.parse({"other": object(), "a": "y"}) == {"a": "y"}


def test_defined_twice() -> None:
    definition = ConfigDef().define("a", ConfigType.STRING)
    with pytest.raises(ConfigError) as info:
        definition.define("a", ConfigType.INT)
    assert str(info.value) == "Configuration a is defined twice."


def test_config_key() -> None:
    key = ConfigKey("k", ConfigType.INT, "3", Range.at_least(0), Importance.LOW, "doc", "g", 2)
    assert (key.name, key.type, key.default, key.importance, key.documentation) == (
        "k",
        ConfigType.INT,
        3,
        Importance.LOW,
        "doc",
    )
    assert (key.group, key.order_in_group, key.width, key.display_name) == ("g", 2, Width.NONE, "k")
    assert key.has_default() and key.dependents == () and key.recommender is None
    assert not ConfigKey("r", ConfigType.INT).has_default()
    definition = ConfigDef().define_key(key)
    assert definition.config_keys()["k"] is key
    with pytest.raises(TypeError):
        definition.config_keys()["x"] = key  # type: ignore[index]


def test_names_and_group_inference() -> None:
    definition = (
        ConfigDef()
        .define("a", ConfigType.INT, group="group2", order_in_group=1, width=Width.SHORT)
        .define("b", ConfigType.INT, group="group2", order_in_group=2)
        .define("c", ConfigType.INT, group="group1", order_in_group=2)
        .define("d", ConfigType.INT)
    )
    assert definition.groups() == ["group2", "group1"]
    assert list(definition.names()) == ["a", "b", "c", "d"]
    assert "c" in definition.names() and "z" not in definition.names()


def test_copy_constructor_and_merge() -> None:
    base = ConfigDef().define("a", ConfigType.STRING, "x", group="g1")
    derived = ConfigDef(base).define("b", ConfigType.INT, 1, group="g2")
    assert list(base.names()) == ["a"]
    assert list(derived.names()) == ["a", "b"] and derived.groups() == ["g1", "g2"]
    merged = ConfigDef().define("c", ConfigType.BOOLEAN, True).merge(derived)
    assert merged.parse({}) == {"c": True, "a": "x", "b": 1}
    with pytest.raises(ConfigError, match=r"Configuration a is defined twice\."):
        merged.merge(base)


def test_define_internal() -> None:
    definition = ConfigDef().define_internal("internal.x", ConfigType.INT, 4)
    assert definition.config_keys()["internal.x"].internal_config
    assert definition.parse({}) == {"internal.x": 4}


def test_parse_fails_on_undefined_dependents() -> None:
    definition = ConfigDef().define("parent", ConfigType.STRING, dependents=["child"])
    with pytest.raises(ConfigError, match="referred in the dependents, but not defined: child"):
        definition.parse({"parent": "x"})


class IntegerRecommender:
    def __init__(self, has_parent: bool) -> None:
        self.has_parent = has_parent

    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]:
        return [4, 5] if self.has_parent else [1, 2, 3]

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool:
        return True


def _dependent_def(*, with_d: bool = True) -> ConfigDef:
    definition = (
        ConfigDef()
        .define(
            "a",
            ConfigType.INT,
            group="group",
            order_in_group=1,
            width=Width.SHORT,
            dependents=["b", "c"] if with_d else ["b", "c", "d"],
            recommender=IntegerRecommender(False),
        )
        .define("b", ConfigType.INT, group="group", recommender=IntegerRecommender(True))
        .define("c", ConfigType.INT, group="group", recommender=IntegerRecommender(True))
    )
    if with_d:
        definition.define(
            "d", ConfigType.INT, dependents=["b"], recommender=IntegerRecommender(False)
        )
    return definition


MISSING_B = 'Missing required configuration "b" which has no default value.'
MISSING_C = 'Missing required configuration "c" which has no default value.'


def test_validate() -> None:
    results = _dependent_def().validate_all({"a": "1", "d": "10"})
    assert results == {
        "a": ConfigValue("a", 1, [1, 2, 3], []),
        # b is a dependent of both a and d: checked twice, as in Kafka.
        "b": ConfigValue("b", None, [4, 5], [MISSING_B, MISSING_B]),
        "c": ConfigValue("c", None, [4, 5], [MISSING_C]),
        "d": ConfigValue("d", 10, [1, 2, 3], []),
    }
    assert _dependent_def().validate({"a": "1", "d": "10"}) == list(results.values())


def test_validate_missing_dependent_key() -> None:
    results = _dependent_def(with_d=False).validate_all({"a": "1"})
    assert results["b"] == ConfigValue("b", None, [4, 5], [MISSING_B])
    assert results["d"] == ConfigValue(
        "d", None, [], ["d is referred in the dependents, but not defined."], visible=False
    )


def test_validate_cannot_parse() -> None:
    results = ConfigDef().define("a", ConfigType.INT).validate({"a": "non_integer"})
    assert results == [
        ConfigValue(
            "a",
            None,
            [],
            ["Invalid value non_integer for configuration a: Not a number of type INT"],
        )
    ]


def test_validate_reports_every_problem_and_defaults() -> None:
    definition = (
        ConfigDef()
        .define("n", ConfigType.INT, 5, Range.between(0, 9))
        .define("s", ConfigType.STRING, "a", ValidString.in_("a", "b"))
        .define("l", ConfigType.LIST, "x")
    )
    results = definition.validate_all({"n": "12", "s": "c", "ignored": "1"})
    assert set(results) == {"n", "s", "l"}
    assert results["n"].value == 12
    assert results["n"].error_messages == [
        "Invalid value 12 for configuration n: Value must be no more than 9"
    ]
    assert results["s"].error_messages == [
        "Invalid value c for configuration s: String must be one of: a, b"
    ]
    assert results["l"] == ConfigValue("l", ["x"])


class _ModeRecommender:
    """Recommends per-mode values; only visible when mode is 'advanced'."""

    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]:
        if parsed_config.get("mode") == "broken":
            raise ConfigError(name, parsed_config["mode"], "cannot recommend")
        return ["x", "y"] if parsed_config.get("mode") == "advanced" else ["x"]

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool:
        return parsed_config.get("mode") == "advanced"


@pytest.mark.parametrize(
    ("mode", "recommended", "visible", "errors"),
    [
        ("advanced", ["x", "y"], True, []),
        ("basic", ["x"], False, []),
        ("broken", [], True, ["Invalid value broken for configuration opt: cannot recommend"]),
    ],
)
def test_validate_uses_recommender(
    mode: str, recommended: list[str], visible: bool, errors: list[str]
) -> None:
    definition = (
        ConfigDef()
        .define("mode", ConfigType.STRING, dependents=["opt"])
        .define("opt", ConfigType.STRING, "x", recommender=_ModeRecommender())
    )
    result = definition.validate_all({"mode": mode})["opt"]
    assert (result.recommended_values, result.visible, result.error_messages) == (
        recommended,
        visible,
        errors,
    )


def test_config_value_str() -> None:
    value = ConfigValue("a", True, [1, 2], ["bad"], visible=False)
    assert str(value) == "[a,true,[1, 2],[bad],false]"
    assert str(ConfigValue("p", Password("x"))) == "[p,[hidden],[],[],true]"
    value.add_error_message("worse")
    assert value.error_messages == ["bad", "worse"]


@pytest.mark.parametrize(
    ("value", "type_", "expected"),
    [
        (True, ConfigType.BOOLEAN, "true"),
        (False, None, "false"),
        (32767, ConfigType.SHORT, "32767"),
        (-5, ConfigType.INT, "-5"),
        (2**40, ConfigType.LONG, str(2**40)),
        (1.5, ConfigType.DOUBLE, "1.5"),
        (3, ConfigType.DOUBLE, "3.0"),
        ("x y", ConfigType.STRING, "x y"),
        (Password("s"), ConfigType.PASSWORD, "[hidden]"),
        (["a", "bc"], ConfigType.LIST, "a,bc"),
        ([], ConfigType.LIST, ""),
        (["a", 1], None, "a,1"),
        ("a.b.C", ConfigType.CLASS, "a.b.C"),
        (Plugin.Nested, ConfigType.CLASS, f"{__name__}:Plugin.Nested"),
        (None, ConfigType.STRING, None),
    ],
)
def test_convert_to_string(value: Any, type_: ConfigType | None, expected: str | None) -> None:
    assert ConfigDef.convert_to_string(value, type_) == expected


def test_convert_to_string_map_with_password_values() -> None:
    converted = ConfigDef.convert_to_string_map_with_password_values(
        {"p": Password("s"), "l": ["a", "b"], "b": True, "n": None, "i": 3}
    )
    assert converted == {"p": "s", "l": "a,b", "b": "true", "i": "3"}


def _worker_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("short", ConfigType.SHORT, 1)
        .define("int", ConfigType.INT, 2, Range.at_least(0))
        .define("long", ConfigType.LONG, 3)
        .define("double", ConfigType.DOUBLE, 4)
        .define("string", ConfigType.STRING, "s")
        .define("list", ConfigType.LIST, "a,b")
        .define("bool", ConfigType.BOOLEAN, False)
        .define("password", ConfigType.PASSWORD, None)
        .define("class", ConfigType.CLASS, Plugin)
        .define("linger.ms", ConfigType.INT, 0)
    )


def test_abstract_config_getters() -> None:
    config = AbstractConfig(_worker_def(), {"int": "7", "password": "pw", "bool": "true"})
    assert config.get_short("short") == 1
    assert config.get_int("int") == 7
    assert config.get_long("long") == 3
    assert config.get_double("double") == 4.0 and isinstance(config.get_double("double"), float)
    assert config.get_string("string") == "s"
    assert config.get_list("list") == ["a", "b"]
    assert config.get_boolean("bool") is True
    assert config.get_password("password") == Password("pw")
    assert config.get_class("class") == f"{__name__}:Plugin"
    assert config.get("int") == 7
    assert config.values() == _worker_def().parse({"int": 7, "password": "pw", "bool": True})
    assert config.type_of("int") is ConfigType.INT and config.type_of("nope") is None
    with pytest.raises(ConfigError, match="Unknown configuration 'nope'"):
        config.get("nope")


def test_abstract_config_raises_at_construction() -> None:
    with pytest.raises(ConfigError, match="Value must be at least 0"):
        AbstractConfig(_worker_def(), {"int": "-1"})
    with pytest.raises(ConfigError, match=r"Key must be a string\."):
        AbstractConfig(_worker_def(), {1: "x"})  # type: ignore[dict-item]


def test_abstract_config_originals_and_prefixes() -> None:
    originals = {"int": "7", "producer.linger.ms": "5", "producer.acks": "all", "producer.": "x"}
    config = AbstractConfig(_worker_def(), originals)
    assert config.originals() == originals
    assert config.originals({"int": "8"})["int"] == "8"
    assert config.originals_strings() == originals
    assert config.originals_with_prefix("producer.") == {"linger.ms": "5", "acks": "all"}
    assert config.originals_with_prefix("producer.", strip=False) == {
        "producer.linger.ms": "5",
        "producer.acks": "all",
    }
    overridden = config.values_with_prefix_override("producer.")
    assert overridden["linger.ms"] == 5 and overridden["int"] == 7 and "acks" not in overridden
    assert config.get_int("linger.ms") == 0


def test_abstract_config_unused_and_equality() -> None:
    config = AbstractConfig(_worker_def(), {"int": "7", "extra": "1"})
    config.get_int("int")
    assert config.unused() == {"extra"}
    config.ignore("extra")
    assert config.unused() == set()
    assert config == AbstractConfig(_worker_def(), {"int": "7", "extra": "1"})
    assert config != AbstractConfig(_worker_def(), {"int": "8", "extra": "1"})
    with pytest.raises(ConfigError, match="Non-string value found in original settings for key"):
        AbstractConfig(_worker_def(), {"int": 7}).originals_strings()


def test_abstract_config_post_process() -> None:
    class DoublingConfig(AbstractConfig):
        def post_process_parsed_config(self, parsed_values: Mapping[str, Any]) -> dict[str, Any]:
            return {"int": parsed_values["int"] * 2}

    assert DoublingConfig(_worker_def(), {"int": "4"}).get_int("int") == 8


def test_public_names() -> None:
    assert sorted(config_module.__all__) == [
        "AbstractConfig",
        "CaseInsensitiveValidString",
        "CompositeValidator",
        "ConfigDef",
        "ConfigKey",
        "ConfigType",
        "ConfigValue",
        "Importance",
        "LambdaValidator",
        "ListSize",
        "NO_DEFAULT_VALUE",
        "NonEmptyString",
        "NonEmptyStringWithoutControlChars",
        "NonNullValidator",
        "Password",
        "Range",
        "Recommender",
        "ValidList",
        "ValidString",
        "Validator",
        "Width",
    ]
    assert ConfigDef.Width is Width and ConfigDef.Range is Range
    assert ConfigDef.NO_DEFAULT_VALUE is config_module.NO_DEFAULT_VALUE


# -- a value that fails to parse is reported once ------------------------------------------


def _always_fails(name: str, value: Any) -> None:
    raise ConfigError(name, value, "the validator ran")


_VALIDATORS = st.sampled_from(
    [
        None,
        NonNullValidator(),
        LambdaValidator.with_(_always_fails, "never valid"),
    ]
)
_RAW_VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["abc", "1.5", "maybe", " 7 ", "1e3", "99999999999999999999", "-40000", ""]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(type_=st.sampled_from(list(ConfigType)), raw=_RAW_VALUES, validator=_VALIDATORS)
def test_a_value_that_fails_to_parse_has_exactly_one_error(
    type_: ConfigType, raw: Any, validator: Any
) -> None:
    definition = ConfigDef().define("k", type_, ConfigDef.NO_DEFAULT_VALUE, validator)
    try:
        parse_type("k", raw, type_)
    except ConfigError as parse_error:
        errors = definition.validate_all({"k": raw})["k"].error_messages
        assert errors == [str(parse_error)]
    else:
        errors = definition.validate_all({"k": raw})["k"].error_messages
        # A value that parses is run through its validator (the failing one reports).
        failing = isinstance(validator, LambdaValidator)
        assert len(errors) == (1 if failing else 0)


@pytest.mark.parametrize(
    ("type_", "raw", "message"),
    [
        (ConfigType.INT, "abc", "Not a number of type INT"),
        (ConfigType.SHORT, "40000", "Not a number of type SHORT"),
        (ConfigType.LONG, "1.5", "Not a number of type LONG"),
        (ConfigType.DOUBLE, "x", "Not a number of type DOUBLE"),
        (ConfigType.BOOLEAN, "maybe", "Expected value to be either true or false"),
        (ConfigType.LIST, 7, "Expected a comma separated list."),
        (ConfigType.CLASS, 7, "Expected a Class instance or class name."),
        (ConfigType.PASSWORD, 7, "Expected value to be a string, but it was a int"),
    ],
)
def test_each_type_reports_only_its_parse_error(type_: ConfigType, raw: Any, message: str) -> None:
    definition = ConfigDef().define("k", type_, ConfigDef.NO_DEFAULT_VALUE, NonNullValidator())
    errors = definition.validate_all({"k": raw})["k"].error_messages
    assert len(errors) == 1
    assert errors[0].endswith(message), errors
