"""The storage sinks' config over REST: keys listed, the secret key masked, `store.url` checked
for the sink's kind of store."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def test_s3_sink_validate_masks_the_secret_key(client: TestClient) -> None:
    config = {"connector.class": "S3Sink", "topics": "t", "name": "n",
              "s3.bucket.name": "b", "flush.size": "1000", "aws.access.key.id": "AKIA1",
              "aws.secret.access.key": "sup3rs3cret",
              "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"}  # fmt: skip
    response = client.put("/connector-plugins/S3Sink/config/validate", json=config)
    assert response.status_code == 200, response.text
    assert "sup3rs3cret" not in response.text
    infos = response.json()
    assert infos["error_count"] == 0, infos
    entries = {c["definition"]["name"]: c for c in infos["configs"] if c["definition"]}
    assert entries["aws.secret.access.key"]["definition"]["type"] == "PASSWORD"
    assert entries["aws.secret.access.key"]["value"]["value"] == "[hidden]"
    assert entries["s3.region"]["definition"]["default_value"] == "us-west-2"


def test_s3_sink_validate_reports_a_bad_format_class(client: TestClient) -> None:
    config = {"connector.class": "S3Sink", "topics": "t", "name": "n", "s3.bucket.name": "b",
              "flush.size": "1000", "format.class": "x.CsvFormat"}  # fmt: skip
    infos = client.put("/connector-plugins/S3Sink/config/validate", json=config).json()
    entry = next(c for c in infos["configs"]
                 if c["definition"] and c["definition"]["name"] == "format.class")  # fmt: skip
    assert entry["value"]["errors"] and "x.CsvFormat" in entry["value"]["errors"][0]


S3 = {"connector.class": "S3SinkConnector", "topics": "t", "s3.bucket.name": "b",
      "flush.size": "1000",
      "format.class": "io.confluent.connect.s3.format.json.JsonFormat"}  # fmt: skip


def store_url_errors(client: TestClient, plugin: str, config: dict[str, str]) -> list[str]:
    response = client.put(f"/connector-plugins/{plugin}/config/validate", json=config)
    assert response.status_code == 200, response.text
    entry = next(c for c in response.json()["configs"]
                 if c["definition"] and c["definition"]["name"] == "store.url")  # fmt: skip
    errors: list[str] = entry["value"]["errors"]
    return errors


def test_s3_sink_with_a_file_store_url_is_invalid(client: TestClient) -> None:
    config = {**S3, "name": "n", "store.url": "file:///tmp/out"}
    [error] = store_url_errors(client, "S3SinkConnector", config)
    assert error.startswith("Invalid value file:///tmp/out for configuration store.url: ")
    assert "http:// or https://" in error and "FileSystemSinkConnector" in error
    response = client.post("/connectors", json={"name": "n", "config": config})
    assert response.status_code == 400
    assert response.json() == {
        "error_code": 400,
        "message": "Connector configuration is invalid and contains the following 1 error(s):\n"
        f"{error}\nYou can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`",
    }
    assert client.get("/connectors").json() == []


@pytest.mark.parametrize("url", ["http://localhost:9000", "https://s3.example.com", ""])
def test_s3_sink_takes_an_http_endpoint_or_none(client: TestClient, url: str) -> None:
    assert store_url_errors(client, "S3SinkConnector", {**S3, "name": "n", "store.url": url}) == []
    assert store_url_errors(client, "S3SinkConnector", {**S3, "name": "n"}) == []


def test_filesystem_sink_needs_a_file_store_url(client: TestClient) -> None:
    config = {**S3, "connector.class": "FileSystemSinkConnector", "name": "n"}
    plugin = "FileSystemSinkConnector"
    missing = 'Missing required configuration "store.url" which has no default value.'
    assert store_url_errors(client, plugin, config) == [missing]
    [error] = store_url_errors(client, plugin, {**config, "store.url": "http://localhost:9000"})
    assert "file://" in error and "S3SinkConnector" in error
    assert store_url_errors(client, plugin, {**config, "store.url": "file:///tmp/out"}) == []
