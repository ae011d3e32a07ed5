"""``/connector-plugins`` and ``/admin/loggers``."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.connectors.file import FileStreamSinkConnector

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def error(status: int, message: str) -> dict[str, Any]:
    return {"error_code": status, "message": message}


def test_connector_plugins(client: TestClient) -> None:
    plugins = client.get("/connector-plugins").json()
    assert [(p["class"], p["type"]) for p in plugins] == [
        ("io.confluent.connect.jdbc.JdbcSinkConnector", "sink"),
        ("io.confluent.connect.s3.S3SinkConnector", "sink"),
        (FILE_SINK, "sink"),
        ("sparkcat.connectors.spark.SparkSinkConnector", "sink"),
        ("sparkcat.connectors.storage.FileSystemSinkConnector", "sink"),
        ("io.confluent.connect.jdbc.JdbcSourceConnector", "source"),
        ("io.debezium.connector.mariadb.MariaDbConnector", "source"),
        ("io.debezium.connector.mysql.MySqlConnector", "source"),
        ("io.debezium.connector.postgresql.PostgresConnector", "source"),
        (FILE_SOURCE, "source"),
        ("org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "source"),
        ("org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "source"),
        ("org.apache.kafka.connect.mirror.MirrorSourceConnector", "source"),
        ("sparkcat.connectors.spark.SparkSourceConnector", "source"),
    ]
    assert all(set(p) == {"class", "type", "version"} for p in plugins)
    everything = client.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    kinds = [p["type"] for p in everything]
    order = ["sink", "source", "transformation", "predicate", "converter", "header_converter"]
    assert sorted(set(kinds), key=order.index) == order
    assert kinds == sorted(kinds, key=order.index)  # grouped in Kafka's order
    names = [p["class"] for p in everything if p["type"] == "converter"]
    assert names == sorted(names)
    assert "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone" in {
        p["class"] for p in everything
    }


def test_connector_plugin_config(client: TestClient) -> None:
    source = client.get("/connector-plugins/FileStreamSource/config").json()
    names = [k["name"] for k in source]
    assert names[:2] == ["file", "topic"]  # the connector's own keys first
    assert {"name", "connector.class", "tasks.max", "transforms", "exactly.once.support"} <= set(
        names
    )
    assert len(names) == len(set(names))
    key = next(k for k in source if k["name"] == "tasks.max")
    assert key == {
        "name": "tasks.max", "type": "INT", "required": False, "default_value": "1",
        "importance": "HIGH", "documentation": key["documentation"], "group": "Common",
        "order": 3, "width": "SHORT", "display_name": "Tasks max", "dependents": [],
    }  # fmt: skip
    required = next(k for k in source if k["name"] == "topic")
    assert (required["required"], required["default_value"]) == (True, None)
    sink = [k["name"] for k in client.get(f"/connector-plugins/{FILE_SINK}/config").json()]
    assert "topics.regex" in sink and "exactly.once.support" not in sink
    converter = client.get("/connector-plugins/JsonConverter/config").json()
    assert "schemas.enable" in {k["name"] for k in converter}
    assert "tasks.max" not in {k["name"] for k in converter}
    assert client.get("/connector-plugins/Filter/config").status_code == 200


def test_connector_plugin_config_errors(client: TestClient) -> None:
    assert client.get("/connector-plugins/NoSuchThing/config").json() == error(
        404, "Unknown plugin NoSuchThing."
    )
    provider = "sparkcat.runtime.standalone.herder:StandaloneHerder"
    assert client.get(f"/connector-plugins/{provider}/config").json() == error(
        400, f"Invalid plugin class {provider}. Valid types are sink, source, converter, "
        "header_converter, transformation, predicate.",
    )  # fmt: skip


def test_validate(client: TestClient) -> None:
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt", "name": "n",
              "transforms": "f", "transforms.f.type": "Filter"}  # fmt: skip
    infos = client.put("/connector-plugins/FileStreamSink/config/validate", json=config).json()
    assert (infos["name"], infos["error_count"]) == ("FileStreamSink", 0)
    assert infos["groups"][:4] == ["Common", "Transforms", "Predicates", "Error Handling"]
    assert "Transforms: f" in infos["groups"]
    by_name = {c["definition"]["name"]: c for c in infos["configs"] if c["definition"]}
    assert by_name["transforms.f.type"]["value"]["value"] == "Filter"
    topics = {"name": "topics", "value": "t", "recommended_values": [], "errors": [],
              "visible": True}  # fmt: skip
    assert by_name["topics"]["value"] == topics

    bad = client.put("/connector-plugins/FileStreamSinkConnector/config/validate",
                     json={"connector.class": FILE_SINK, "tasks.max": "zero", "k": None,
                           "name": "n"}).json()  # fmt: skip
    # tasks.max: unparsable (one error, its validator is not run); topics and topics.regex;
    # the null value.
    assert bad["error_count"] == 4
    errors = {c["value"]["name"]: c["value"]["errors"] for c in bad["configs"] if c["value"]}
    assert errors["topics"] == ["Must configure one of topics or topics.regex"]
    assert errors["tasks.max"] == [
        "Invalid value zero for configuration tasks.max: Not a number of type INT"
    ]
    undefined = [c["value"] for c in bad["configs"] if c["definition"] is None]
    assert {"name": "k", "value": None, "recommended_values": [],
            "errors": ["Null value can not be supplied as the configuration value."],
            "visible": True} in undefined  # fmt: skip


class SecretSink(FileStreamSinkConnector):
    """A sink with a PASSWORD key."""

    def config(self) -> ConfigDef:
        return ConfigDef(super().config()).define(
            "db.password", ConfigType.PASSWORD, ConfigDef.NO_DEFAULT_VALUE, None, Importance.HIGH
        )


def test_validate_hides_passwords(client: TestClient) -> None:
    config = {"connector.class": f"{__name__}:SecretSink", "topics": "t", "name": "n",
              "db.password": "s3cret"}  # fmt: skip
    infos = client.put(f"/connector-plugins/{__name__}:SecretSink/config/validate", json=config)
    assert "s3cret" not in infos.text
    entry = next(c for c in infos.json()["configs"]
                 if c["definition"] and c["definition"]["name"] == "db.password")  # fmt: skip
    assert entry["definition"]["type"] == "PASSWORD"
    assert entry["value"]["value"] == "[hidden]"


def test_validate_errors(client: TestClient) -> None:
    mismatch = client.put("/connector-plugins/FileStreamSink/config/validate",
                          json={"connector.class": "FileStreamSource"})  # fmt: skip
    assert mismatch.json() == error(
        400, "Included connector type FileStreamSource does not match request type FileStreamSink"
    )
    missing = client.put("/connector-plugins/FileStreamSink/config/validate", json={"a": "b"})
    assert missing.json() == error(400, "Connector config {a=b} contains no connector type")
    assert client.put("/connector-plugins/X/config/validate", json=[1]).status_code == 400


# -- /admin/loggers ---------------------------------------------------------------------------
@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"sparkcat-test-{uuid.uuid4().hex[:8]}"
    yield name
    for logger_name in [n for n in logging.Logger.manager.loggerDict if n.startswith(name)]:
        logging.getLogger(logger_name).setLevel(logging.NOTSET)


def test_loggers(client: TestClient, namespace: str) -> None:
    child = logging.getLogger(f"{namespace}.child")
    listed = client.get("/admin/loggers").json()
    assert "root" in listed and namespace not in listed
    assert list(listed) == sorted(listed)
    assert client.get(f"/admin/loggers/{namespace}.child").json()["last_modified"] is None

    affected = client.put(f"/admin/loggers/{namespace}", json={"level": "debug"})
    assert affected.status_code == 200
    assert affected.json() == [namespace, f"{namespace}.child"]
    assert child.level == logging.DEBUG
    level = client.get(f"/admin/loggers/{namespace}.child").json()
    assert level["level"] == "DEBUG" and isinstance(level["last_modified"], int)
    assert client.get("/admin/loggers").json()[namespace]["level"] == "DEBUG"
    # Setting the same level again does not change last_modified.
    client.put(f"/admin/loggers/{namespace}", json={"level": "DEBUG"})
    assert client.get(f"/admin/loggers/{namespace}.child").json() == level

    client.put(f"/admin/loggers/{namespace}.child", json={"level": "TRACE"})
    assert client.get(f"/admin/loggers/{namespace}.child").json()["level"] == "TRACE"
    cluster = client.put(f"/admin/loggers/{namespace}", json={"level": "WARN"},
                         params={"scope": "cluster"})  # fmt: skip
    assert (cluster.status_code, cluster.content) == (204, b"")
    assert child.level == logging.WARNING
    odd_scope = client.put(f"/admin/loggers/{namespace}", json={"level": "FATAL"},
                           params={"scope": "galaxy"})  # fmt: skip
    assert odd_scope.status_code == 200 and child.level == logging.CRITICAL


def test_logger_errors(client: TestClient, namespace: str) -> None:
    assert client.get(f"/admin/loggers/{namespace}.none").json() == error(
        404, f"Logger {namespace}.none not found."
    )
    assert client.get("/admin/loggers/ROOT").status_code == 200
    assert client.put(f"/admin/loggers/{namespace}", json={}).json() == error(
        400, "Desired 'level' parameter was not specified in request."
    )
    assert client.put(f"/admin/loggers/{namespace}", json={"level": "LOUD"}).json() == error(
        404, "invalid log level 'LOUD'."
    )
