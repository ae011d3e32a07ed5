"""The Schema Registry converters' shared fixtures."""

from tests.unit.converters.registry_support import close_registry_clients, topic

__all__ = ["close_registry_clients", "topic"]
