"""Kafka's ``ConnectRestExtension`` (KIP-285): plugins that add to the worker's REST API.

``rest.extension.classes`` lists them by class name: Kafka's
``org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension`` (or
``BasicAuthSecurityRestExtension``) is built in (:mod:`.basic_auth`); others are loaded by
``module:Class`` or dotted path. Each is instantiated, ``configure``\\ d with the worker's
settings, and ``register``\\ ed with a :class:`ConnectRestExtensionContext` whose ``app`` is the
REST application (add ASGI middleware or routes to it) and whose ``cluster_state`` is the
herder. Extensions run in the worker process only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from sparkcat.api.errors import ConfigError

REST_EXTENSION_CLASSES_CONFIG = "rest.extension.classes"

_BUILTINS = {
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension": (
        "sparkcat.runtime.rest.basic_auth:BasicAuthSecurityRestExtension"
    ),
}
_BUILTINS["BasicAuthSecurityRestExtension"] = next(iter(_BUILTINS.values()))


@dataclass(frozen=True, slots=True)
class ConnectRestExtensionContext:
    """What an extension registers with: the REST ``app`` and the herder."""

    app: FastAPI
    cluster_state: Any


class ConnectRestExtension(ABC):
    """A REST extension; subclass it and name it in ``rest.extension.classes``."""

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Called once with the worker's settings before :meth:`register`."""

    @abstractmethod
    def register(self, context: ConnectRestExtensionContext) -> None:
        """Add middleware or routes to ``context.app``."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources at worker shutdown."""

    def version(self) -> str:
        return "1.0"


def load_extensions(names: list[str], worker: Mapping[str, Any]) -> list[ConnectRestExtension]:
    """Instantiate and configure the extensions ``rest.extension.classes`` names."""
    from sparkcat.runtime.isolation.plugins import load_target

    extensions = []
    for name in (n.strip() for n in names):
        if not name:
            continue
        target = _BUILTINS.get(name, name)
        if ":" not in target:  # a dotted path: module.Class
            module, _, qualname = target.rpartition(".")
            target = f"{module}:{qualname}"
        try:
            cls = load_target(target)
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            raise ConfigError(
                REST_EXTENSION_CLASSES_CONFIG, name, f"Class {name} could not be loaded: {exc}"
            ) from exc
        if not (isinstance(cls, type) and issubclass(cls, ConnectRestExtension)):
            raise ConfigError(REST_EXTENSION_CLASSES_CONFIG, name, "Not a ConnectRestExtension")
        extension = cls()
        extension.configure(worker)
        extensions.append(extension)
    return extensions


__all__ = [
    "REST_EXTENSION_CLASSES_CONFIG",
    "ConnectRestExtension",
    "ConnectRestExtensionContext",
    "load_extensions",
]
