"""Kafka's ``FileConfigProvider``: values from a Java ``.properties`` file.

``${file:/etc/connect/secrets.properties:db.password}`` is the value of ``db.password`` in
that file. Configured with ``allowed.paths`` (see :mod:`.allowed_paths`): a path outside
them yields no data (and the ``${...}`` stays as it is), as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sparkcat.api.config_provider import ConfigData
from sparkcat.api.errors import ConfigError
from sparkcat.kafka.properties import parse_properties
from sparkcat.runtime.config_provider.allowed_paths import PathConfigProvider

log = logging.getLogger(__name__)


class FileConfigProvider(PathConfigProvider):
    """``org.apache.kafka.common.config.provider.FileConfigProvider``."""

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        file_path = self._allowed_path(path)
        if file_path is None:
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
