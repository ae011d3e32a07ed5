"""The CLI's argument and file errors: one line ``sparkcat: <reason>``, exit 2, nothing
started. (Runs that start the broker and Spark are end-to-end tests.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sparkcat
from sparkcat.cli import main, read_connector_file, standalone_main

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "config" / "connect-standalone.properties"
SOURCE = REPO / "config" / "connect-file-source.properties"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    err = capsys.readouterr().err
    return code, err


def assert_one_line(err: str, fragment: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sparkcat: ") and fragment in lines[0], err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sparkcat {sparkcat.__version__}"


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        ([], "usage: sparkcat standalone WORKER.properties"),
        (["standalone"], "usage: sparkcat standalone WORKER.properties"),
        (["distributed"], "usage: sparkcat distributed WORKER.properties"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str], usage: str) -> None:
    code, err = run(capsys, *args)
    assert code == 2
    assert_one_line(err, usage)


def test_unreadable_worker_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run(capsys, "standalone", str(tmp_path / "missing.properties"))
    assert code == 2
    assert_one_line(err, "cannot read worker config")


def test_invalid_worker_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    worker = tmp_path / "w.properties"
    worker.write_text("key.converter=JsonConverter\n")
    code, err = run(capsys, "standalone", str(worker))
    assert code == 2
    assert_one_line(err, "invalid worker config")
    assert 'Missing required configuration "value.converter"' in err


@pytest.mark.parametrize(
    ("content", "suffix", "fragment"),
    [
        ("{not json", ".json", "invalid JSON in connector config"),
        ("[1, 2]", ".json", "must be a JSON object"),
        ("connector.class=FileStreamSource\n", ".properties", "has no 'name'"),
        ('{"name": "a", "config": {"name": "b"}}', ".json", "doesn't match connector name"),
        ("name=x\nconnector.class=FileStreamSink\n", ".properties",
         "Must configure one of topics or topics.regex"),
        ("name=x\nconnector.class=Nope\n", ".properties",
         "Failed to find any class that implements Connector"),
    ],
)  # fmt: skip
def test_invalid_connector_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, suffix: str, fragment: str
) -> None:
    connector = tmp_path / f"c{suffix}"
    connector.write_text(content)
    code, err = run(capsys, "standalone", str(WORKER), str(connector))
    assert code == 2
    assert_one_line(err, fragment)


def test_missing_connector_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run(capsys, "standalone", str(WORKER), str(tmp_path / "gone.json"))
    assert code == 2
    assert_one_line(err, "cannot read connector config")


def test_connect_standalone_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    assert standalone_main([]) == 2
    assert_one_line(capsys.readouterr().err, "usage")


def test_connector_file_forms(tmp_path: Path) -> None:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"name": "a", "connector.class": "X", "tasks.max": 2}))
    request = read_connector_file(str(flat))
    assert request.config == {"name": "a", "connector.class": "X", "tasks.max": "2"}
    wrapped = tmp_path / "req.json"
    wrapped.write_text(json.dumps({"name": "b", "config": {"connector.class": "X"},
                                   "initial_state": "PAUSED"}))  # fmt: skip
    request = read_connector_file(str(wrapped))
    assert (request.name, request.config["name"], request.initial_state) == ("b", "b", "PAUSED")
    assert read_connector_file(str(SOURCE)).name == "local-file-source"


def test_subprocess_reports_one_line_and_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sparkcat.cli", "standalone", str(tmp_path / "none.properties")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"sparkcat: cannot read worker config {tmp_path / 'none.properties'}: "
        "No such file or directory"
    ]
