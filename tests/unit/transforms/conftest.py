"""Shared fixtures for SMT tests: records of both kinds with data on the key or the value side,
and an ``apply`` that checks the input record is left untouched."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from sparkcat.api.data import Schema
from sparkcat.api.records import ConnectRecord, Header, Headers, SinkRecord, SourceRecord

TIMESTAMP = 1_700_000_000_123


def make_record(
    kind: str,
    key_schema: Schema | None = None,
    key: Any = None,
    value_schema: Schema | None = None,
    value: Any = None,
    topic: str = "topic",
    partition: int | None = 3,
    timestamp: int | None = TIMESTAMP,
    headers: list[Header] | None = None,
) -> ConnectRecord:
    hdrs = Headers(headers or ())
    if kind == "source":
        return SourceRecord(
            {"file": "f"}, {"pos": 1}, topic, partition, key_schema, key, value_schema, value,
            timestamp, hdrs,
        )  # fmt: skip
    return SinkRecord(
        topic, partition, key_schema, key, value_schema, value, 42, timestamp, headers=hdrs
    )


@dataclass
class Side:
    """Which side of the record a variant works on, and helpers to build/read that side."""

    name: str  # "Key" or "Value"
    kind: str  # "source" or "sink"

    def record(self, schema: Schema | None, data: Any, **kwargs: Any) -> ConnectRecord:
        other = {"key": "other-key"} if self.name == "Value" else {"value": "other-value"}
        if self.name == "Key":
            return make_record(self.kind, key_schema=schema, key=data, **other, **kwargs)
        return make_record(self.kind, value_schema=schema, value=data, **other, **kwargs)

    def schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema if self.name == "Key" else record.value_schema

    def data(self, record: ConnectRecord) -> Any:
        return record.key if self.name == "Key" else record.value

    def other_unchanged(self, before: ConnectRecord, after: ConnectRecord) -> bool:
        if self.name == "Key":
            return after.value == before.value and after.value_schema == before.value_schema
        return after.key == before.key and after.key_schema == before.key_schema

    def variant(self, smt: type) -> Any:
        return getattr(smt, self.name)()


@pytest.fixture(params=["Key", "Value"])
def side_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["source", "sink"])
def record_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def side(side_name: str, record_kind: str) -> Side:
    return Side(side_name, record_kind)


@pytest.fixture
def apply() -> Callable[[Any, ConnectRecord], Any]:
    """Apply ``transform`` to ``record`` and assert the record did not change."""

    def run(transform: Any, record: ConnectRecord) -> Any:
        before = copy.deepcopy(record)
        result = transform.apply(record)
        assert record == before, "apply() mutated its input"
        if result is not None and result is not record:
            assert type(result) is type(record)
            assert result.headers is not None
        return result

    return run
