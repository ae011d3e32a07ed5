"""The exception tree of sparkcat, written once.

Every error the framework or a plugin raises on purpose derives from :class:`ConnectError`,
the counterpart of Kafka's ``org.apache.kafka.connect.errors.ConnectException``::

    ConnectError
     +-- DataError                 bad data: schema/value mismatch, conversion failure
     |    +-- SchemaBuilderError   an invalid SchemaBuilder call
     |    +-- SchemaProjectorError a value cannot be projected onto a target schema
     +-- RetriableError            a transient failure; the framework retries the operation
     +-- ConfigError               a configuration value is missing or invalid
     +-- NotFoundError             a named connector, task, plugin or offset does not exist
     +-- AlreadyExistsError        a named entity already exists
     +-- IllegalWorkerStateError   the worker cannot perform the request in its current state

Names follow Kafka's, with the suffix ``Error`` in place of ``Exception``.
"""

from __future__ import annotations

from typing import Any


class ConnectError(Exception):
    """Root of every error raised by sparkcat and by plugins on purpose."""


class DataError(ConnectError):
    """A value does not match its schema, or data cannot be converted (Kafka's DataException)."""


class SchemaBuilderError(DataError):
    """An invalid call on a :class:`~sparkcat.api.data.SchemaBuilder`."""


class SchemaProjectorError(DataError):
    """A value cannot be projected from its schema onto a target schema."""


class RetriableError(ConnectError):
    """A transient failure: the framework retries the operation (``poll``, ``put``, ...)."""


class ConfigError(ConnectError):
    """A configuration value is missing or invalid (Kafka's ConfigException).

    When raised for one key, :attr:`name` and :attr:`value` identify it and the message has
    Kafka's form ``Invalid value <value> for configuration <name>: <reason>``.
    """

    def __init__(self, name: str, value: Any = None, message: str | None = None) -> None:
        self.name: str | None
        self.value: Any
        if message is None:
            # ConfigError("free text"): a message that names no single key.
            super().__init__(name)
            self.name, self.value = None, None
            return
        text = f"Invalid value {value} for configuration {name}"
        super().__init__(f"{text}: {message}" if message else text)
        self.name, self.value = name, value


class NotFoundError(ConnectError):
    """A named connector, task, plugin, logger or offset does not exist (REST 404)."""


class AlreadyExistsError(ConnectError):
    """A named entity already exists (REST 409)."""


class IllegalWorkerStateError(ConnectError):
    """The worker cannot perform the request in its current state."""


__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "ConnectError",
    "DataError",
    "IllegalWorkerStateError",
    "NotFoundError",
    "RetriableError",
    "SchemaBuilderError",
    "SchemaProjectorError",
]
