"""Validation results rendered as the REST API's ``ConfigInfos`` (Kafka's field names)."""

from __future__ import annotations

from sparkcat.api.config import ConfigDef, ConfigType, ConfigValue, Importance
from sparkcat.runtime.rest.config_infos import (
    generate_result,
    invalid_config_message,
    merge_results,
    prefixed_result,
)

KEYS = (
    ConfigDef()
    .define("size", ConfigType.INT, 1, importance=Importance.HIGH, group="Common")
    .define("secret", ConfigType.PASSWORD, importance=Importance.LOW, group="Security")
    .config_keys()
)


def test_values_without_a_definition_come_first_then_one_entry_per_key() -> None:
    values = [ConfigValue("size", 3), ConfigValue("stray", "x", error_messages=["unknown"])]
    infos = generate_result("Sink", KEYS, values, ["Common"]).to_json()
    assert infos["error_count"] == 1
    assert [(c["definition"] or {}).get("name") for c in infos["configs"]] == [
        None,
        "size",
        "secret",
    ]
    size = infos["configs"][1]
    assert size["definition"]["default_value"] == "1" and size["value"]["value"] == "3"
    assert infos["configs"][2]["value"] is None  # a key without a value has no value entry


def test_prefixed_entries_carry_the_prefixed_definition_and_hide_passwords() -> None:
    values = [ConfigValue("secret", "pw", error_messages=["bad", "worse"])]
    infos = prefixed_result(values, "producer.override.", KEYS).to_json()
    (entry,) = infos["configs"]
    assert entry["definition"]["name"] == "producer.override.secret"
    assert entry["value"]["name"] == "producer.override.secret"
    assert entry["value"]["value"] == "[hidden]"
    assert infos["error_count"] == 1 and infos["groups"] == ["Security"]


def test_merged_results_sum_their_errors_and_keep_each_group_once() -> None:
    first = generate_result("Sink", KEYS, [ConfigValue("size", 0, error_messages=["e"])], ["A"])
    second = prefixed_result([ConfigValue("secret", "pw", error_messages=["f"])], "x.", KEYS)
    merged = merge_results("Sink", first, None, second)
    assert merged.error_count == 2
    assert merged.groups == ["A", "Security"]
    assert merged.error_messages() == ["e", "f"]
    assert invalid_config_message(merged).splitlines() == [
        "Connector configuration is invalid and contains the following 2 error(s):",
        "e",
        "f",
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`",
    ]
