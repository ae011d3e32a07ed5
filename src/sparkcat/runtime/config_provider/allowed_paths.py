"""Kafka's ``AllowedPaths``: the ``allowed.paths`` parameter of the file-based providers."""

from __future__ import annotations

import os
from pathlib import Path

from sparkcat.api.errors import ConfigError

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


__all__ = ["ALLOWED_PATHS_CONFIG", "ALLOWED_PATHS_DOC", "AllowedPaths"]
