"""Exactly-once preflight validation (KIP-618) on the validate path, with Kafka's texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.herder.validation import (
    BOUNDARY_NULL_MESSAGE,
    BOUNDARY_UNSUPPORTED_MESSAGE,
    EOS_NOT_ENABLED_MESSAGE,
    EOS_NULL_MESSAGE,
    EOS_UNSUPPORTED_MESSAGE,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.worker_config import WorkerConfig

PLUGINS = Path(__file__).resolve().parents[3] / "integration" / "plugins"
PREFLIGHT = "sparkcat_eos_plugins:PreflightSourceConnector"
WORKER = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
}


@pytest.fixture(autouse=True)
def _plugins_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))


def distributed(support: str = "enabled") -> DistributedConfig:
    return DistributedConfig({**WORKER, "exactly.once.source.support": support})


def errors(worker: WorkerConfig, **config: str) -> dict[str, list[str]]:
    props = {"name": "c", "connector.class": PREFLIGHT, "topic": "t"}
    props.update({k.replace("_", "."): v for k, v in config.items()})
    infos = validate_connector_config(props, PluginRegistry(), worker).infos.to_json()
    found = {}
    for entry in infos["configs"]:
        value = entry["value"]
        if value is not None and value["errors"]:
            found[value["name"]] = value["errors"]
    assert infos["error_count"] == sum(len(m) for m in found.values())
    return found


def test_requested_needs_no_preflight() -> None:
    assert errors(distributed("disabled"), eos_answer="none") == {}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("SUPPORTED", None),
        ("UNSUPPORTED", EOS_UNSUPPORTED_MESSAGE),
        ("none", EOS_NULL_MESSAGE),
        ("raise", "An unexpected error occurred during validation: preflight exploded"),
    ],
)
def test_required_asks_the_connector(answer: str, message: str | None) -> None:
    found = errors(distributed(), exactly_once_support="required", eos_answer=answer)
    assert found == ({} if message is None else {"exactly.once.support": [message]})


def test_required_on_a_worker_without_support() -> None:
    found = errors(
        distributed("preparing"), exactly_once_support="REQUIRED", eos_answer="SUPPORTED"
    )
    assert found == {"exactly.once.support": [EOS_NOT_ENABLED_MESSAGE]}


def test_required_and_unsupported_report_both() -> None:
    found = errors(
        distributed("disabled"), exactly_once_support="required", eos_answer="UNSUPPORTED"
    )
    assert found == {"exactly.once.support": [EOS_NOT_ENABLED_MESSAGE, EOS_UNSUPPORTED_MESSAGE]}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("SUPPORTED", None),
        ("UNSUPPORTED", BOUNDARY_UNSUPPORTED_MESSAGE),
        ("none", BOUNDARY_NULL_MESSAGE),
        ("raise", "An unexpected error occurred during validation: preflight exploded"),
    ],
)
def test_connector_boundary_asks_the_connector(answer: str, message: str | None) -> None:
    found = errors(distributed(), transaction_boundary="connector", boundary_answer=answer)
    assert found == ({} if message is None else {"transaction.boundary": [message]})


def test_poll_and_interval_boundaries_need_no_preflight() -> None:
    for boundary in ("poll", "interval"):
        assert errors(distributed(), transaction_boundary=boundary, boundary_answer="none") == {}


def test_bad_values_keep_only_their_own_error() -> None:
    found = errors(distributed(), exactly_once_support="always", transaction_boundary="never")
    assert set(found) == {"exactly.once.support", "transaction.boundary"}
    assert all("preflight" not in m for messages in found.values() for m in messages)


def test_standalone_skips_the_preflight(worker_config: WorkerConfig) -> None:
    # Kafka's StandaloneHerder has no exactly-once support: the keys are accepted unchecked.
    found = errors(
        worker_config, exactly_once_support="required", transaction_boundary="connector",
        eos_answer="none", boundary_answer="none",
    )  # fmt: skip
    assert found == {}


def test_file_source_supports_exactly_once_with_a_file() -> None:
    props = {
        "name": "f", "connector.class": "FileStreamSource", "topic": "t",
        "exactly.once.support": "required",
    }  # fmt: skip
    infos = validate_connector_config({**props, "file": "in.txt"}, PluginRegistry(), distributed())
    assert infos.infos.error_count == 0
    infos = validate_connector_config(props, PluginRegistry(), distributed())
    assert infos.infos.error_count == 1
