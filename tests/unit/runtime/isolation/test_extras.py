"""Built-in plugins whose pip extra is not installed: listed, and refused naming the extra.

The extra's library is hidden by a ``None`` entry in ``sys.modules`` (which makes its import
raise ``ModuleNotFoundError``, as on a core install), and the plugin's own modules are
dropped so they import afresh; ``monkeypatch`` puts both back.
"""

from __future__ import annotations

import sys

import pytest

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.herder.validation import validate_connector_config
from sparkcat.runtime.isolation.extras import EXTRAS, MissingExtraError, extra_of
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.worker_config import WorkerConfig


def hide(monkeypatch: pytest.MonkeyPatch, library: str) -> None:
    """Make ``library`` unimportable and every extra's plugin module import afresh."""
    for name in list(sys.modules):
        if extra_of(name) is not None:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, library, None)


def message(class_name: str, extra: str) -> str:
    return f"{class_name} needs the '{extra}' extra: pip install 'sparkcat[{extra}]'"


@pytest.mark.parametrize(
    ("name", "kind", "library", "expected"),
    [
        ("io.confluent.connect.jdbc.JdbcSourceConnector", "source", "sqlalchemy",
         message("JdbcSourceConnector", "jdbc")),
        ("JdbcSink", "connector", "sqlalchemy", message("JdbcSinkConnector", "jdbc")),
        ("sparkcat.connectors.jdbc:JdbcSourceConnector", "source", "sqlalchemy",
         message("JdbcSourceConnector", "jdbc")),
        ("sparkcat.connectors.jdbc.JdbcSinkConnector", "sink", "sqlalchemy",
         message("JdbcSinkConnector", "jdbc")),
        ("io.confluent.connect.jdbc.source.JdbcSourceTask", "task", "sqlalchemy",
         message("JdbcSourceTask", "jdbc")),
        ("S3SinkConnector", "sink", "fsspec", message("S3SinkConnector", "s3")),
        ("PostgresConnector", "source", "psycopg2", message("PostgresConnector", "cdc")),
        ("AvroConverter", "converter", "fastavro", message("AvroConverter", "schema-registry")),
        ("io.confluent.connect.protobuf.ProtobufConverter", "converter", "google.protobuf",
         message("ProtobufConverter", "schema-registry")),
        ("JsonSchemaConverter", "converter", "confluent_kafka.schema_registry",
         message("JsonSchemaConverter", "schema-registry")),
    ],
)  # fmt: skip
def test_resolving_names_the_missing_extra(
    monkeypatch: pytest.MonkeyPatch, name: str, kind: str, library: str, expected: str
) -> None:
    hide(monkeypatch, library)
    with pytest.raises(MissingExtraError) as info:
        PluginRegistry().resolve(name, kind)
    assert str(info.value) == expected


def test_the_plugins_are_still_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "sqlalchemy")
    listed = {d.class_name for d in PluginRegistry().plugins("connector")}
    assert "io.confluent.connect.jdbc.JdbcSourceConnector" in listed
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in listed


def test_validating_a_connector_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, worker_config: WorkerConfig
) -> None:
    hide(monkeypatch, "sqlalchemy")
    props = {"name": "j", "connector.class": "JdbcSourceConnector", "topic.prefix": "t-"}
    with pytest.raises(ConnectError, match=r"needs the 'jdbc' extra"):
        validate_connector_config(props, PluginRegistry(), worker_config)


def test_validating_a_converter_key_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, worker_config: WorkerConfig
) -> None:
    hide(monkeypatch, "fastavro")
    props = {
        "name": "s",
        "connector.class": "FileStreamSink",
        "file": "out.txt",
        "topics": "t",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
    }
    infos = validate_connector_config(props, PluginRegistry(), worker_config).infos.to_json()
    errors = [
        e
        for entry in infos["configs"]
        if entry["value"] and entry["value"]["name"] == "value.converter"
        for e in entry["value"]["errors"]
    ]
    assert errors == [
        "Invalid value io.confluent.connect.avro.AvroConverter for configuration "
        "value.converter: " + message("AvroConverter", "schema-registry")
    ]


def test_a_missing_module_of_sparkcat_itself_is_not_an_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide(monkeypatch, "sparkcat.connectors.jdbc.dialect")
    with pytest.raises(ConnectError) as info:
        PluginRegistry().resolve("JdbcSourceConnector", "source")
    assert not isinstance(info.value, MissingExtraError)


def test_every_extra_is_declared_in_the_project() -> None:
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[4] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) <= set(extras)
    assert extras["all"] == [f"sparkcat[{','.join(sorted(set(EXTRAS.values())))}]"]


@pytest.mark.parametrize("library", ["pymysql", "pymysqlreplication"])
def test_the_mysql_connectors_are_refused_at_resolution(
    monkeypatch: pytest.MonkeyPatch, library: str
) -> None:
    """They use their libraries lazily: their package imports them up front all the same."""
    hide(monkeypatch, library)
    with pytest.raises(MissingExtraError, match="MariaDbConnector needs the 'cdc' extra"):
        PluginRegistry().resolve("MariaDb", "source")
