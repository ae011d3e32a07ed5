"""A real ``sparkcat standalone`` worker (Spark, the session broker) driven over HTTP:
create → status → pause → resume → stop → alter offsets → resume → delete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.ports import free_port
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

LINES = 50
START_TIMEOUT_S = 240.0
STEP_TIMEOUT_S = 120.0
# A request that fails while the worker starts or is busy counts as "not yet".
HTTP = (httpx.HTTPError,)


def until(probe: Callable[[], Any], what: str) -> Any:
    """One step of the lifecycle, within STEP_TIMEOUT_S."""
    return wait_for(probe, STEP_TIMEOUT_S, what, retry_on=HTTP)


@pytest.fixture
def worker(kafka_broker: Any, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    props = tmp_path / "worker.properties"
    props.write_text(
        f"bootstrap.servers={kafka_broker.bootstrap_servers}\n"
        f"listeners=http://127.0.0.1:{port}\n"
        f"offset.storage.file.filename={tmp_path / 'offsets.json'}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "max.batch.ms=500\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "sparkcat.cli", "standalone", str(props)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(f"{url}/health", timeout=15).status_code == 200,
                 START_TIMEOUT_S, "the worker to be healthy", retry_on=HTTP)  # fmt: skip
        yield url, tmp_path
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def state(client: httpx.Client, name: str) -> str:
    response = client.get(f"/connectors/{name}/status")
    return str(response.json()["connector"]["state"]) if response.status_code == 200 else ""


def position(client: httpx.Client, name: str) -> int:
    offsets = client.get(f"/connectors/{name}/offsets").json()["offsets"]
    return int(offsets[0]["offset"]["position"]) if offsets else -1


def test_lifecycle_over_http(worker: tuple[str, Path], unique_topic: Callable[[str], str]) -> None:
    url, tmp_path = worker
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(LINES)), encoding="utf-8")
    size = source_file.stat().st_size
    config = {"connector.class": "FileStreamSource", "file": str(source_file),
              "topic": unique_topic("rest"), "tasks.max": "1"}  # fmt: skip
    with httpx.Client(base_url=url, timeout=100) as client:
        rejects_nulls_and_reports_one_parse_error(client, config)
        created = client.post("/connectors", json={"name": "src", "config": config})
        assert created.status_code == 201, created.text
        null_put = client.put("/connectors/src/config", json={**config, "batch.size": None})
        assert null_put.status_code == 400
        assert client.get("/connectors/src/config").json() == {**config, "name": "src"}
        assert created.headers["location"] == f"{url}/connectors/src"
        until(lambda: state(client, "src") == "RUNNING", "RUNNING")
        assert client.get("/connectors/src/status").json()["tasks"][0]["id"] == 0

        assert client.put("/connectors/src/pause").status_code == 202
        until(lambda: state(client, "src") == "PAUSED", "PAUSED")
        assert client.put("/connectors/src/resume").status_code == 202
        until(lambda: state(client, "src") == "RUNNING", "RUNNING again")
        until(lambda: position(client, "src") == size, "the whole file to be copied")

        assert client.put("/connectors/src/stop").status_code == 204
        until(lambda: state(client, "src") == "STOPPED", "STOPPED")
        rewind = {"offsets": [{"partition": {"filename": str(source_file)},
                               "offset": {"position": 0}}]}  # fmt: skip
        altered = client.patch("/connectors/src/offsets", json=rewind)
        assert altered.status_code == 200, altered.text
        assert "altered successfully" in altered.json()["message"]
        assert position(client, "src") == 0

        assert client.put("/connectors/src/resume").status_code == 202
        until(lambda: state(client, "src") == "RUNNING", "RUNNING after the rewind")
        until(lambda: position(client, "src") == size, "the file to be copied again")
        topics = client.get("/connectors/src/topics").json()["src"]["topics"]
        assert topics == [config["topic"]]  # topic tracking (KIP-558)

        assert client.delete("/connectors/src").status_code == 204
        assert client.get("/connectors").json() == []
        assert client.get("/connectors/src/status").status_code == 404


INVALID = "Connector configuration is invalid and contains the following 1 error(s):\n"


def rejects_nulls_and_reports_one_parse_error(client: httpx.Client, config: dict[str, str]) -> None:
    """Kafka's answers for a JSON ``null`` value and an unparsable one; nothing is created."""
    null = client.post("/connectors", json={"name": "n", "config": {**config, "batch.size": None}})
    assert null.status_code == 400
    assert null.json()["message"].startswith(
        INVALID + "Null value can not be supplied as the configuration value.\n"
    )
    bad = client.post("/connectors", json={"name": "b", "config": {**config, "tasks.max": "abc"}})
    assert bad.status_code == 400
    assert bad.json()["message"].startswith(
        INVALID + "Invalid value abc for configuration tasks.max: Not a number of type INT\n"
    )
    validate = client.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={**config, "name": "v", "batch.size": None, "tasks.max": "abc"},
    ).json()
    assert validate["error_count"] == 2
    assert client.put("/connectors/p/config", json={**config, "topic": None}).status_code == 400
    assert client.get("/connectors").json() == []
