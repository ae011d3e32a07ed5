"""``${provider:path:key}`` substitution, reverse transformation, and TTL reloads."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sparkcat.api.config_provider import ConfigData, ConfigProvider
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.runtime.config_provider import (
    ConfigTransformer,
    WorkerConfigTransformer,
    resolve,
    resolve_worker,
    reverse_transform,
    scrubber,
)

KAFKA = "org.apache.kafka.common.config.provider."


class DictProvider(ConfigProvider):
    """Values from a dict, with a TTL (a vault-like provider)."""

    def __init__(self, data: dict[str, dict[str, str]], ttl: int | None = None) -> None:
        self.data, self.ttl = data, ttl

    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        values = self.data.get(path, {})
        return ConfigData({k: v for k, v in values.items() if keys is None or k in keys}, self.ttl)


def test_substitutes_variables_and_leaves_unknown_ones() -> None:
    provider = DictProvider({"db": {"user": "alice", "pw": "s3cret"}, "": {"k": "v"}}, ttl=500)
    result = ConfigTransformer({"vault": provider}).transform(
        {
            "url": "jdbc:pg://h/${vault:db:user}?p=${vault:db:pw}",
            "short": "${vault:k}",
            "missing.key": "${vault:db:nope}",
            "unknown.provider": "${other:db:pw}",
            "plain": "x",
        }
    )
    assert result.data == {
        "url": "jdbc:pg://h/alice?p=s3cret",
        "short": "v",
        "missing.key": "${vault:db:nope}",
        "unknown.provider": "${other:db:pw}",
        "plain": "x",
    }
    assert result.ttls == {"db": 500, "": 500}


def test_reverse_transform_restores_placeholders_in_task_configs() -> None:
    raw = {"password": "${file:/s.properties:pw}", "topic": "t"}
    tasks = [{"password": "s3cret", "topic": "t", "task.id": "0"}, {"topic": "t"}]
    assert reverse_transform(raw, tasks) == [
        {"password": "${file:/s.properties:pw}", "topic": "t", "task.id": "0"},
        {"topic": "t"},
    ]


def _worker(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
        **extra,
    }


def test_worker_config_declares_providers_and_is_resolved_itself(tmp_path: Path) -> None:
    (tmp_path / "s.properties").write_text("pw=s3cret\n", encoding="utf-8")
    ref = f"${{file:{tmp_path / 's.properties'}:pw}}"
    worker = _worker(tmp_path, **{"producer.ssl.key.password": ref})
    assert resolve(worker, {"a": ref, "b": "plain"}) == {"a": "s3cret", "b": "plain"}
    resolved = resolve_worker(worker)
    assert resolved["producer.ssl.key.password"] == "s3cret"
    assert resolved["config.providers.file.class"] == KAFKA + "FileConfigProvider"


def test_ttl_expiry_restarts_only_when_a_value_changed(tmp_path: Path) -> None:
    secrets = tmp_path / "s.properties"
    secrets.write_text("pw=one\n", encoding="utf-8")
    worker = _worker(tmp_path, **{"config.providers.file.ttl": "100"})
    restarted = threading.Event()
    names: list[str] = []

    def restart(name: str) -> None:
        names.append(name)
        restarted.set()

    transformer = WorkerConfigTransformer(worker, restart)
    try:
        config = {"password": f"${{file:{secrets}:pw}}"}
        assert transformer.transform("c", config) == {"password": "one"}
        assert not restarted.wait(0.35)  # two expiries, nothing changed: no restart
        secrets.write_text("pw=two\n", encoding="utf-8")
        assert restarted.wait(5)
        assert names == ["c"]
        assert transformer.transform("c", {**config, "config.action.reload": "none"}) == {
            "password": "two",
            "config.action.reload": "none",
        }
    finally:
        transformer.close()


def test_a_provider_that_cannot_be_loaded_fails_the_worker() -> None:
    worker = {"config.providers": "vault", "config.providers.vault.class": "no.such.Provider"}
    with pytest.raises(ConnectError, match="Failed to find any class that implements"):
        WorkerConfigTransformer(worker, lambda name: None)
    with pytest.raises(ConfigError, match=r"config\.providers\.vault\.class"):
        WorkerConfigTransformer({"config.providers": "vault"}, lambda name: None)


def test_scrubber_puts_the_variables_back_into_a_trace(tmp_path: Path) -> None:
    secrets = tmp_path / "db.properties"
    secrets.write_text("pw=hunter22\nhost=db.internal\nid=7\n", encoding="utf-8")
    pw, host, short = (f"${{file:{secrets}:{k}}}" for k in ("pw", "host", "id"))
    config = {"url": f"jdbc:postgresql://{host}/x?password={pw}", "n": short, "plain": "v"}
    scrub = scrubber(_worker(tmp_path), config)
    trace = "Failed: jdbc:postgresql://db.internal/x?password=hunter22 (id 7)"
    assert scrub(trace) == f"Failed: jdbc:postgresql://{host}/x?password={pw} (id 7)"
    assert scrubber(_worker(tmp_path), {"plain": "hunter22"})("hunter22") == "hunter22"
