"""Validation answers as Kafka gives them: a JSON ``null`` config value, one error per bad value.

Kafka rejects ``null`` as a config value on every path that takes a config (create, PUT config,
validate) with ``Null value can not be supplied as the configuration value.`` on that key, and
reports a value that fails to parse once (its validator is not run on the missing result).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
SINK = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt"}

NULL_MESSAGE = "Null value can not be supplied as the configuration value."
TAIL = "You can also find the above list of errors at the endpoint " + (
    "`/connector-plugins/{connectorType}/config/validate`"
)


def invalid(*errors: str) -> dict[str, Any]:
    lines = "\n".join(errors)
    return {
        "error_code": 400,
        "message": "Connector configuration is invalid and contains the following "
        f"{len(errors)} error(s):\n{lines}\n{TAIL}",
    }


def errors_by_key(infos: dict[str, Any]) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]}


@pytest.mark.parametrize(
    ("base", "key"),
    [
        (SOURCE, "batch.size"),  # the connector's own key
        (SOURCE, "errors.log.enable"),  # a framework key
        (SINK, "no.such.key"),  # a key nobody defines
    ],
)
def test_create_with_a_null_value_is_400_and_creates_nothing(
    client: TestClient, base: dict[str, str], key: str
) -> None:
    response = client.post("/connectors", json={"name": "x", "config": {**base, key: None}})
    assert (response.status_code, response.json()) == (400, invalid(NULL_MESSAGE))
    assert client.get("/connectors").json() == []
    assert client.get("/connectors/x").status_code == 404


def test_put_config_with_a_null_value_is_400_and_changes_nothing(client: TestClient) -> None:
    assert client.put("/connectors/x/config", json=SOURCE).status_code == 201
    before = client.get("/connectors/x/config").json()
    response = client.put("/connectors/x/config", json={**SOURCE, "batch.size": None})
    assert (response.status_code, response.json()) == (400, invalid(NULL_MESSAGE))
    assert client.get("/connectors/x/config").json() == before
    created = client.put("/connectors/y/config", json={**SOURCE, "topic": None})
    assert created.status_code == 400
    assert client.get("/connectors").json() == ["x"]


def test_validate_reports_the_null_value_on_its_key(client: TestClient) -> None:
    body = {**SOURCE, "name": "x", "batch.size": None}
    infos = client.put("/connector-plugins/FileStreamSource/config/validate", json=body).json()
    assert infos["error_count"] == 1
    assert errors_by_key(infos)["batch.size"] == [NULL_MESSAGE]


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("tasks.max", "abc", "Not a number of type INT"),
        ("errors.retry.timeout", "soon", "Not a number of type LONG"),
        ("errors.retry.delay.max.ms", "1.5", "Not a number of type LONG"),
        ("errors.log.enable", "maybe", "Expected value to be either true or false"),
        ("key.converter", "NoSuchConverter", "Class NoSuchConverter could not be found."),
    ],
)
def test_a_value_that_fails_to_parse_is_one_error(
    client: TestClient, key: str, value: str, reason: str
) -> None:
    message = f"Invalid value {value} for configuration {key}: {reason}"
    response = client.post("/connectors", json={"name": "x", "config": {**SOURCE, key: value}})
    assert (response.status_code, response.json()) == (400, invalid(message))
    assert client.get("/connectors").json() == []
    body = {**SOURCE, "name": "x", key: value}
    infos = client.put("/connector-plugins/FileStreamSource/config/validate", json=body).json()
    assert infos["error_count"] == 1
    assert errors_by_key(infos)[key] == [message]
