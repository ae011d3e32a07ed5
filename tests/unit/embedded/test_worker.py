"""The worker config of an embedded member."""

from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.embedded.worker import JSON_CONVERTER, worker_properties
from sparkcat.runtime.distributed.config import DistributedConfig


def test_defaults_follow_the_app_id() -> None:
    props = worker_properties("orders", {}, rest=False)
    assert props["group.id"] == "orders"
    assert props["config.storage.topic"] == "orders-configs"
    assert props["offset.storage.topic"] == "orders-offsets"
    assert props["status.storage.topic"] == "orders-status"
    assert props["key.converter"] == props["value.converter"] == JSON_CONVERTER
    assert props["listeners"] == "http://127.0.0.1:0"
    assert props["rest.advertised.host.name"] == "127.0.0.1"
    config = DistributedConfig(props)
    assert config.uses_embedded_broker
    assert config.group_id == "orders"


def test_given_keys_win() -> None:
    given = {"offset.storage.topic": "shared-offsets", "value.converter": "StringConverter",
             "tasks.shutdown.graceful.timeout.ms": 1000, "topic.tracking.enable": True}  # fmt: skip
    props = worker_properties("orders", given, rest=False)
    assert props["offset.storage.topic"] == "shared-offsets"
    assert props["value.converter"] == "StringConverter"
    assert props["tasks.shutdown.graceful.timeout.ms"] == "1000"
    assert props["topic.tracking.enable"] == "true"


def test_rest_serves_kafkas_default_listener_unless_listeners_is_given() -> None:
    assert worker_properties("a", {}, rest=True)["listeners"] == "http://:8083"
    assert "rest.advertised.host.name" not in worker_properties("a", {}, rest=True)
    given = {"listeners": "http://127.0.0.1:18083"}
    assert worker_properties("a", given, rest=False)["listeners"] == "http://127.0.0.1:18083"


def test_an_invalid_worker_config_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"session\.timeout\.ms"):
        DistributedConfig(worker_properties("a", {"session.timeout.ms": "soon"}, rest=False))
