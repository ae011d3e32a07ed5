from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer, parse_listener
from sparkcat.runtime.standalone.herder import StandaloneHerder

with warnings.catch_warnings():
    # starlette deprecates its httpx-based TestClient in favour of httpx2 (not installed).
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SINK = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt"}


@pytest.fixture
def client(herder: StandaloneHerder) -> Iterator[TestClient]:
    with TestClient(create_app(herder), raise_server_exceptions=False) as test_client:
        yield test_client


def create(client: TestClient, name: str = "s", **extra: Any) -> httpx.Response:
    return client.post("/connectors", json={"name": name, "config": SINK, **extra})


def test_root(client: TestClient) -> None:
    body = client.get("/").json()
    assert set(body) == {"version", "commit", "kafka_cluster_id"}


def test_create_and_read(client: TestClient) -> None:
    response = create(client)
    assert response.status_code == 201
    assert response.headers["location"] == "http://testserver/connectors/s"
    info = {"name": "s", "config": {**SINK, "name": "s"},
            "tasks": [{"connector": "s", "task": 0}], "type": "sink"}  # fmt: skip
    assert response.json() == info
    assert client.get("/connectors").json() == ["s"]
    assert client.get("/connectors/s").json() == info
    assert client.get("/connectors/s/config").json() == {**SINK, "name": "s"}
    assert client.get("/connectors/s/status").json() == {
        "name": "s", "connector": {"state": "RUNNING", "worker_id": "test:8083"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "test:8083"}], "type": "sink",
    }  # fmt: skip
    assert client.get("/connectors/s/tasks/0/status").json() == {
        "id": 0, "state": "RUNNING", "worker_id": "test:8083"
    }  # fmt: skip
    tasks = client.get("/connectors/s/tasks").json()
    assert tasks[0]["id"] == {"connector": "s", "task": 0}
    assert tasks[0]["config"]["task.class"] == "org.apache.kafka.connect.file.FileStreamSinkTask"
    expanded = client.get("/connectors", params=[("expand", "status"), ("expand", "info")]).json()
    assert expanded["s"]["info"] == info


def test_scalar_config_values_become_strings(client: TestClient) -> None:
    response = client.post("/connectors", json={"name": "s", "config": {**SINK, "tasks.max": 2}})
    assert response.json()["config"]["tasks.max"] == "2"


@pytest.mark.parametrize(
    ("method", "path", "status", "message"),
    [
        ("get", "/connectors/x", 404, "Connector x not found"),
        ("get", "/connectors/x/status", 404, "No status found for connector x"),
        ("get", "/connectors/x/tasks/0/status", 404, "No status found for task x-0"),
        ("delete", "/connectors/x", 404, "Connector x not found"),
        ("put", "/connectors/x/pause", 404, "Unknown connector x"),
        ("put", "/connectors/x/resume", 404, "Unknown connector x"),
        ("put", "/connectors/x/stop", 500, "No connector `x` configured"),
        ("post", "/connectors/x/restart", 404, "Connector x not found"),
        ("get", "/no/such/path", 404, "HTTP 404 Not Found"),
        ("delete", "/connectors", 405, "HTTP 405 Method Not Allowed"),
    ],
)
def test_errors(client: TestClient, method: str, path: str, status: int, message: str) -> None:
    response = client.request(method.upper(), path)
    assert response.status_code == status
    assert response.json() == {"error_code": status, "message": message}


def test_create_errors(client: TestClient) -> None:
    assert create(client).status_code == 201
    assert create(client).json() == {"error_code": 409, "message": "Connector s already exists"}
    bad = client.post(
        "/connectors", json={"name": "b", "config": {"connector.class": "FileStreamSink"}}
    )
    assert bad.status_code == 400
    assert bad.json()["message"].startswith(
        "Connector configuration is invalid and contains the following 2 error(s):\n"
    )
    mismatch = client.post("/connectors", json={"name": "a", "config": {**SINK, "name": "b"}})
    assert mismatch.json() == {
        "error_code": 400,
        "message": "Connector name configuration (b) doesn't match connector name in the URL (a)",
    }
    unknown = client.post("/connectors", json={"name": "u", "config": {"connector.class": "X"}})
    assert unknown.status_code == 500
    assert "Failed to find any class that implements Connector" in unknown.json()["message"]


def test_malformed_json_is_400(client: TestClient) -> None:
    response = client.post("/connectors", content=b"{not json",
                           headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error_code"] == 400


def test_lifecycle_status_codes(client: TestClient) -> None:
    create(client)
    pause = client.put("/connectors/s/pause")
    assert (pause.status_code, pause.content) == (202, b"")
    assert client.get("/connectors/s/status").json()["connector"]["state"] == "PAUSED"
    assert client.put("/connectors/s/resume").status_code == 202
    assert client.post("/connectors/s/restart").status_code == 204
    plan = client.post("/connectors/s/restart", params={"includeTasks": "true"})
    assert plan.status_code == 202
    assert plan.json()["tasks"][0]["state"] == "RESTARTING"
    assert client.post("/connectors/s/tasks/0/restart").status_code == 204
    stop = client.put("/connectors/s/stop")
    assert (stop.status_code, stop.content) == (204, b"")
    assert client.get("/connectors/s/status").json()["connector"]["state"] == "STOPPED"
    assert client.delete("/connectors/s").status_code == 204
    assert client.get("/connectors").json() == []


def test_initial_state(client: TestClient) -> None:
    assert create(client, initial_state="PAUSED").status_code == 201
    assert client.get("/connectors/s/status").json()["connector"]["state"] == "PAUSED"


@pytest.mark.parametrize(
    ("listener", "expected"),
    [("http://:8083", ("0.0.0.0", 8083)), ("HTTP://localhost:9000", ("localhost", 9000))],
)
def test_parse_listener(listener: str, expected: tuple[str, int]) -> None:
    assert parse_listener(listener) == ("http", *expected)


def test_rest_server_serves_on_a_free_port(herder: StandaloneHerder) -> None:
    server = RestServer(create_app(herder), "http://127.0.0.1:0").start()
    try:
        assert server.port > 0
        assert httpx.get(f"{server.url}connectors", timeout=5).json() == []
    finally:
        server.stop()
