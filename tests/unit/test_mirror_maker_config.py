"""mm2.properties resolution (Kafka's MirrorMakerConfig) and the CLI's bad-file exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.cli import main
from sparkcat.mirror_maker_config import MirrorMakerConfig, SourceAndTarget

PROPS = {
    "clusters": "A, B",
    "A.bootstrap.servers": "a:9092",
    "B.bootstrap.servers": "b:9092",
    "B.security.protocol": "SSL",
    "A->B.enabled": "true",
    "A->B.topics": "orders.*",
    "replication.factor": "1",
    "sync.group.offsets.enabled": "true",
    "unrelated.key": "x",
}


def test_one_enabled_flow_also_runs_the_reverse_heartbeats() -> None:
    config = MirrorMakerConfig(PROPS)
    assert config.cluster_pairs() == [SourceAndTarget("A", "B"), SourceAndTarget("B", "A")]
    quiet = MirrorMakerConfig({**PROPS, "emit.heartbeats.enabled": "false"})
    assert quiet.cluster_pairs() == [SourceAndTarget("A", "B")]


def test_connector_config_resolution() -> None:
    config = MirrorMakerConfig(PROPS)
    source = config.connector_config(SourceAndTarget("A", "B"), "MirrorSourceConnector")
    assert source["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    assert source["name"] == "MirrorSourceConnector"
    assert source["enabled"] == "true"
    assert source["topics"] == "orders.*"
    assert source["replication.factor"] == "1"
    assert source["sync.group.offsets.enabled"] == "true"
    assert source["source.cluster.alias"] == "A"
    assert source["source.cluster.bootstrap.servers"] == "a:9092"
    assert source["target.cluster.security.protocol"] == "SSL"
    assert source["target.producer.bootstrap.servers"] == "b:9092"
    assert "unrelated.key" not in source
    reverse = config.connector_config(SourceAndTarget("B", "A"), "MirrorSourceConnector")
    assert reverse["enabled"] == "false"


def test_worker_config_targets_the_target_cluster_with_byte_array_converters() -> None:
    worker = MirrorMakerConfig(PROPS).worker_config(SourceAndTarget("A", "B"))
    assert worker["bootstrap.servers"] == "b:9092"
    assert worker["group.id"] == "A-mm2"
    assert worker["offset.storage.topic"] == "mm2-offsets.A.internal"
    for kind in ("key", "value", "header"):
        assert worker[f"{kind}.converter"].endswith("ByteArrayConverter")


@pytest.mark.parametrize(
    "text", ["A.bootstrap.servers = a:1\n", "clusters = A, B\nA->B.enabled = true\n"]
)
def test_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "mm2.properties"
    path.write_text(text, encoding="utf-8")
    assert main(["mirror-maker", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparkcat: ") and err.count("\n") == 1


def test_missing_file_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mirror-maker", "/nonexistent/mm2.properties"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_internal_rest_server_is_off_by_default_and_listens_on_8083() -> None:
    assert not MirrorMakerConfig(PROPS).enable_internal_rest()
    on = MirrorMakerConfig({**PROPS, "dedicated.mode.enable.internal.rest": "true"})
    assert on.enable_internal_rest()
    assert on.internal_rest_props()["listeners"] == "http://:8083"
    mine = MirrorMakerConfig({**PROPS, "listeners": "http://127.0.0.1:0"})
    assert mine.internal_rest_props()["listeners"] == "http://127.0.0.1:0"
