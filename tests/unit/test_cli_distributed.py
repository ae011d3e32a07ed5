"""``sparkcat distributed`` argument and worker-file errors: one line ``sparkcat: <reason>``
on stderr, exit 2, nothing started. (Running clusters are end-to-end tests.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.cli import main
from sparkcat.cli_distributed import distributed_main

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "config" / "connect-distributed.properties"


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("sparkcat: ")
    return lines[0]


def _worker(tmp_path: Path, **changes: str | None) -> Path:
    props = {}
    for line in WORKER.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    for key, value in changes.items():
        key = key.replace("_", ".")
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def test_shipped_file_is_a_valid_distributed_config() -> None:
    from sparkcat.kafka.properties import load_properties
    from sparkcat.runtime.distributed.config import DistributedConfig

    config = DistributedConfig(load_properties(str(WORKER)))
    assert config.group_id == "connect-cluster"
    assert (config.config_topic, config.offsets_topic, config.status_topic) == (
        "connect-configs", "connect-offsets", "connect-status",
    )  # fmt: skip


def test_missing_group_id_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert distributed_main([str(_worker(tmp_path, group_id=None))]) == 2
    assert "group.id" in _one_line(capsys)


def test_bad_protocol_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _worker(tmp_path, **{"connect_protocol": "bogus"})
    assert main(["distributed", str(path)]) == 2
    assert "connect.protocol" in _one_line(capsys)


def test_embedded_broker_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert distributed_main([str(_worker(tmp_path, bootstrap_servers="embedded"))]) == 2
    assert "bootstrap.servers must name the Kafka cluster" in _one_line(capsys)


def test_unreadable_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert distributed_main([str(tmp_path / "missing.properties")]) == 2
    assert "cannot read worker config" in _one_line(capsys)
