from __future__ import annotations

import pytest

from sparkcat.runtime.herder.validation import (
    check_connector_name,
    ensure_valid,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.worker_config import WorkerConfig

SINK = {"name": "s", "connector.class": "FileStreamSink", "file": "out.txt"}
SOURCE = {"name": "r", "connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}


def validate(props: dict[str, str | None], worker: WorkerConfig) -> dict:  # type: ignore[type-arg]
    return validate_connector_config(props, PluginRegistry(), worker).infos.to_json()


def errors_of(infos: dict, name: str) -> list[str]:  # type: ignore[type-arg]
    for entry in infos["configs"]:
        value = entry["value"]
        if value is not None and value["name"] == name:
            return value["errors"]  # type: ignore[no-any-return]
    raise AssertionError(f"no entry for {name}")


def test_valid_source_lists_kafka_keys(worker_config: WorkerConfig) -> None:
    infos = validate(SOURCE, worker_config)
    assert infos["error_count"] == 0
    assert infos["name"] == "FileStreamSource"
    names = {c["definition"]["name"] for c in infos["configs"] if c["definition"]}
    expected = {
        "name", "connector.class", "tasks.max", "key.converter", "value.converter",
        "header.converter", "batch.size", "topic", "file", "transforms",
        "config.action.reload", "errors.retry.timeout", "errors.retry.delay.max.ms",
        "errors.tolerance", "errors.log.enable", "errors.log.include.messages", "predicates",
        "topic.creation.groups", "exactly.once.support", "transaction.boundary",
        "transaction.boundary.interval.ms", "offsets.storage.topic", "tasks.max.enforce",
    }  # fmt: skip
    assert names == expected
    assert infos["groups"][:4] == ["Common", "Transforms", "Predicates", "Error Handling"]


def test_config_key_info_shape(worker_config: WorkerConfig) -> None:
    infos = validate(SOURCE, worker_config)
    tasks_max = next(c for c in infos["configs"] if c["definition"]["name"] == "tasks.max")
    assert tasks_max["definition"] == {
        "name": "tasks.max", "type": "INT", "required": False, "default_value": "1",
        "importance": "HIGH", "documentation": tasks_max["definition"]["documentation"],
        "group": "Common", "order": 3, "width": "SHORT", "display_name": "Tasks max",
        "dependents": [],
    }  # fmt: skip
    assert tasks_max["value"] == {
        "name": "tasks.max", "value": "1", "recommended_values": [], "errors": [],
        "visible": True,
    }  # fmt: skip


def test_sink_needs_topics_or_regex(worker_config: WorkerConfig) -> None:
    infos = validate(SINK, worker_config)
    assert infos["error_count"] == 2
    assert errors_of(infos, "topics") == ["Must configure one of topics or topics.regex"]
    assert errors_of(infos, "topics.regex") == ["Must configure one of topics or topics.regex"]


def test_sink_topics_and_regex_are_exclusive(worker_config: WorkerConfig) -> None:
    infos = validate({**SINK, "topics": "a", "topics.regex": "b.*"}, worker_config)
    message = "topics and topics.regex are mutually exclusive options, but both are set."
    assert errors_of(infos, "topics") == [message]
    assert errors_of(infos, "topics.regex") == [message]


def test_sink_dlq_rules(worker_config: WorkerConfig) -> None:
    dlq = {"errors.deadletterqueue.topic.name": " dlq "}
    infos = validate({**SINK, **dlq, "topics": "a, dlq,,a"}, worker_config)
    assert errors_of(infos, "topics") == [
        "The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') "
        "consumed by the connector"
    ]
    infos = validate({**SINK, **dlq, "topics.regex": "d.*"}, worker_config)
    assert errors_of(infos, "topics.regex") == [
        "The DLQ topic 'dlq' may not be matched by the regex for the topics "
        "('topics.regex=d.*') consumed by the connector"
    ]


def test_null_values_and_bad_types(worker_config: WorkerConfig) -> None:
    infos = validate({**SOURCE, "tasks.max": "0", "errors.log.enable": None}, worker_config)
    assert errors_of(infos, "errors.log.enable") == [
        "Null value can not be supplied as the configuration value."
    ]
    assert errors_of(infos, "tasks.max") == [
        "Invalid value 0 for configuration tasks.max: Value must be at least 1"
    ]


def test_empty_name_and_duplicate_transform_alias(worker_config: WorkerConfig) -> None:
    infos = validate({**SOURCE, "name": ""}, worker_config)
    assert any("String may not be empty" in e for e in errors_of(infos, "name"))


def test_unknown_converter_is_reported_on_its_key(worker_config: WorkerConfig) -> None:
    infos = validate({**SOURCE, "value.converter": "NoSuchConverter"}, worker_config)
    assert errors_of(infos, "value.converter") == [
        "Invalid value NoSuchConverter for configuration value.converter: "
        "Class NoSuchConverter could not be found."
    ]


@pytest.mark.parametrize(
    ("policy", "errors"),
    [("All", 0), ("None", 2), ("Principal", 1)],
)
def test_client_override_policy(worker_config: WorkerConfig, policy: str, errors: int) -> None:
    worker = WorkerConfig({**worker_config.originals(),
                           "connector.client.config.override.policy": policy})  # fmt: skip
    props = {**SOURCE, "producer.override.acks": "1",
             "producer.override.security.protocol": "SSL"}  # fmt: skip
    infos = validate(props, worker)
    assert infos["error_count"] == errors
    if policy == "None":
        assert errors_of(infos, "producer.override.acks") == [
            "The 'None' policy does not allow 'acks' to be overridden in the connector "
            "configuration."
        ]


def test_invalid_config_message(worker_config: WorkerConfig) -> None:
    validation = validate_connector_config(SINK, PluginRegistry(), worker_config)
    with pytest.raises(BadRequestError) as info:
        ensure_valid(validation)
    assert info.value.status == 400
    assert str(info.value) == (
        "Connector configuration is invalid and contains the following 2 error(s):\n"
        "Must configure one of topics or topics.regex\n"
        "Must configure one of topics or topics.regex\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )


def test_no_connector_class(worker_config: WorkerConfig) -> None:
    with pytest.raises(BadRequestError, match=r"Connector config \{name=x\} contains no connector"):
        validate_connector_config({"name": "x"}, PluginRegistry(), worker_config)


def test_connector_name_must_match() -> None:
    assert check_connector_name("a", {"k": "v"}) == {"k": "v", "name": "a"}
    with pytest.raises(BadRequestError, match=r"configuration \(b\) doesn't match .* URL \(a\)"):
        check_connector_name("a", {"name": "b"})
