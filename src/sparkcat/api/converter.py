"""Converters: between Connect data (schema + value) and the bytes stored in Kafka.

Counterparts of Kafka's ``org.apache.kafka.connect.storage.{Converter, HeaderConverter,
ConverterType}``. A converter instance is created and configured on the executor that runs a
task (one instance for keys, one for values, one header converter per task), so it is never
pickled; it is used from one thread. Its ``configs`` are the converter's own keys with the
``key.converter.``/``value.converter.``/``header.converter.`` prefix stripped (strings, as
the user wrote them).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sparkcat.api.batch import ConnectDataBatch
    from sparkcat.api.config import ConfigDef
    from sparkcat.api.data import Schema, SchemaAndValue
    from sparkcat.api.records import Headers

CONVERTER_TYPE_CONFIG = "converter.type"
"""The key the framework sets in a converter's configs to say what it converts."""


class ConverterType(Enum):
    """What a converter instance converts; the value is the ``converter.type`` string."""

    KEY = "key"
    VALUE = "value"
    HEADER = "header"


def _empty_config_def() -> ConfigDef:
    from sparkcat.api.config import (
        ConfigDef,
    )  # lazy: config imports nothing of ours, but keep api modules independent

    return ConfigDef()


class Converter(ABC):
    """Converts record keys or values between Connect data and bytes.

    Source tasks: ``from_connect_data`` after the transformations, before the producer. Sink
    tasks: ``to_connect_data`` right after the consumer, before the transformations. Both run
    once per record on the executor; implementations should keep per-record work small.

    A converter may declare capabilities as class attributes; the framework takes shortcuts
    only for what a converter declares (never by recognising its class), and the shortcuts
    give the same bytes and data as the calls they replace.
    """

    null_pass_through: ClassVar[bool] = False
    """Declared ``True`` when, for every topic and configuration, a null without schema
    serializes to null (``from_connect_data(topic, None, None)`` is ``None``) and reading a
    null (``to_connect_data(topic, None)``) gives the same ``SchemaAndValue``, with no side
    effect. The framework then skips the call for a keyless source record and reads a null
    key once per connector rather than once per message. Default ``False``: every record is
    converted."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Called once after instantiation; ``is_key`` says whether it converts keys."""

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize ``value`` (described by ``schema``, ``None`` if schemaless) for
        ``topic``; ``None`` for a null value. Raises :class:`~sparkcat.api.errors.DataError`."""

    @abstractmethod
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize ``data`` read from ``topic``. Raises
        :class:`~sparkcat.api.errors.DataError` for malformed input."""

    # -- the columnar path (optional; see sparkcat.api.batch) ----------------------------
    def from_connect_data_batch(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        """Serialize many values of one ``schema`` for ``topic``, without headers: the
        same bytes, in order, as :meth:`from_connect_data` per value. Override it when a
        whole column can be done faster (e.g. ``map`` over a C function); the default calls
        :meth:`from_connect_data` per value. Raises like it (the framework then redoes the
        batch record by record, so a failure is reported for the record that caused it)."""
        convert = self.from_connect_data
        return [convert(topic, schema, value) for value in values]

    def to_connect_data_batch(self, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
        """Deserialize many messages of ``topic`` without headers: the same schemas and
        values, in order, as :meth:`to_connect_data` per message. The default calls it per
        message; override it for a faster column-wise version."""
        from sparkcat.api.batch import ConnectDataBatch  # lazy: batch imports records

        convert = self.to_connect_data
        pairs = [convert(topic, data) for data in datas]
        schemas = [pair[0] for pair in pairs]
        values = [pair[1] for pair in pairs]
        first = schemas[0] if schemas else None
        if all(schema is first for schema in schemas):
            return ConnectDataBatch(first, values)
        return ConnectDataBatch(None, values, schemas)

    def config(self) -> ConfigDef:
        """The converter's config keys (default: none)."""
        return _empty_config_def()

    def close(self) -> None:  # noqa: B027 - optional hook, deliberately empty
        """Release resources; called when the task's lease ends. Default: nothing."""


class HeaderConverter(ABC):
    """Converts header values between Connect data and bytes (one per task, executor-side)."""

    bytes_pass_through: ClassVar[bool] = False
    """Declared ``True`` when ``from_connect_header(topic, key, schema, value)`` returns
    ``value`` itself whenever it is ``bytes`` or ``None`` and ``schema`` is ``None`` or
    ``BYTES`` (as ``ByteArrayConverter`` does). The framework then hands the header column
    of a :class:`~sparkcat.api.batch.SourceRecordBatch` to the producer as it is, with no
    call per header. Default ``False``: every header value is converted."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once after instantiation."""

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialize one header value; ``None`` for a null value."""

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize one header value read from Kafka."""

    def config(self) -> ConfigDef:
        """The header converter's config keys (default: none)."""
        return _empty_config_def()

    def close(self) -> None:  # noqa: B027 - optional hook, deliberately empty
        """Release resources; called when the task's lease ends. Default: nothing."""


__all__ = ["CONVERTER_TYPE_CONFIG", "Converter", "ConverterType", "HeaderConverter"]
