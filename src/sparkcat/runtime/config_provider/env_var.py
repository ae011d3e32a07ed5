"""Kafka's ``EnvVarConfigProvider``: values from the process environment.

``${env:DB_PASSWORD}`` (no path: a path is an error) is ``$DB_PASSWORD`` of the process
that resolves it -- the worker for connector configs, the Spark executor for task configs,
so the variable must be set where executors run. ``allowlist.pattern`` (a regular
expression matched against the whole name) limits which variables can be read.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sparkcat.api.config_provider import ConfigData, ConfigProvider
from sparkcat.api.errors import ConfigError

log = logging.getLogger(__name__)

ALLOWLIST_PATTERN_CONFIG = "allowlist.pattern"


class EnvVarConfigProvider(ConfigProvider):
    """``org.apache.kafka.common.config.provider.EnvVarConfigProvider``."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ if env is None else env)
        self._filtered: dict[str, str] = {}

    def configure(self, configs: Mapping[str, Any]) -> None:
        if ALLOWLIST_PATTERN_CONFIG in configs:
            pattern = re.compile(str(configs[ALLOWLIST_PATTERN_CONFIG]))
        else:
            pattern = re.compile(".*")
            log.info("No pattern for environment variables provided. Using default pattern '(.*)'.")
        self._filtered = {k: v for k, v in self._env.items() if pattern.fullmatch(k)}

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if path:
            message = f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
            log.error(message)
            raise ConfigError(message)
        if keys is None:
            return ConfigData(dict(self._filtered))
        return ConfigData({k: self._filtered[k] for k in keys if k in self._filtered})


__all__ = ["ALLOWLIST_PATTERN_CONFIG", "EnvVarConfigProvider"]
