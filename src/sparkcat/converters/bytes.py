"""ByteArrayConverter (``org.apache.kafka.connect.converters.ByteArrayConverter``): bytes pass
through unchanged; also a HeaderConverter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.batch import ConnectDataBatch
from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA, Schema, SchemaAndValue, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters._config import new_converter_config_def

CONFIG_DEF = new_converter_config_def()
_NULL = SchemaAndValue(OPTIONAL_BYTES_SCHEMA, None)
_PLAIN = {bytes, type(None)}
_new_sv = tuple.__new__  # SchemaAndValue is a NamedTuple: skips its Python-level constructor


class ByteArrayConverter(Converter, HeaderConverter):
    """Raw bytes: schema must be absent or BYTES; reads as an optional BYTES value."""

    # Declared capabilities (see the api's Converter and HeaderConverter): null is null for
    # every topic, and bytes header values are written as they are.
    null_pass_through = True
    bytes_pass_through = True

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Nothing to configure (as in Kafka)."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type}")
        if value is None:
            return None
        if value.__class__ is bytes:
            return value  # immutable: no copy needed
        if not isinstance(value, bytes | bytearray | memoryview):
            raise DataError(
                f"ByteArrayConverter is not compatible with objects of type {type(value)}"
            )
        return bytes(value)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _NULL
        if data.__class__ is not bytes:
            data = bytes(data)
        return _new_sv(SchemaAndValue, (OPTIONAL_BYTES_SCHEMA, data))

    # The columnar path: bytes and nulls pass through as they are, in one C-level check.
    def from_connect_data_batch(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        if (schema is None or schema.type is Type.BYTES) and set(map(type, values)) <= _PLAIN:
            return list(values)
        return super().from_connect_data_batch(topic, schema, values)

    def to_connect_data_batch(self, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
        if set(map(type, datas)) <= _PLAIN:
            return ConnectDataBatch(OPTIONAL_BYTES_SCHEMA, list(datas))
        return super().to_connect_data_batch(topic, datas)

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
