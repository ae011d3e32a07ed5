"""Config providers (KIP-297): resolve ``${provider:path:key}`` references in configs.

Counterparts of Kafka's ``org.apache.kafka.common.config.provider.ConfigProvider`` and
``common.config.ConfigData``. Providers are configured from the worker config
(``config.providers=file`` with ``config.providers.file.class=...`` and
``config.providers.file.param.<k>=<v>``) and run in the worker's main process, where
connector configs are resolved before they reach connectors and tasks; they are never
pickled.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ConfigData:
    """Values a provider found at one path: ``data`` key → value, and an optional ``ttl``
    in milliseconds after which the values should be fetched again."""

    data: dict[str, str] = field(default_factory=dict)
    ttl: int | None = None


class ConfigProvider(ABC):
    """Looks up config values by path (a file, a vault path, ...) and key."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once with the provider's ``param.*`` keys (prefix stripped)."""

    @abstractmethod
    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """The values at ``path``: all of them, or only ``keys`` (missing keys are left out)."""

    def subscribe(self, path: str, keys: Iterable[str], callback: Callable[..., None]) -> None:
        """Be told when values change; not supported unless overridden."""
        raise NotImplementedError("subscribe is not supported by this ConfigProvider")

    def unsubscribe(self, path: str, keys: Iterable[str], callback: Callable[..., None]) -> None:
        """Undo :meth:`subscribe`; not supported unless overridden."""
        raise NotImplementedError("unsubscribe is not supported by this ConfigProvider")

    def close(self) -> None:  # noqa: B027 - optional hook, deliberately empty
        """Release resources at worker shutdown. Default: nothing."""


__all__ = ["ConfigData", "ConfigProvider"]
