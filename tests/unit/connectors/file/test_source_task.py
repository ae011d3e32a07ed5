"""FileStreamSourceTask driven directly, with an in-test context (no Spark, no Kafka)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sparkcat.api.data import STRING_SCHEMA
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import OffsetStorageReader, SourceTaskContext
from sparkcat.connectors.file import FileStreamSourceTask


class _Reader(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]]) -> None:
        self.stored = stored
        self.asked: list[dict[str, Any]] = []

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        self.asked.append(dict(partition))
        return self.stored.get(partition["filename"])


class _Context(SourceTaskContext):
    def __init__(self, props: dict[str, str], stored: dict[str, dict[str, Any]]) -> None:
        self.props = props
        self.reader = _Reader(stored)

    def configs(self) -> dict[str, str]:
        return self.props

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def _task(
    path: Path, stored: dict[str, dict[str, Any]] | None = None, **extra: str
) -> FileStreamSourceTask:
    props = {"file": str(path), "topic": "lines", **extra}
    task = FileStreamSourceTask()
    task.idle_wait_s = 0.01
    task.initialize(_Context(props, stored or {}))
    task.start(props)
    return task


def _values(records: list[SourceRecord] | None) -> list[str]:
    return [r.value for r in records or []]


def _positions(records: list[SourceRecord] | None) -> list[int]:
    return [r.source_offset["position"] for r in records or []]  # type: ignore[index]


def test_lines_become_records_with_byte_positions(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"hello\nw\xc3\xb6rld\n\nlast\n")
    task = _task(path)
    records = task.poll()
    assert _values(records) == ["hello", "wörld", "", "last"]
    assert _positions(records) == [6, 13, 14, 19]
    first = records[0]  # type: ignore[index]
    assert first.source_partition == {"filename": str(path)}
    assert (first.topic, first.kafka_partition, first.key, first.key_schema) == (
        "lines",
        None,
        None,
        None,
    )
    assert first.value_schema == STRING_SCHEMA
    assert isinstance(first.timestamp, int)
    task.stop()
    task.stopped()


def test_crlf_and_lone_cr_terminate_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\rc\nd\r")
    task = _task(path)
    records = task.poll()
    # The trailing \r may start a \r\n, so "d" waits for the next byte.
    assert _values(records) == ["a", "b", "c"]
    assert _positions(records) == [3, 5, 7]
    with path.open("ab") as f:
        f.write(b"\ne\n")
    more = task.poll()
    assert _values(more) == ["d", "e"]
    assert _positions(more) == [10, 12]
    task.stopped()


def test_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntw")
    task = _task(path)
    assert _values(task.poll()) == ["one"]
    assert task.poll() is None
    with path.open("ab") as f:
        f.write(b"o\nthree\n")
    records = task.poll()
    assert _values(records) == ["two", "three"]
    assert _positions(records) == [8, 14]
    task.stopped()


def test_resumes_from_the_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntwo\nthree\n")
    task = _task(path, {str(path): {"position": 4}})
    records = task.poll()
    assert _values(records) == ["two", "three"]
    assert _positions(records) == [8, 14]
    task.stopped()


def test_a_stored_position_of_the_wrong_type_fails(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\n")
    task = _task(path, {str(path): {"position": "4"}})
    with pytest.raises(ConnectError, match="Offset position is the incorrect type"):
        task.poll()


def test_a_file_that_appears_later_is_read(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = _task(path)
    assert task.poll() is None
    assert task.poll() is None
    path.write_bytes(b"finally\n")
    assert _values(task.poll()) == ["finally"]
    task.stopped()


def test_batch_size_caps_records_per_poll_without_losing_any(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    lines = [f"line-{i}" for i in range(25)]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="ascii")
    task = _task(path, **{"batch.size": "10"})
    batches = [task.poll() for _ in range(3)]
    assert [len(b or []) for b in batches] == [10, 10, 5]
    got = [r for b in batches for r in b or []]
    assert _values(got) == lines
    assert _positions(got)[-1] == path.stat().st_size
    assert task.poll() is None
    task.stopped()


def test_batch_size_caps_lines_with_carriage_returns(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    task = _task(path, **{"batch.size": "2"})
    assert _values(task.poll()) == ["a", "b"]
    records = task.poll()
    assert _values(records) == ["c"]
    assert _positions(records) == [9]
    task.stopped()


def test_missing_topic_and_bad_batch_size_fail_at_start(tmp_path: Path) -> None:
    task = FileStreamSourceTask()
    with pytest.raises(ConnectError, match="missing topic"):
        task.start({"file": str(tmp_path / "x")})
    with pytest.raises(ConnectError, match="Invalid FileStreamSourceTask configuration"):
        task.start({"file": str(tmp_path / "x"), "topic": "t", "batch.size": "many"})


def test_poll_after_stop_returns_nothing(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"x\n")
    task = _task(path)
    task.stop()
    assert task.poll() is None
    task.stopped()
