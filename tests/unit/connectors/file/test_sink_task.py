"""FileStreamSinkTask, driven directly (no Spark, no Kafka)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.connectors.file import FileStreamSinkTask

TP = TopicPartition("t", 0)


def _record(value: object, offset: int) -> SinkRecord:
    return SinkRecord("t", 0, None, None, None, value, offset)


def test_put_writes_lines_and_flush_makes_them_visible(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("before\n", encoding="utf-8")
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([_record("héllo", 0), _record(None, 1), _record(42, 2), _record(True, 3)])
    task.put([])
    assert task.pre_commit({TP: 4}) == {TP: 4}
    assert path.read_text(encoding="utf-8") == "before\nhéllo\nnull\n42\ntrue\n"
    task.put([_record("more", 4)])
    task.flush({TP: 5})
    assert path.read_text(encoding="utf-8").endswith("true\nmore\n")
    task.stop()


def test_put_reaches_the_file_before_any_flush(tmp_path: Path) -> None:
    # Like Kafka's PrintStream: lines are visible while the lease runs, never half written.
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([_record(f"line-{i}", i) for i in range(3000)])
    assert path.read_text(encoding="utf-8").splitlines() == [f"line-{i}" for i in range(3000)]
    task.stop()


def test_without_file_writes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    task = FileStreamSinkTask()
    task.start({})
    task.put([_record("to stdout", 0)])
    task.flush({TP: 1})
    task.stop()
    assert capsys.readouterr().out == "to stdout\n"
