"""Kafka's ``DirectoryConfigProvider``: one value per regular file of a directory.

``${directory:/run/secrets:db-password}`` is the content of ``/run/secrets/db-password``
(Kubernetes/Docker secret mounts). Sub-directories are ignored; ``allowed.paths`` as for
:class:`~sparkcat.runtime.config_provider.file.FileConfigProvider`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from sparkcat.api.config_provider import ConfigData
from sparkcat.api.errors import ConfigError
from sparkcat.runtime.config_provider.allowed_paths import PathConfigProvider

log = logging.getLogger(__name__)


class DirectoryConfigProvider(PathConfigProvider):
    """``org.apache.kafka.common.config.provider.DirectoryConfigProvider``."""

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        directory = self._allowed_path(path)
        if directory is None:
            return ConfigData({})
        if not directory.is_dir():
            log.warning("The path %s is not a directory", path)
            return ConfigData({})
        wanted = None if keys is None else set(keys)
        try:
            files = [p for p in directory.iterdir() if p.is_file()]
        except OSError as exc:
            raise ConfigError(f"Could not list directory {directory}") from exc
        return ConfigData({p.name: _read(p) for p in files if wanted is None or p.name in wanted})


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Could not read file {path} for property {path.name}") from exc


__all__ = ["DirectoryConfigProvider"]
