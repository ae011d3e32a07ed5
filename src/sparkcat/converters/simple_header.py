"""SimpleHeaderConverter (``org.apache.kafka.connect.storage.SimpleHeaderConverter``), the
default header converter: values as their :mod:`sparkcat.api.values` string form in UTF-8,
read back with ``Values.parseString`` (raw bytes when the text cannot be parsed)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sparkcat.api import values
from sparkcat.api.config import ConfigDef
from sparkcat.api.converter import HeaderConverter
from sparkcat.api.data import BYTES_SCHEMA, Schema, SchemaAndValue
from sparkcat.api.errors import DataError

_LOG = logging.getLogger(__name__)


class SimpleHeaderConverter(HeaderConverter):
    """Header values as readable strings with schema inference on the way back."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Nothing to configure."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        text = values.convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        try:
            return values.parse_string(bytes(value).decode("utf-8"))
        except (DataError, UnicodeDecodeError, ValueError, RecursionError) as e:
            _LOG.warning(
                "Failed to deserialize value for header '%s' on topic '%s', so using byte array",
                header_key,
                topic,
                exc_info=e,
            )
            return SchemaAndValue(BYTES_SCHEMA, bytes(value))
