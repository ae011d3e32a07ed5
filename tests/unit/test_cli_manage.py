"""``sparkcat connectors ...`` / ``sparkcat plugins list`` against a REST server on a free port
over a herder on the engine double."""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import NullEngine

from sparkcat.cli import main
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
WORKER = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.file.filename": "/tmp/unused.offsets",
    "bootstrap.servers": "localhost:9092",
}


@pytest.fixture
def url() -> Iterator[str]:
    store = MemoryOffsetStore()
    herder = StandaloneHerder(WorkerConfig(WORKER), NullEngine(), store, PluginRegistry(), "w:1")
    server = RestServer(create_app(herder), "http://127.0.0.1:0").start()
    try:
        yield server.url.rstrip("/")
    finally:
        server.stop()
        store.close()


def run(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--url", url])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_lifecycle(capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path) -> None:
    assert run(capsys, url, "connectors", "list") == (0, "No connectors.\n", "")
    request = write(tmp_path, "c.json", {"name": "src", "config": SOURCE})
    code, out, _ = run(capsys, url, "connectors", "create", request)
    assert code == 0 and out.startswith("src (source), tasks: 1\n")
    code, out, _ = run(capsys, url, "connectors", "list")
    assert out.splitlines() == [
        "NAME  TYPE    STATE    TASKS RUNNING", "src   source  RUNNING  1/1"
    ]  # fmt: skip
    code, out, _ = run(capsys, url, "connectors", "status", "src")
    assert out.splitlines()[0] == "src (source): RUNNING on w:1"
    assert out.splitlines()[2].split() == ["0", "RUNNING", "w:1"]
    code, out, _ = run(capsys, url, "connectors", "get", "src", "--json")
    assert json.loads(out)["config"] == {**SOURCE, "name": "src"}
    for command, done in (("pause", "Paused"), ("resume", "Resumed"), ("stop", "Stopped")):
        assert run(capsys, url, "connectors", command, "src") == (
            0, f"{done} connector src.\n", ""
        )  # fmt: skip
    offsets = write(tmp_path, "o.json", {"offsets": [
        {"partition": {"filename": "in.txt"}, "offset": {"position": 12}}]})  # fmt: skip
    code, out, _ = run(capsys, url, "connectors", "offsets", "src", "--alter", offsets)
    assert (code, out) == (0, "The offsets for this connector have been altered successfully\n")
    code, out, _ = run(capsys, url, "connectors", "offsets", "src")
    assert out.splitlines() == ['PARTITION              OFFSET',
                                '{"filename":"in.txt"}  {"position":12}']  # fmt: skip
    code, out, _ = run(capsys, url, "connectors", "offsets", "src", "--json")
    assert json.loads(out)["offsets"][0]["offset"] == {"position": 12}
    code, out, _ = run(capsys, url, "connectors", "offsets", "src", "--reset")
    assert out == "The offsets for this connector have been reset successfully\n"
    assert run(capsys, url, "connectors", "resume", "src")[0] == 0
    code, out, _ = run(capsys, url, "connectors", "restart", "src")
    assert out == "Restarted connector src.\n"
    code, out, _ = run(capsys, url, "connectors", "restart", "src", "--include-tasks")
    assert out.splitlines()[0] == "src (source): RESTARTING on w:1"
    assert out.splitlines()[2].split()[:2] == ["0", "RESTARTING"]
    assert run(capsys, url, "connectors", "delete", "src") == (0, "Deleted connector src.\n", "")
    assert run(capsys, url, "connectors", "list", "--json")[1] == "{}\n"


def test_create_from_properties(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path
) -> None:
    props = "name=p\n" + "".join(f"{k}={v}\n" for k, v in SOURCE.items())
    code, out, _ = run(capsys, url, "connectors", "create", write(tmp_path, "p.properties", props))
    assert code == 0 and "p (source)" in out


def test_plugins(capsys: pytest.CaptureFixture[str], url: str) -> None:
    code, out, _ = run(capsys, url, "plugins", "list")
    lines = out.splitlines()
    assert lines[0].split() == ["CLASS", "TYPE", "VERSION"]
    with urllib.request.urlopen(f"{url}/connector-plugins") as answer:
        plugins = json.load(answer)
    assert [line.split() for line in lines[1:]] == [
        [p["class"], p["type"], p["version"]] for p in plugins
    ]
    assert ["org.apache.kafka.connect.file.FileStreamSinkConnector", "sink"] in [
        line.split()[:2] for line in lines[1:]
    ]
    code, out, _ = run(capsys, url, "plugins", "list", "--all", "--json")
    assert code == 0
    assert "converter" in {p["type"] for p in json.loads(out)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["connectors", "get", "nope"], "sparkcat: 404: Connector nope not found\n"),
        (["connectors", "stop", "nope"], "sparkcat: 500: No connector `nope` configured\n"),
        (["connectors", "offsets", "nope", "--reset"], "sparkcat: 404: Connector nope not found\n"),
    ],
)
def test_error_answers(
    capsys: pytest.CaptureFixture[str], url: str, args: list[str], message: str
) -> None:
    assert run(capsys, url, *args) == (2, "", message)


def test_invalid_config_is_one_line(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path
) -> None:
    request = write(
        tmp_path, "bad.json", {"name": "b", "config": {"connector.class": "FileStreamSink"}}
    )
    code, out, err = run(capsys, url, "connectors", "create", request)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("sparkcat: 400: Connector configuration is invalid")


def test_usage_and_file_errors(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path
) -> None:
    code, _, err = run(capsys, url, "connectors", "frobnicate")
    assert code == 2 and err.count("\n") == 1 and "invalid choice" in err
    code, _, err = run(capsys, url, "connectors", "create", str(tmp_path / "missing.json"))
    assert code == 2 and err.startswith("sparkcat: cannot read connector config")
    alter = write(tmp_path, "o.json", "{not json")
    code, _, err = run(capsys, url, "connectors", "offsets", "x", "--alter", alter)
    assert code == 2 and err.startswith("sparkcat: invalid JSON in")


def test_connection_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    code, out, err = run(capsys, f"http://127.0.0.1:{port}", "connectors", "list")
    assert (code, out) == (2, "")
    assert err.startswith(f"sparkcat: cannot reach the worker at http://127.0.0.1:{port}")
    assert err.count("\n") == 1
