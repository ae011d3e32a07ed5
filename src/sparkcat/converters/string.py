"""StringConverter (``org.apache.kafka.connect.storage.StringConverter``).

Writes ``str(value)`` in ``converter.encoding`` (default UTF-8), ignoring the schema; reads
any bytes as an optional STRING. Also a HeaderConverter.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from sparkcat.api.batch import ConnectDataBatch
from sparkcat.api.config import ConfigDef, ConfigType, Importance, Width
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import OPTIONAL_STRING_SCHEMA, Schema, SchemaAndValue
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import Headers
from sparkcat.converters._config import new_converter_config_def, with_converter_type

ENCODING_CONFIG = "converter.encoding"
ENCODING_DEFAULT = "UTF-8"

CONFIG_DEF = new_converter_config_def().define(
    ENCODING_CONFIG,
    ConfigType.STRING,
    ENCODING_DEFAULT,
    importance=Importance.HIGH,
    documentation="The name of the Java character set to use for encoding strings as byte arrays.",
    width=Width.MEDIUM,
    display_name="Encoding",
)


_NULL = SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
_ONLY_STR = {str}
_ONLY_BYTES = {bytes}
# SchemaAndValue is a NamedTuple: tuple.__new__ skips its Python-level constructor.
_new_sv = tuple.__new__


class StringConverter(Converter, HeaderConverter):
    """Strings in a configurable character set."""

    null_pass_through = True  # null <-> a null STRING for every topic

    def __init__(self) -> None:
        self._encoding = "utf-8"
        # None selects str.encode()/bytes.decode()'s built-in UTF-8 (no codec name lookup).
        self._codec: str | None = None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Converter: ``configure(configs, is_key)``; HeaderConverter: ``configure(configs)``."""
        parsed = CONFIG_DEF.parse(with_converter_type(configs, is_key))
        encoding = parsed[ENCODING_CONFIG]
        try:
            self._encoding = codecs.lookup(encoding).name
        except LookupError as e:
            raise ConfigError(ENCODING_CONFIG, encoding, f"Unsupported encoding {encoding}") from e
        self._codec = None if self._encoding == "utf-8" else self._encoding

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        try:
            text = value if value.__class__ is str else str(value)
            codec = self._codec
            return text.encode() if codec is None else text.encode(codec)
        except UnicodeEncodeError as e:
            raise DataError(f"Failed to serialize to a string (topic '{topic}'): {e}") from e

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _NULL
        try:
            if data.__class__ is not bytes:
                data = bytes(data)
            codec = self._codec
            text = data.decode() if codec is None else data.decode(codec)
            return _new_sv(SchemaAndValue, (OPTIONAL_STRING_SCHEMA, text))
        except UnicodeDecodeError as e:
            raise DataError(f"Failed to deserialize string (topic '{topic}'): {e}") from e

    # The columnar path: a column of str/bytes is one map over a C method; anything unusual
    # (nulls, other types, undecodable bytes) takes the per-record method, which raises
    # Kafka's error for the record at fault.
    def from_connect_data_batch(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        if self._codec is None and set(map(type, values)) == _ONLY_STR:
            try:
                return list(map(str.encode, values))
            except UnicodeEncodeError:
                pass
        return super().from_connect_data_batch(topic, schema, values)

    def to_connect_data_batch(self, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
        if self._codec is None and set(map(type, datas)) == _ONLY_BYTES:
            try:
                return ConnectDataBatch(OPTIONAL_STRING_SCHEMA, list(map(bytes.decode, datas)))  # type: ignore[arg-type]
            except UnicodeDecodeError:
                pass
        return super().to_connect_data_batch(topic, datas)

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
