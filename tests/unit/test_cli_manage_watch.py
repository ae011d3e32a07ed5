"""``sparkcat connectors status --watch`` against a REST server on a free port over a herder
on the engine double (the test plays the engine's part: lease reports and task states)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.engine import NullEngine

from sparkcat.cli import main
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.metrics.counters import LeaseCounters
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

WORKER = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.file.filename": "/tmp/unused.offsets",
    "bootstrap.servers": "localhost:9092",
}


@pytest.fixture
def served() -> Iterator[tuple[str, StandaloneHerder]]:
    store = MemoryOffsetStore()
    herder = StandaloneHerder(WorkerConfig(WORKER), NullEngine(), store, PluginRegistry(), "w:1")
    server = RestServer(create_app(herder), "http://127.0.0.1:0").start()
    try:
        yield server.url.rstrip("/"), herder
    finally:
        server.stop()
        store.close()


def test_watch_redraws_states_and_rates(
    capsys: pytest.CaptureFixture[str], served: tuple[str, StandaloneHerder]
) -> None:
    url, herder = served
    herder.create_connector("src", {"connector.class": "FileStreamSource", "file": "in",
                                    "topic": "t"})  # fmt: skip
    herder.create_connector("snk", {"connector.class": "FileStreamSink", "file": "out",
                                    "topics": "t"})  # fmt: skip
    herder.on_lease_metrics("src", 0, LeaseCounters().report(False, 600, 600, 1.0))
    sink = LeaseCounters().report(True, 10, 10, 1.0, {"lag.max": 40, "lag": 40})
    herder.on_lease_metrics("snk", 0, sink)
    code = main(["connectors", "status", "--watch", "--interval", "0.01", "--iterations", "2",
                 "--url", url])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    frames = out.split("\x1b[H\x1b[2J")[1:]
    assert len(frames) == 2
    lines = frames[-1].splitlines()
    assert lines[1].split() == ["NAME", "TYPE", "STATE", "TASKS", "RUNNING", "RECORDS/S", "LAG"]
    assert lines[2].split()[:4] == ["snk", "sink", "RUNNING", "1/1"]
    assert lines[2].split()[-1] == "40"
    src = lines[3].split()
    assert src[:4] == ["src", "source", "RUNNING", "1/1"] and float(src[4]) > 0

    code = main(["connectors", "status", "src", "--watch", "--iterations", "1", "--url", url])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "src: RUNNING"
    assert lines[3].split()[:3] == ["0", "RUNNING", "w:1"]
    assert lines[3].split()[4] == "600"


def test_status_without_a_name_needs_watch(
    capsys: pytest.CaptureFixture[str], served: tuple[str, StandaloneHerder]
) -> None:
    assert main(["connectors", "status", "--url", served[0]]) == 2
    assert "needs a connector name" in capsys.readouterr().err
