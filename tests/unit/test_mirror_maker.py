"""``sparkcat mirror-maker``'s command line: the flows and the worker each one runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.mirror_maker import UsageError, parse_args
from sparkcat.mirror_maker_config import SourceAndTarget


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_each_flow_keeps_its_offsets_and_statuses_in_topics_of_its_target(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mm2.properties",
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"
        "A->B.enabled = true\noffset.storage.replication.factor = 1\n",
    )
    flows = {str(pair): worker for pair, worker, _ in parse_args([path])}
    a_to_b = flows["A->B"]
    assert a_to_b.get("bootstrap.servers") == ["b:9092"]
    assert a_to_b.get("offset.storage.topic") == "mm2-offsets.A.internal"
    assert a_to_b.get("status.storage.topic") == "mm2-status.A.internal"
    assert a_to_b.get("offset.storage.replication.factor") == 1
    assert flows["B->A"].get("offset.storage.topic") == "mm2-offsets.B.internal"
    only_b = parse_args([path, "--clusters", "B"])
    assert [pair for pair, _, _ in only_b] == [SourceAndTarget("A", "B")]


def test_a_storage_setting_kafka_refuses_is_a_usage_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mm2.properties",
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"
        "A->B.enabled = true\noffset.storage.partitions = 0\n",
    )
    with pytest.raises(UsageError, match=r"offset\.storage\.partitions"):
        parse_args([path])


def test_clusters_takes_several_names_as_kafka_or_commas(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mm2.properties",
        "clusters = A, B, C\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"
        "C.bootstrap.servers = c:9092\nA->B.enabled = true\nA->C.enabled = true\n"
        "emit.heartbeats.enabled = false\n",
    )
    spaced = [str(pair) for pair, _, _ in parse_args([path, "--clusters", "B", "C"])]
    assert spaced == [str(pair) for pair, _, _ in parse_args([path, "--clusters", "B,C"])]
    assert spaced == ["A->B", "A->C"]
    with pytest.raises(UsageError):
        parse_args([path, "--clusters"])


def test_each_flow_is_a_group_on_its_target(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mm2.properties",
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"
        "A->B.enabled = true\nB.scheduled.rebalance.max.delay.ms = 1000\n",
    )
    flows = {str(pair): worker for pair, worker, _ in parse_args([path])}
    assert flows["A->B"].group_id == "A-mm2"
    assert flows["A->B"].get("config.storage.topic") == "mm2-configs.A.internal"
    assert flows["A->B"].get("scheduled.rebalance.max.delay.ms") == 1000
    assert flows["B->A"].group_id == "B-mm2"
