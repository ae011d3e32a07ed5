"""SIGTERM/SIGINT stop a worker gracefully at any moment of start-up: exit code 0 and one line
saying so, whichever mode (the assemblies install the handlers before starting anything).

The signal is sent as soon as the REST server listens, while Spark's session is still being
built in the background (a cold one takes several seconds).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from tests.support.ports import free_port

from sparkcat.assembly.process import SHUTDOWN_LINE

START_TIMEOUT_S = 120.0
JSON = "org.apache.kafka.connect.json.JsonConverter"


def _properties(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def _stop_while_starting(args: list[str], ready: str, sig: signal.Signals, cwd: Path) -> str:
    """Run ``sparkcat ARGS``, send ``sig`` once a stderr line contains ``ready``; its stderr
    after the signal (asserting exit code 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparkcat.cli", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd,
    )  # fmt: skip
    assert proc.stderr is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    before: list[str] = []
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            before.append(line)
            if ready in line or not line:
                break
        assert any(ready in line for line in before), "".join(before)
        assert not any("session ready" in line for line in before), "Spark was already up"
        proc.send_signal(sig)
        after = proc.stderr.read()
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert code == 0, "".join(before) + after
    return after


def _assert_one_clean_stop(after: str) -> None:
    lines = after.splitlines()
    assert sum(SHUTDOWN_LINE in line for line in lines) == 1, after
    assert not [line for line in lines if " INFO " not in line], after  # no trace, no warning


@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_standalone_stops_cleanly_while_spark_starts(tmp_path: Path, sig: signal.Signals) -> None:
    worker = _properties(tmp_path / "worker.properties", {
        "bootstrap.servers": "embedded",
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
        "listeners": f"http://127.0.0.1:{free_port()}",
    })  # fmt: skip
    after = _stop_while_starting(
        ["standalone", str(worker)], "REST server listening", sig, tmp_path
    )
    _assert_one_clean_stop(after)
    assert "Stopped embedded Kafka-compatible broker" in after  # the last part stopped, too


@pytest.mark.spark
@pytest.mark.broker
def test_distributed_stops_cleanly_while_spark_starts(tmp_path: Path, kafka_broker: object) -> None:
    prefix = f"signals-{uuid.uuid4().hex[:8]}"
    worker = _properties(tmp_path / "worker.properties", {
        "bootstrap.servers": str(kafka_broker),
        "group.id": f"{prefix}-group",
        "config.storage.topic": f"{prefix}-configs",
        "offset.storage.topic": f"{prefix}-offsets",
        "status.storage.topic": f"{prefix}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": JSON,
        "value.converter": JSON,
        "listeners": f"http://127.0.0.1:{free_port()}",
        "rest.advertised.host.name": "127.0.0.1",
    })  # fmt: skip
    after = _stop_while_starting(
        ["distributed", str(worker)], "Connect member", signal.SIGTERM, tmp_path
    )
    _assert_one_clean_stop(after)
