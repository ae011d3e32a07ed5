"""Registry I/O for the converters: one confluent-kafka ``SchemaRegistryClient`` per process
and configuration, and the serializer's choice of schema id (register, look up, or the
subject's latest version) as Confluent's ``AbstractKafkaSchemaSerDe`` makes it.

Converters are created from their configs on each Spark executor; the clients (and their
HTTP connection pools and caches) live as long as the Python worker process, so a new lease
of the same task reuses them.

A registry that cannot be reached (refused connection, unknown host, TLS failure, socket
time-out) is a :class:`~sparkcat.api.errors.DataError` naming the registry's URL, as
Confluent's converters turn it into a ``NetworkException`` that Connect does not retry: with
``errors.tolerance=none`` the task fails at once with that message in its trace, rather than
each record being retried or skipped.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from sparkcat.api.errors import DataError
from sparkcat.converters.schema_registry.config import SerdeConfig

LatestCheck = Callable[[str, str], list[str]]
"""``(latest schema text, record schema text) -> problems`` (empty: compatible)."""

_clients: dict[tuple[tuple[str, Any], ...], SchemaRegistryClient] = {}
_lock = threading.Lock()


def registry_client(conf: dict[str, Any]) -> SchemaRegistryClient:
    """The process's client for ``conf`` (created on first use)."""
    key = tuple(sorted(conf.items()))
    with _lock:
        client = _clients.get(key)
        if client is None:
            try:
                client = SchemaRegistryClient(conf)
            except (ValueError, TypeError) as e:
                raise DataError(f"Invalid Schema Registry client configuration: {e}") from e
            _clients[key] = client
        return client


def close_clients() -> None:
    """Close and forget every cached client (for tests and orderly process shutdown)."""
    with _lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        client.close()


def _int(value: int | None) -> int:
    if value is None:
        raise DataError("The Schema Registry's answer lacks an id or version")
    return int(value)


def describe(error: Exception) -> str:
    """The registry's message as Confluent's client prints it (message; error code: n)."""
    if isinstance(error, SchemaRegistryError):
        return f"{error.error_message}; error code: {error.error_code}"
    return str(error) or type(error).__name__


def _transport_errors() -> tuple[type[Exception], ...]:
    """What the registry client raises when the network fails: the transport errors of the
    HTTP library it uses (httpx2 when installed, else httpx) and the OS's socket errors."""
    errors: list[type[Exception]] = [OSError]
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except ImportError:
            continue
    return tuple(errors)


_TRANSPORT_ERRORS = _transport_errors()

_DISPLAY_NAMES = {"AVRO": "Avro", "JSON": "JSON", "PROTOBUF": "Protobuf"}


class RegistrySerde:
    """The schema-id side of a Schema Registry converter of one schema type (AVRO, JSON,
    PROTOBUF).

    ``fmt`` is the registry's ``format`` of the schemas it returns (``"serialized"``: a
    protobuf schema as the base64 of its ``FileDescriptorProto`` rather than ``.proto`` text);
    ``None`` keeps the registry's default."""

    def __init__(self, config: SerdeConfig, schema_type: str, fmt: str | None = None) -> None:
        self.config = config
        self.schema_type = schema_type
        self.fmt = fmt
        self.display = _DISPLAY_NAMES.get(schema_type, schema_type)
        self.client = registry_client(config.client_conf())
        self.is_key = config.is_key

    @property
    def _kind(self) -> str:
        return "key" if self.is_key else "value"

    @contextmanager
    def _calling(self, action: str) -> Iterator[None]:
        """Registry errors while doing ``action`` as :class:`DataError`: the registry's
        answer (message; error code), or the network failure and the URL it happened on."""
        try:
            yield
        except SchemaRegistryError as e:
            raise DataError(f"Error {action}: {describe(e)}") from e
        except _TRANSPORT_ERRORS as e:
            raise DataError(
                f"Network connection error while {action}: Schema Registry unreachable at "
                f"{self._url_of(e)}: {describe(e)}"
            ) from e

    def _url_of(self, error: BaseException) -> str:
        # The request the client was making names the registry it tried; without one, the
        # configured URLs.
        try:
            request = getattr(error, "request", None)
        except RuntimeError:  # httpx: an error raised outside a request has none
            request = None
        return str(request.url) if request is not None else ", ".join(self.config.urls)

    def subject(self, topic: str, record_name: str | None) -> str:
        return self.config.subject_strategy(topic, self.is_key, record_name)

    def writer_schema(
        self,
        topic: str,
        record_name: str | None,
        text: str,
        latest_can_read: LatestCheck | None = None,
    ) -> tuple[int, str]:
        """``(schema id, schema text to write with)`` for a record of schema ``text``.

        With ``use.latest.version`` and ``latest.compatibility.strict``, ``latest_can_read(
        latest text, text)`` lists why the latest version cannot read data of ``text``
        (Confluent's local check); without it the registry is asked instead."""
        subject = self.subject(topic, record_name)
        schema = RegistrySchema(text, self.schema_type)
        config = self.config
        action = "registering" if config.auto_register else "retrieving"
        with self._calling(f"{action} {self.display} {self._kind} schema for subject {subject}"):
            if config.use_latest_version:
                latest = self.client.get_latest_version(subject, fmt=self.fmt)
                latest_text = str(latest.schema.schema_str)
                if config.latest_compatibility_strict:
                    if latest_can_read is not None:
                        problems = latest_can_read(latest_text, text)
                    elif not self.client.test_compatibility(subject, schema, "latest"):
                        problems = ["the registry found them incompatible"]
                    else:
                        problems = []
                    if problems:
                        raise DataError(
                            f"Incompatible schema {latest_text} of type {self.schema_type} for "
                            f"schema {text}: {'; '.join(problems)}. Set "
                            "latest.compatibility.strict=false to disable this check"
                        )
                return _int(latest.schema_id), latest_text
            if config.auto_register:
                schema_id = self.client.register_schema(subject, schema, config.normalize)
                return _int(schema_id), text
            registered = self.client.lookup_schema(subject, schema, config.normalize, fmt=self.fmt)
            return _int(registered.schema_id), text

    def schema_by_id(self, schema_id: int) -> str:
        """The text of schema ``schema_id``."""
        with self._calling(f"retrieving {self.display} schema for id {schema_id}"):
            return str(self.client.get_schema(schema_id, fmt=self.fmt).schema_str)

    def references(self, schema_id: int) -> list[Any]:
        """The registry's references (name, subject, version) of schema ``schema_id``, which
        :meth:`schema_by_id` fetched before (the client caches it)."""
        return list(self.client.get_schema(schema_id, fmt=self.fmt).references or [])

    def references_of(
        self, schema_id: int, skip: Callable[[str], bool] = lambda name: False
    ) -> list[tuple[str, str]]:
        """``(name, text)`` of the schemas schema ``schema_id`` references, transitively,
        dependencies first; references whose name ``skip`` accepts are not fetched."""
        found: list[tuple[str, str]] = []
        with self._calling(f"retrieving {self.display} schema references for id {schema_id}"):
            self._collect(self.references(schema_id), skip, found, set())
        return found

    def _collect(
        self,
        references: list[Any],
        skip: Callable[[str], bool],
        found: list[tuple[str, str]],
        seen: set[str],
    ) -> None:
        for reference in references:
            name = str(reference.name)
            if name in seen or skip(name):
                continue
            seen.add(name)
            registered = self.client.get_version(
                str(reference.subject), int(reference.version), fmt=self.fmt
            )
            self._collect(list(registered.schema.references or []), skip, found, seen)
            found.append((name, str(registered.schema.schema_str)))

    def version_of(
        self,
        topic: str,
        record_name: str | None,
        schema_id: int,
        text: str,
        references: list[Any] | None = None,
    ) -> int:
        """The version of schema ``text`` (id ``schema_id``, with ``references``) under the
        reading subject."""
        subject = self.subject(topic, record_name)
        schema = RegistrySchema(text, self.schema_type, references=references or [])
        with self._calling(
            f"retrieving {self.display} {self._kind} schema version for id {schema_id}"
        ):
            registered = self.client.lookup_schema(subject, schema, fmt=self.fmt)
            return _int(registered.version)
