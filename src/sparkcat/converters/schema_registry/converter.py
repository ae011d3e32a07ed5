"""The set-up every Schema Registry converter shares (Confluent's ``AbstractKafkaSchemaSerDe``
as a Connect converter sees it).

A subclass names its schema type and its config class, and builds one writer per (topic,
Connect schema) and one reader per (topic, reader key) -- the key being what identifies the
schema in a message: its registry id, or for protobuf the header and message indexes. This
class parses the configs, gets the process's registry client (:class:`RegistrySerde`: subject
name strategy, ``auto.register.schemas``, ``use.latest.version``) and keeps the two caches of
``schemas.cache.config`` entries, with the last entry of each remembered by identity so a
stream of one schema costs no hashing.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from cachetools import LRUCache

from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import Converter
from sparkcat.api.data import Schema
from sparkcat.converters._config import with_converter_type
from sparkcat.converters.schema_registry.client import RegistrySerde
from sparkcat.converters.schema_registry.config import SerdeConfig

ConfigT = TypeVar("ConfigT", bound=SerdeConfig)
WriterT = TypeVar("WriterT")
ReaderT = TypeVar("ReaderT")

_NOTHING = object()  # a last-entry key no call passes
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _cached(cache: LRUCache[K, V], key: K, build: Callable[[], V]) -> V:
    """``cache[key]``, built and kept on a miss."""
    value = cache.get(key)
    if value is None:
        value = cache[key] = build()
    return value


class SchemaRegistryConverter(Converter, Generic[ConfigT, WriterT, ReaderT]):
    """A converter whose schemas live in a Schema Registry; see the module docstring.

    Subclasses set ``schema_type`` (the registry's ``AVRO``, ``PROTOBUF``, ``JSON``),
    ``schema_format`` (the registry's ``format`` of the schemas it returns, ``None`` for its
    default), ``config_def`` and ``config_class``, and implement :meth:`_new_writer` and
    :meth:`_new_reader`; :meth:`_configured` builds what the mapping needs from the configs.
    """

    # null <-> null for every topic: a tombstone never reaches the registry (as Confluent's).
    null_pass_through = True
    schema_type: ClassVar[str]
    schema_format: ClassVar[str | None] = None
    config_def: ClassVar[ConfigDef]
    config_class: Callable[[Mapping[str, Any]], ConfigT]  # the config class

    def __init__(self) -> None:
        self._config: ConfigT | None = None

    def config(self) -> ConfigDef:
        return self.config_def

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        config = self.config_class(with_converter_type(configs, is_key))
        self._config = config
        self._serde = RegistrySerde(config, self.schema_type, fmt=self.schema_format)
        size = max(config.schemas_cache_size, 1)
        self._writers: LRUCache[tuple[str, Schema | None], WriterT] = LRUCache(size)
        self._readers: LRUCache[tuple[str, Hashable], ReaderT] = LRUCache(size)
        self._last_write: tuple[str | None, Any, WriterT | None] = (None, _NOTHING, None)
        self._last_read: tuple[str | None, Any, ReaderT | None] = (None, _NOTHING, None)
        self._configured(config)

    def _configured(self, config: ConfigT) -> None:
        """Build what the subclass derives from its configs (called by :meth:`configure`)."""

    def close(self) -> None:
        """Nothing to release: registry clients are shared by the process."""

    def _writer_for(self, topic: str, schema: Schema | None) -> WriterT:
        """The writer of ``schema`` on ``topic``, built (and the schema registered or looked
        up) on first use."""
        last_topic, last_schema, writer = self._last_write
        if schema is last_schema and topic == last_topic and writer is not None:
            return writer
        writer = _cached(self._writers, (topic, schema), lambda: self._new_writer(topic, schema))
        self._last_write = (topic, schema, writer)
        return writer

    def _reader_for(self, topic: str, key: Hashable) -> ReaderT:
        """The reader of messages on ``topic`` whose schema ``key`` identifies, built (and
        the schema fetched) on first use."""
        last_topic, last_key, reader = self._last_read
        if key == last_key and topic == last_topic and reader is not None:
            return reader
        reader = _cached(self._readers, (topic, key), lambda: self._new_reader(topic, key))
        self._last_read = (topic, key, reader)
        return reader

    @abstractmethod
    def _new_writer(self, topic: str, schema: Any) -> WriterT:
        """Map ``schema``, get its registry id (register, look up or take the latest) and
        build what serializes its values."""

    @abstractmethod
    def _new_reader(self, topic: str, key: Any) -> ReaderT:
        """Fetch the schema ``key`` identifies, map it to Connect and build what
        deserializes its messages."""


__all__ = ["SchemaRegistryConverter"]
