"""Routes beyond the lifecycle: health, PUT/PATCH config, tasks-config, topics, internal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.standalone.herder import StandaloneHerder

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}


def error(status: int, message: str) -> dict[str, Any]:
    return {"error_code": status, "message": message}


def test_health_is_503_until_ready_then_200(
    worker_config: Any, engine: Any, offset_store: Any
) -> None:
    from sparkcat.runtime.isolation.plugins import PluginRegistry

    herder = StandaloneHerder(worker_config, engine, offset_store, PluginRegistry(), "w:1")
    with TestClient(create_app(herder)) as client:
        starting = client.get("/health")
        assert (starting.status_code, starting.json()) == (
            503, {"status": "starting", "message": "Worker is still starting up."}
        )  # fmt: skip
        herder.mark_ready()
        healthy = client.get("/health")
        assert (healthy.status_code, healthy.json()) == (200, {
            "status": "healthy",
            "message": "Worker has completed startup and is ready to handle requests.",
        })  # fmt: skip


def test_health_is_500_when_the_herder_is_stuck(rest_herder: StandaloneHerder) -> None:
    held, release = threading.Event(), threading.Event()

    def busy() -> None:
        with rest_herder._lock:  # another request holding the herder, e.g. a slow stop
            held.set()
            release.wait(5)

    thread = threading.Thread(target=busy)
    thread.start()
    held.wait(5)
    try:
        status = rest_herder.health_check(timeout_s=0.05)
    finally:
        release.set()
        thread.join()
    assert (status.http_status, status.status) == (500, "unhealthy")
    assert status.message.startswith("Worker was unable to handle this request")


def test_put_config_creates_201_with_location_then_updates_200(client: TestClient) -> None:
    created = client.put("/connectors/my conn/config", json=SOURCE)
    assert created.status_code == 201
    assert created.headers["location"] == "http://testserver/connectors/my%20conn"
    assert created.json()["config"] == {**SOURCE, "name": "my conn"}
    updated = client.put("/connectors/my conn/config", json={**SOURCE, "topic": "u"})
    assert updated.status_code == 200
    assert "location" not in updated.headers
    assert updated.json()["config"]["topic"] == "u"
    assert client.get("/connectors/my conn/config").json()["topic"] == "u"


def test_put_config_errors(client: TestClient) -> None:
    mismatch = client.put("/connectors/a/config", json={**SOURCE, "name": "b"})
    assert mismatch.json() == error(
        400, "Connector name configuration (b) doesn't match connector name in the URL (a)"
    )
    invalid = client.put("/connectors/a/config", json={"connector.class": "FileStreamSink"})
    assert invalid.status_code == 400
    assert invalid.json()["message"].startswith("Connector configuration is invalid")
    no_class = client.put("/connectors/a/config", json={"file": "x"})
    assert no_class.status_code == 400
    assert no_class.json()["message"].endswith("contains no connector type")
    assert client.put("/connectors/a/config", json=["not", "a", "map"]).status_code == 400
    assert client.get("/connectors").json() == []


def test_patch_config_merges_and_null_removes(client: TestClient) -> None:
    client.put("/connectors/s/config", json={**SOURCE, "batch.size": "10"})
    patched = client.patch("/connectors/s/config", json={"topic": "v", "batch.size": None})
    assert patched.status_code == 200
    assert patched.json()["config"] == {**SOURCE, "topic": "v", "name": "s"}
    assert client.get("/connectors/s/config").json() == {**SOURCE, "topic": "v", "name": "s"}


def test_patch_config_errors(client: TestClient) -> None:
    assert client.patch("/connectors/x/config", json={"a": "b"}).json() == error(
        404, "Connector x not found"
    )
    client.put("/connectors/s/config", json=SOURCE)
    broken = client.patch("/connectors/s/config", json={"topic": None})
    assert broken.status_code == 400
    assert 'Missing required configuration "topic"' in broken.json()["message"]
    assert client.get("/connectors/s/config").json()["topic"] == "t"


def test_tasks_config(client: TestClient) -> None:
    client.put("/connectors/s/config", json=SOURCE)
    tasks = client.get("/connectors/s/tasks-config").json()
    assert list(tasks) == ["s-0"]
    assert tasks["s-0"]["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"
    client.put("/connectors/s/stop")
    # Kafka's standalone herder answers 404 for a connector without tasks too.
    assert client.get("/connectors/s/tasks-config").json() == error(404, "Connector s not found")
    assert client.get("/connectors/x/tasks-config").json() == error(404, "Connector x not found")


def test_topics_tracking_and_reset(client: TestClient, rest_herder: StandaloneHerder) -> None:
    assert client.get("/connectors/nope/topics").json() == {"nope": {"topics": []}}
    client.put("/connectors/s/config", json=SOURCE)
    rest_herder.on_topics("s", 0, ["b", "a"])
    rest_herder.on_topics("s", 0, ["a"])
    rest_herder.on_topics("gone", 0, ["x"])
    assert client.get("/connectors/s/topics").json() == {"s": {"topics": ["a", "b"]}}
    assert client.get("/connectors/gone/topics").json() == {"gone": {"topics": []}}
    reset = client.put("/connectors/s/topics/reset")
    assert (reset.status_code, reset.content) == (202, b"")
    assert client.get("/connectors/s/topics").json() == {"s": {"topics": []}}
    rest_herder.on_topics("s", 0, ["c"])
    client.delete("/connectors/s")
    assert client.get("/connectors/s/topics").json() == {"s": {"topics": []}}


def test_topic_tracking_can_be_disabled(client_for: Callable[[dict[str, str]], TestClient]) -> None:
    disabled = client_for({"topic.tracking.enable": "false"})
    assert disabled.get("/connectors/s/topics").json() == error(403, "Topic tracking is disabled.")
    assert disabled.put("/connectors/s/topics/reset").json() == error(
        403, "Topic tracking is disabled."
    )
    no_reset = client_for({"topic.tracking.allow.reset": "false"})
    assert no_reset.get("/connectors/s/topics").status_code == 200
    assert no_reset.put("/connectors/s/topics/reset").json() == error(
        403, "Topic tracking reset is disabled."
    )


def test_internal_endpoints_answer_like_standalone_kafka(client: TestClient) -> None:
    tasks = client.post("/connectors/s/tasks", json=[{"k": "v"}])
    assert tasks.json() == error(
        500,
        "Kafka Connect in standalone mode does not support externally setting task configurations.",
    )
    fence = client.put("/connectors/s/fence")
    assert fence.json() == error(
        500, "Kafka Connect in standalone mode does not support exactly-once source connectors."
    )


def test_unknown_fields_and_wrong_types_are_400(client: TestClient) -> None:
    for body in (
        {"name": "a", "config": SOURCE, "bogus": 1},
        {"name": "a", "config": "not a map"},
        {"name": "a", "config": {"k": ["list"]}},
        {"name": "a", "config": SOURCE, "initial_state": 3},
    ):
        response = client.post("/connectors", json=body)
        assert response.status_code == 400, body
        assert set(response.json()) == {"error_code", "message"}
    bad_state = client.post("/connectors", json={"name": "a", "config": SOURCE,
                                                 "initial_state": "SLEEPING"})  # fmt: skip
    assert bad_state.status_code == 400
    assert client.get("/connectors/a/tasks/zero/status").status_code == 400


def test_admin_endpoints_disabled_by_empty_admin_listeners(
    client_for: Callable[[dict[str, str]], TestClient],
) -> None:
    disabled = client_for({"admin.listeners": ""})
    assert disabled.get("/admin/loggers").json() == error(404, "HTTP 404 Not Found")
    assert client_for({}).get("/admin/loggers").status_code == 200


def test_openapi_lists_every_kafka_endpoint(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    expected = {
        "/": {"get"}, "/health": {"get"}, "/connectors": {"get", "post"},
        "/connectors/{name}": {"get", "delete"},
        "/connectors/{name}/config": {"get", "put", "patch"},
        "/connectors/{name}/status": {"get"}, "/connectors/{name}/tasks": {"get", "post"},
        "/connectors/{name}/tasks-config": {"get"},
        "/connectors/{name}/tasks/{task}/status": {"get"},
        "/connectors/{name}/tasks/{task}/restart": {"post"},
        "/connectors/{name}/topics": {"get"}, "/connectors/{name}/topics/reset": {"put"},
        "/connectors/{name}/restart": {"post"}, "/connectors/{name}/pause": {"put"},
        "/connectors/{name}/resume": {"put"}, "/connectors/{name}/stop": {"put"},
        "/connectors/{name}/fence": {"put"},
        "/connectors/{name}/offsets": {"get", "patch", "delete"},
        "/connector-plugins": {"get"}, "/connector-plugins/{plugin}/config": {"get"},
        "/connector-plugins/{plugin}/config/validate": {"put"},
        "/admin/loggers": {"get"}, "/admin/loggers/{logger}": {"get", "put"},
    }  # fmt: skip
    served = {path: set(ops) for path, ops in paths.items()}
    assert {path: served.get(path) for path in expected} == expected
