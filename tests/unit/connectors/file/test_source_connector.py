"""FileStreamSourceConnector: configs, task configs, exactly-once and offset checks."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.api.source import ExactlyOnceSupport
from sparkcat.connectors.file import FileStreamSourceConnector, FileStreamSourceTask

PROPS = {"name": "src", "file": "in.txt", "topic": "t"}


def test_one_task_with_the_connector_props() -> None:
    connector = FileStreamSourceConnector()
    connector.start(PROPS)
    assert connector.task_configs(5) == [PROPS]
    assert connector.task_class() is FileStreamSourceTask


def test_topic_is_required_and_single() -> None:
    with pytest.raises(ConfigError, match="topic"):
        FileStreamSourceConnector().start({"file": "x"})
    with pytest.raises(ConfigError, match="should only have a single topic"):
        FileStreamSourceConnector().start({"topic": "a,b"})


def test_validate_reports_config_errors() -> None:
    values = {v.name: v for v in FileStreamSourceConnector().validate({"topic": "a,b"})}
    assert any("single topic" in m for m in values["topic"].error_messages)
    values = {v.name: v for v in FileStreamSourceConnector().validate({"batch.size": "x"})}
    assert values["topic"].error_messages
    assert values["batch.size"].error_messages
    ok = FileStreamSourceConnector().validate(PROPS)
    assert [v.error_messages for v in ok] == [[], [], []]


def test_exactly_once_needs_a_file() -> None:
    connector = FileStreamSourceConnector()
    assert connector.exactly_once_support(PROPS) is ExactlyOnceSupport.SUPPORTED
    assert connector.exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.UNSUPPORTED


def test_alter_offsets_accepts_valid_offsets_and_tombstones() -> None:
    offsets: list[tuple[Any, Any]] = [
        ({"filename": "in.txt"}, {"position": 30}),
        ({"garbage": 1}, None),
    ]
    assert FileStreamSourceConnector().alter_offsets(PROPS, offsets) is True


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        ({"filename": "f"}, {}, "Offset objects should either be null or contain the key"),
        ({"filename": "f"}, {"position": "1"}, "expected to be a Long value"),
        ({"filename": "f"}, {"position": True}, "expected to be a Long value"),
        ({"filename": "f"}, {"position": -1}, "should be a non-negative value"),
        (None, {"position": 1}, "Partition objects cannot be null"),
        ({"file": "f"}, {"position": 1}, "Partition objects should contain the key 'filename'"),
    ],
)
def test_alter_offsets_rejects_malformed_offsets(partition: Any, offset: Any, message: str) -> None:
    with pytest.raises(ConnectError, match=message):
        FileStreamSourceConnector().alter_offsets(PROPS, [(partition, offset)])


def test_alter_offsets_needs_a_file() -> None:
    with pytest.raises(ConnectError, match="Offsets cannot be modified if the 'file'"):
        FileStreamSourceConnector().alter_offsets({"topic": "t"}, [])
