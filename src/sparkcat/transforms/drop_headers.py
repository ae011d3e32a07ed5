"""DropHeaders: remove every header with one of the configured names (Kafka's ``DropHeaders``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.records import Headers
from sparkcat.transforms._base import NonEmptyListValidator, SimpleTransformation

HEADERS_CONFIG = "headers"
OVERVIEW_DOC = "Removes one or more headers from each record."

CONFIG_DEF = ConfigDef().define(
    HEADERS_CONFIG,
    ConfigType.LIST,
    validator=NonEmptyListValidator(),
    importance=Importance.HIGH,
    documentation="The name of the headers to be removed.",
)


class DropHeaders(SimpleTransformation):
    """Drops the headers named in ``headers``; everything else in the record is kept."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._names = frozenset(self._parse(configs)[HEADERS_CONFIG])

    def apply(self, record: Any) -> Any:
        names = self._names
        kept = Headers(h for h in record.headers if h.key not in names)
        return record.new_record(
            record.topic,
            record.kafka_partition,
            record.key_schema,
            record.key,
            record.value_schema,
            record.value,
            record.timestamp,
            kept,
        )


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "DropHeaders"]
