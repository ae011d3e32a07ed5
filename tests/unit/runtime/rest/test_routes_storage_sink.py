"""The S3 sink's config over REST: its keys are listed and the secret key is masked."""

from __future__ import annotations

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
