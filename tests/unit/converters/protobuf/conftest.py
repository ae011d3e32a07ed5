"""The Schema Registry converters' shared fixtures."""

from tests.support.registry_converters import close_registry_clients, topic

__all__ = ["close_registry_clients", "topic"]
