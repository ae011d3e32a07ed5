"""Kafka's ``FileConfigProvider``: values from a Java ``.properties`` file.

``${file:/etc/connect/secrets.properties:db.password}`` is the value of ``db.password`` in
that file. Configured with ``allowed.paths`` (see :mod:`.allowed_paths`): a path outside
them yields no data (and the ``${...}`` stays as it is), as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from sparkcat.api.config_provider import ConfigData, ConfigProvider
from sparkcat.api.errors import ConfigError
from sparkcat.runtime.config_provider.allowed_paths import ALLOWED_PATHS_CONFIG, AllowedPaths
from sparkcat.runtime.properties import parse_properties

log = logging.getLogger(__name__)


class FileConfigProvider(ConfigProvider):
    """``org.apache.kafka.common.config.provider.FileConfigProvider``."""

    def __init__(self) -> None:
        self._allowed: AllowedPaths | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = configs.get(ALLOWED_PATHS_CONFIG)
        self._allowed = AllowedPaths(None if value is None else str(value))

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if self._allowed is None:
            raise ConfigError("The provider has not been configured yet.")
        if not path:
            return ConfigData({})
        file_path = self._allowed.parse_untrusted_path(path)
        if file_path is None:
            log.warning("The path %s is not allowed to be accessed", path)
            return ConfigData({})
        try:
            values = parse_properties(file_path.read_text(encoding="utf-8"))
        except OSError as exc:
            log.error("Could not read properties from file %s: %s", path, exc)
            raise ConfigError(f"Could not read properties from file {path}") from exc
        if keys is None:
            return ConfigData(values)
        return ConfigData({k: values[k] for k in keys if k in values})


__all__ = ["FileConfigProvider"]
