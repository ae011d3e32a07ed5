"""Kafka's ``AllowedPaths``: the ``allowed.paths`` parameter of the file-based providers."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparkcat.api.config_provider import ConfigProvider
from sparkcat.api.errors import ConfigError

log = logging.getLogger(__name__)

ALLOWED_PATHS_CONFIG = "allowed.paths"
ALLOWED_PATHS_DOC = (
    "A comma separated list of paths that this config provider is allowed to access. "
    "If not set, all paths are allowed."
)


class AllowedPaths:
    """The directories a provider may read below; ``None`` value: every path is allowed.

    Each listed path must be absolute and exist (Kafka's ``ConfigException`` otherwise).
    """

    def __init__(self, value: str | None) -> None:
        self._roots: list[Path] | None = None
        if value:
            roots = []
            for item in value.split(","):
                path = Path(os.path.normpath(item))
                if not path.is_absolute():
                    raise ConfigError(f"Path {path} is not absolute")
                if not path.exists():
                    raise ConfigError(f"Path {path} does not exist")
                roots.append(path)
            self._roots = roots

    def parse_untrusted_path(self, path: str) -> Path | None:
        """``path`` (normalised) if it lies under an allowed root, else ``None``."""
        if self._roots is None:
            return Path(path)
        normalised = Path(os.path.normpath(path))
        if any(normalised == root or root in normalised.parents for root in self._roots):
            return normalised
        return None


class PathConfigProvider(ConfigProvider):
    """What Kafka's file and directory providers share: ``allowed.paths``, and a path that is
    empty or outside it yields no data (the ``${...}`` stays as it is)."""

    def __init__(self) -> None:
        self._allowed: AllowedPaths | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = configs.get(ALLOWED_PATHS_CONFIG)
        self._allowed = AllowedPaths(None if value is None else str(value))

    def _allowed_path(self, path: str) -> Path | None:
        """``path`` to read, or ``None`` when there is nothing to read there."""
        if self._allowed is None:
            raise ConfigError("The provider has not been configured yet.")
        if not path:
            return None
        allowed = self._allowed.parse_untrusted_path(path)
        if allowed is None:
            log.warning("The path %s is not allowed to be accessed", path)
        return allowed


__all__ = ["ALLOWED_PATHS_CONFIG", "ALLOWED_PATHS_DOC", "AllowedPaths", "PathConfigProvider"]
