"""Number and boolean converters (``org.apache.kafka.connect.converters.*Converter``).

Big-endian fixed-width encodings like Kafka's ``Short/Integer/Long/Float/Double/Boolean``
serializers; ``None`` ↔ ``None``. Error texts are Kafka's: a value of the wrong class gives
``Failed to serialize to <type> (was <class>): ``, bytes of the wrong length
``Failed to deserialize <type>: Size of data received by … is not N``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import Converter, HeaderConverter
from sparkcat.api.data import (
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    Schema,
    SchemaAndValue,
    Type,
)
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters._config import new_converter_config_def, with_converter_type

CONFIG_DEF = new_converter_config_def()
_new_sv = tuple.__new__  # SchemaAndValue is a NamedTuple: skips its Python-level constructor
_NULL_BOOLEAN = SchemaAndValue(OPTIONAL_BOOLEAN_SCHEMA, None)


class NumberConverter(Converter, HeaderConverter):
    """Base of the fixed-width number converters (Kafka's ``NumberConverter``)."""

    null_pass_through = True  # null <-> a null of the converter's type, for every topic

    type_name: ClassVar[str]
    schema: ClassVar[Schema]
    codec: ClassVar[struct.Struct]
    deserializer_name: ClassVar[str]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        CONFIG_DEF.parse(with_converter_type(configs, is_key))

    def _accepts(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        # Every numeric converter takes a plain int; other classes ask the converter.
        if value.__class__ is not int and not self._accepts(value):
            raise DataError(f"Failed to serialize to {self.type_name} (was {type(value)}): ")
        try:
            return self.codec.pack(value)
        except struct.error as e:
            raise DataError(f"Failed to serialize to {self.type_name}: {e}") from e

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _new_sv(SchemaAndValue, (self.schema, None))
        if len(data) != self.codec.size:
            raise DataError(
                f"Failed to deserialize {self.type_name}: Size of data received by "
                f"{self.deserializer_name} is not {self.codec.size} (topic '{topic}')"
            )
        return _new_sv(SchemaAndValue, (self.schema, self.codec.unpack(data)[0]))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


class ShortConverter(NumberConverter):
    """INT16 as 2 bytes big-endian."""

    type_name = "short"
    schema = OPTIONAL_INT16_SCHEMA
    codec = struct.Struct(">h")
    deserializer_name = "ShortDeserializer"


class IntegerConverter(NumberConverter):
    """INT32 as 4 bytes big-endian."""

    type_name = "integer"
    schema = OPTIONAL_INT32_SCHEMA
    codec = struct.Struct(">i")
    deserializer_name = "IntegerDeserializer"


class LongConverter(NumberConverter):
    """INT64 as 8 bytes big-endian."""

    type_name = "long"
    schema = OPTIONAL_INT64_SCHEMA
    codec = struct.Struct(">q")
    deserializer_name = "LongDeserializer"


class FloatConverter(NumberConverter):
    """FLOAT32 as 4 bytes IEEE 754 big-endian."""

    type_name = "float"
    schema = OPTIONAL_FLOAT32_SCHEMA
    codec = struct.Struct(">f")
    deserializer_name = "Deserializer"  # sic: Kafka's FloatDeserializer message

    def _accepts(self, value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)


class DoubleConverter(NumberConverter):
    """FLOAT64 as 8 bytes IEEE 754 big-endian."""

    type_name = "double"
    schema = OPTIONAL_FLOAT64_SCHEMA
    codec = struct.Struct(">d")
    deserializer_name = "Deserializer"  # sic: Kafka's DoubleDeserializer message

    def _accepts(self, value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)


class BooleanConverter(Converter, HeaderConverter):
    """BOOLEAN as one byte: ``0x01`` true, ``0x00`` false."""

    null_pass_through = True  # null <-> a null BOOLEAN, for every topic

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        CONFIG_DEF.parse(with_converter_type(configs, is_key))

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BOOLEAN:
            raise DataError(f"Invalid schema type for BooleanConverter: {schema.type}")
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataError(
                f"BooleanConverter is not compatible with objects of type {type(value)}"
            )
        return b"\x01" if value else b"\x00"

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _NULL_BOOLEAN
        if len(data) != 1:
            raise DataError(
                "Failed to deserialize boolean: Size of data received by BooleanDeserializer is "
                f"not 1 (topic '{topic}')"
            )
        if data[0] not in (0, 1):
            raise DataError(
                "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: "
                f"{data[0] - 256 if data[0] > 127 else data[0]} (topic '{topic}')"
            )
        return _new_sv(SchemaAndValue, (OPTIONAL_BOOLEAN_SCHEMA, data[0] == 1))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
