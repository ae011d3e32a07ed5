"""FileStreamSinkConnector: task configs, its task class and offset changes."""

from __future__ import annotations

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.file import FileStreamSinkConnector, FileStreamSinkTask

TP = TopicPartition("t", 0)


def test_connector_gives_max_tasks_copies_and_accepts_offset_changes() -> None:
    connector = FileStreamSinkConnector()
    props = {"file": "out.txt", "topics": "t"}
    connector.start(props)
    assert connector.task_configs(3) == [props, props, props]
    assert connector.task_class() is FileStreamSinkTask
    assert connector.alter_offsets(props, {TP: 5}) is True
