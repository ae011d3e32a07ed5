"""Config-provider variables over REST: stored, answered and shipped unresolved; client
overrides governed by ``connector.client.config.override.policy`` with Kafka's messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sparkcat.runtime.tasks.lease import LeaseSpec, _resolved

from .conftest import SINK, SOURCE, TestClient

SECRET = "s3cret-7d1c"
KAFKA = "org.apache.kafka.common.config.provider."


@pytest.fixture
def providers(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "secrets.properties").write_text(f"password={SECRET}\nfile=in.txt\n")
    return {
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
    }


def test_variables_are_never_stored_or_answered_resolved(
    client_for: Callable[[dict[str, str]], TestClient],
    providers: dict[str, str],
    tmp_path: Path,
    engine: Any,
) -> None:
    client = client_for(providers)
    ref = f"${{file:{tmp_path / 'secrets.properties'}"
    config = {**SOURCE, "file": f"{ref}:file}}", "producer.override.sasl.password": "x",
              "producer.override.ssl.key.password": f"{ref}:password}}"}  # fmt: skip
    assert client.put("/connectors/s/config", json=config).status_code == 201
    plan = engine.plans["s"]
    answers = [
        client.get("/connectors/s/config").json(),
        client.get("/connectors/s/tasks").json()[0]["config"],
        client.get("/connectors/s/tasks-config").json()["s-0"],
        plan.connector_config,
        plan.task_configs[0],  # what Spark ships to executors
    ]
    for shown in answers:
        assert shown["file"] == f"{ref}:file}}"
        assert SECRET not in str(shown)
    validated = client.put("/connector-plugins/FileStreamSource/config/validate", json=config)
    values = {c["value"]["name"]: c["value"]["value"] for c in validated.json()["configs"]}
    assert values["file"] == f"{ref}:file}}"
    assert values["producer.override.ssl.key.password"] == "[hidden]"  # a PASSWORD key
    assert SECRET not in validated.text

    # On the executor, the lease resolves what it was shipped.
    worker = dict(providers)
    spec = LeaseSpec("s", 0, 1, "source", plan.task_configs[0], plan.connector_config, worker,
                     1000, 10, None)  # fmt: skip
    resolved = _resolved(spec)
    assert resolved.task_config["file"] == "in.txt"
    assert resolved.connector_config["producer.override.ssl.key.password"] == SECRET


def test_password_keys_are_hidden_in_validation(
    client_for: Callable[[dict[str, str]], TestClient],
) -> None:
    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
              "connection.url": "jdbc:postgresql://db/x", "connection.password": SECRET,
              "mode": "bulk", "topic.prefix": "t-"}  # fmt: skip
    client = client_for({})
    validated = client.put("/connector-plugins/JdbcSourceConnector/config/validate", json=config)
    values = {c["value"]["name"]: c["value"]["value"] for c in validated.json()["configs"]}
    assert values["connection.password"] == "[hidden]"
    assert SECRET not in validated.text


@pytest.mark.parametrize(
    ("plugin", "base", "override"),
    [
        ("FileStreamSource", SOURCE, "producer.override.sasl.jaas.config"),
        ("FileStreamSource", SOURCE, "producer.override.ssl.key.password"),
        ("FileStreamSource", SOURCE, "producer.override.sasl.password"),  # librdkafka's name
        ("FileStreamSink", SINK, "consumer.override.ssl.truststore.password"),
        ("FileStreamSink", SINK, "consumer.override.sasl.jaas.config"),
        ("FileStreamSource", {**SOURCE, "topic.creation.default.replication.factor": "1",
                              "topic.creation.default.partitions": "1"},
         "admin.override.ssl.keystore.password"),
        ("FileStreamSink", {**SINK, "errors.tolerance": "all",
                            "errors.deadletterqueue.topic.name": "dlq"},
         "admin.override.sasl.jaas.config"),
    ],
)  # fmt: skip
def test_password_client_overrides_are_hidden_in_validation(
    client: TestClient, plugin: str, base: dict[str, str], override: str
) -> None:
    jaas = f'PlainLoginModule required username="u" password="{SECRET}";'
    config = {**base, "name": "x", override: jaas}
    response = client.put(f"/connector-plugins/{plugin}/config/validate", json=config)
    assert response.status_code == 200, response.text
    assert SECRET not in response.text
    infos = response.json()
    assert infos["error_count"] == 0
    entry = next(c for c in infos["configs"] if c["value"] and c["value"]["name"] == override)
    assert entry["value"]["value"] == "[hidden]"
    assert entry["definition"]["name"] == override
    assert entry["definition"]["type"] == "PASSWORD"
    # Kafka answers the stored config as given, secrets included.
    assert client.put("/connectors/x/config", json=config).status_code == 201
    assert client.get("/connectors/x/config").json()[override] == jaas


def test_client_overrides_carry_their_client_definition(client: TestClient) -> None:
    config = {**SINK, "name": "x", "consumer.override.max.poll.records": " 50",
              "consumer.override.enable.auto.commit": "TRUE",
              "consumer.override.queued.min.messages": "10"}  # fmt: skip
    infos = client.put("/connector-plugins/FileStreamSink/config/validate", json=config).json()
    entries = {c["value"]["name"]: c for c in infos["configs"] if c["value"]}
    polled = entries["consumer.override.max.poll.records"]
    assert (polled["definition"]["type"], polled["definition"]["default_value"]) == ("INT", "500")
    assert polled["value"]["value"] == "50"
    assert entries["consumer.override.enable.auto.commit"]["value"]["value"] == "true"
    librdkafka_only = entries["consumer.override.queued.min.messages"]
    assert librdkafka_only["definition"] is None
    assert librdkafka_only["value"]["value"] == "10"


def test_a_client_override_of_the_wrong_type_is_an_error(client: TestClient) -> None:
    config = {**SINK, "name": "x", "consumer.override.max.poll.records": "many"}
    response = client.post("/connectors", json={"name": "x", "config": config})
    assert response.status_code == 400
    assert "Invalid value many for configuration max.poll.records" in response.json()["message"]


@pytest.mark.parametrize("policy", ["None", "All"])
def test_producer_override_policy(
    client_for: Callable[[dict[str, str]], TestClient], policy: str
) -> None:
    client = client_for({"connector.client.config.override.policy": policy})
    config = {**SOURCE, "producer.override.security.protocol": "SASL_SSL"}
    created = client.put("/connectors/s/config", json=config)
    if policy == "All":
        assert created.status_code == 201
        return
    assert created.status_code == 400
    assert created.json()["message"] == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "The 'None' policy does not allow 'security.protocol' to be overridden in the "
        "connector configuration.\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )


def test_ttl_expiry_with_changed_values_restarts_connector_and_tasks(
    client_for: Callable[[dict[str, str]], TestClient],
    providers: dict[str, str],
    tmp_path: Path,
    engine: Any,
) -> None:
    import time

    client = client_for({**providers, "config.providers.file.ttl": "100"})
    secrets = tmp_path / "secrets.properties"
    config = {**SOURCE, "file": f"${{file:{secrets}:file}}"}
    assert client.put("/connectors/s/config", json=config).status_code == 201
    time.sleep(0.35)  # expiries without a change restart nothing
    assert ("restart_task", ("s", 0)) not in engine.calls
    secrets.write_text("file=other.txt\n")
    deadline = time.monotonic() + 10
    while ("restart_task", ("s", 0)) not in engine.calls and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ("restart_task", ("s", 0)) in engine.calls
    assert client.get("/connectors/s/config").json()["file"] == config["file"]
    assert client.delete("/connectors/s").status_code == 204  # cancels the reload timer
