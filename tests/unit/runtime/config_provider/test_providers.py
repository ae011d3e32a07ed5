"""Kafka's built-in config providers, by their Kafka class names through the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.api.config_provider import ConfigProvider
from sparkcat.api.errors import ConfigError
from sparkcat.runtime.config_provider.directory import DirectoryConfigProvider
from sparkcat.runtime.config_provider.env_var import EnvVarConfigProvider
from sparkcat.runtime.config_provider.file import FileConfigProvider
from sparkcat.runtime.isolation.plugins import default_registry

KAFKA = "org.apache.kafka.common.config.provider."


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        (KAFKA + "FileConfigProvider", FileConfigProvider),
        (KAFKA + "DirectoryConfigProvider", DirectoryConfigProvider),
        (KAFKA + "EnvVarConfigProvider", EnvVarConfigProvider),
        ("FileConfigProvider", FileConfigProvider),
    ],
)
def test_resolves_by_kafka_class_name(name: str, cls: type) -> None:
    assert default_registry().resolve(name, "config_provider") is cls


def _configured(provider: ConfigProvider, **params: str) -> ConfigProvider:
    provider.configure({k.replace("_", "."): v for k, v in params.items()})
    return provider


def test_file_provider_reads_properties(tmp_path: Path) -> None:
    secrets = tmp_path / "db.properties"
    secrets.write_text("user=alice\npassword = s3cret\\u0021\n", encoding="utf-8")
    provider = _configured(FileConfigProvider())
    assert provider.get(str(secrets)).data == {"user": "alice", "password": "s3cret!"}
    assert provider.get(str(secrets), {"password", "absent"}).data == {"password": "s3cret!"}
    assert provider.get("").data == {}
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        provider.get(str(tmp_path / "missing.properties"))


def test_allowed_paths_limit_what_file_and_directory_read(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (allowed / "a.properties").write_text("k=v\n")
    (other / "b.properties").write_text("k=v\n")
    provider = _configured(FileConfigProvider(), allowed_paths=str(allowed))
    assert provider.get(str(allowed / "a.properties")).data == {"k": "v"}
    assert provider.get(str(other / "b.properties")).data == {}
    assert provider.get(str(allowed / ".." / "other" / "b.properties")).data == {}
    directory = _configured(DirectoryConfigProvider(), allowed_paths=str(allowed))
    assert directory.get(str(other)).data == {}
    with pytest.raises(ConfigError, match="is not absolute"):
        FileConfigProvider().configure({"allowed.paths": "relative/dir"})
    with pytest.raises(ConfigError, match="does not exist"):
        FileConfigProvider().configure({"allowed.paths": str(tmp_path / "nope")})


def test_directory_provider_reads_regular_files(tmp_path: Path) -> None:
    (tmp_path / "db-password").write_text("s3cret\n", encoding="utf-8")
    (tmp_path / "api-key").write_text("k3y", encoding="utf-8")
    (tmp_path / "subdir").mkdir()
    provider = _configured(DirectoryConfigProvider())
    assert provider.get(str(tmp_path)).data == {"db-password": "s3cret\n", "api-key": "k3y"}
    assert provider.get(str(tmp_path), {"api-key", "subdir"}).data == {"api-key": "k3y"}
    assert provider.get(str(tmp_path / "api-key")).data == {}  # not a directory


def test_env_var_provider_with_allowlist_pattern() -> None:
    env = {"APP_TOKEN": "t0k", "APP_USER": "bob", "HOME": "/root"}
    provider = _configured(EnvVarConfigProvider(env), allowlist_pattern="APP_.*")
    assert provider.get("").data == {"APP_TOKEN": "t0k", "APP_USER": "bob"}
    assert provider.get("", {"APP_TOKEN", "HOME"}).data == {"APP_TOKEN": "t0k"}
    assert _configured(EnvVarConfigProvider(env)).get("", {"HOME"}).data == {"HOME": "/root"}
    with pytest.raises(
        ConfigError,
        match="Path is not supported for EnvVarConfigProvider, invalid value '/x'",
    ):
        provider.get("/x")
