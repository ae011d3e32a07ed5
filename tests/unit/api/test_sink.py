"""Contracts and defaults of the sink API (sparkcat.api.sink)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Task
from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import (
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
    SinkConnector,
    SinkTask,
    SinkTaskContext,
)

TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


class _Context(SinkTaskContext):
    def __init__(self) -> None:
        self.resets: list[dict[TopicPartition, int]] = []

    def configs(self) -> dict[str, str]:
        return {}

    def _reset_offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.resets.append(offsets)

    def timeout(self, timeout_ms: int) -> None:
        pass

    def assignment(self) -> set[TopicPartition]:
        return {TP0}

    def pause(self, *partitions: TopicPartition) -> None:
        pass

    def resume(self, *partitions: TopicPartition) -> None:
        pass

    def request_commit(self) -> None:
        pass


class _Task(SinkTask):
    def __init__(self) -> None:
        self.flushed: list[dict[TopicPartition, int]] = []
        self.written: list[SinkRecord] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        self.written.extend(records)

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        self.flushed.append(dict(current_offsets))

    def stop(self) -> None:
        pass


def test_config_constants() -> None:
    assert (TOPICS_CONFIG, TOPICS_REGEX_CONFIG) == ("topics", "topics.regex")


def test_pre_commit_flushes_and_returns_the_offsets() -> None:
    task = _Task()
    offsets = {TP0: 10, TP1: 3}
    assert task.pre_commit(offsets) == offsets
    assert task.flushed == [offsets]


def test_context_offset_accepts_one_partition_or_a_map() -> None:
    context = _Context()
    context.offset(TP0, 5)
    context.offset({TP0: 1, TP1: 2})
    assert context.resets == [{TP0: 5}, {TP0: 1, TP1: 2}]
    with pytest.raises(TypeError):
        context.offset(TP0)  # type: ignore[call-overload]
    assert context.errant_record_reporter() is None


def test_sink_task_defaults_and_initialize() -> None:
    task, context = _Task(), _Context()
    task.initialize(context)
    assert task.context is context
    task.open([TP0])
    task.put([])
    task.close([TP0])
    assert task.written == []


def test_sink_connector_alter_offsets_defaults_to_false() -> None:
    class Conn(SinkConnector):
        def version(self) -> str:
            return "1"

        def start(self, props: dict[str, str]) -> None:
            pass

        def task_class(self) -> type[Task]:
            return _Task

        def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
            return [{}] * max_tasks

        def stop(self) -> None:
            pass

        def config(self) -> ConfigDef:
            return ConfigDef()

    assert Conn().alter_offsets({}, {TP0: None, TP1: 4}) is False
