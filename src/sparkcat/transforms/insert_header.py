"""InsertHeader: add a header with a literal value to each record (Kafka's ``InsertHeader``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance, NonNullValidator
from sparkcat.api.values import parse_string
from sparkcat.transforms._base import SimpleTransformation

HEADER_CONFIG = "header"
VALUE_LITERAL_CONFIG = "value.literal"
OVERVIEW_DOC = "Add a header to each record."

CONFIG_DEF = (
    ConfigDef()
    .define(
        HEADER_CONFIG,
        ConfigType.STRING,
        validator=NonNullValidator(),
        importance=Importance.HIGH,
        documentation="The name of the header.",
    )
    .define(
        VALUE_LITERAL_CONFIG,
        ConfigType.STRING,
        validator=NonNullValidator(),
        importance=Importance.HIGH,
        documentation="The literal value that is to be set as the header value on all records.",
    )
)


class InsertHeader(SimpleTransformation):
    """Appends header ``header`` whose schema and value are ``value.literal`` parsed the way
    Kafka's ``Values.parseString`` does (``"42"`` becomes an INT8 42, ``"true"`` a BOOLEAN)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._header: str = parsed[HEADER_CONFIG]
        self._literal = parse_string(parsed[VALUE_LITERAL_CONFIG])

    def apply(self, record: Any) -> Any:
        headers = record.headers.with_header(
            self._header, self._literal.value, self._literal.schema
        )
        return record.new_record(
            record.topic,
            record.kafka_partition,
            record.key_schema,
            record.key,
            record.value_schema,
            record.value,
            record.timestamp,
            headers,
        )


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "InsertHeader"]
