"""Contracts and defaults of the source API (sparkcat.api.source)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Task
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    OffsetStorageReader,
    RecordMetadata,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
)


class _Reader(OffsetStorageReader):
    def __init__(self, stored: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        self._stored = stored

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        for p, o in self._stored:
            if p == dict(partition):
                return o
        return None


class _Context(SourceTaskContext):
    def configs(self) -> dict[str, str]:
        return {"a": "b"}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return _Reader([])


class _Task(SourceTask):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class _Connector(SourceConnector):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[Task]:
        return _Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


def test_offsets_returns_pairs_for_partitions_with_offsets_in_order() -> None:
    reader = _Reader([({"f": "b"}, {"pos": 2}), ({"f": "a"}, {"pos": 1})])
    pairs = reader.offsets([{"f": "a"}, {"f": "missing"}, {"f": "b"}])
    assert pairs == [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})]


def test_source_connector_defaults() -> None:
    connector = _Connector()
    assert connector.exactly_once_support({}) is None
    assert (
        connector.can_define_transaction_boundaries({})
        is ConnectorTransactionBoundaries.UNSUPPORTED
    )
    assert connector.alter_offsets({}, [({"f": "a"}, None)]) is False
    assert {e.value for e in ExactlyOnceSupport} == {"SUPPORTED", "UNSUPPORTED"}


def test_source_task_lifecycle_hooks_default_to_nothing() -> None:
    task, context = _Task(), _Context()
    task.initialize(context)
    assert task.context is context
    assert task.context.transaction_context() is None
    task.start({"x": "y"})
    record = SourceRecord({"p": 1}, {"o": 1}, "t", value="v")
    task.commit_record(record, RecordMetadata("t", 0, 10, 123))
    task.commit_record(record, None)
    task.commit()
    task.stop()
    task.stopped()
    assert task.poll() is None


def test_poll_is_abstract() -> None:
    class NoPoll(SourceTask):
        def version(self) -> str:
            return "1"

        def start(self, props: dict[str, str]) -> None:
            pass

        def stop(self) -> None:
            pass

    with pytest.raises(TypeError):
        NoPoll()  # type: ignore[abstract]
