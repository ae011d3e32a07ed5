"""HoistField: wrap the key/value in a Struct or Map under one field (Kafka's ``HoistField``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.transforms._base import KeyValueTransformation, SchemaUpdateCache

FIELD_CONFIG = "field"
OVERVIEW_DOC = (
    "Wrap data using the specified field name in a Struct when schema present, or a Map in the "
    "case of schemaless data.<p/>Use the concrete transformation type designed for the record "
    "key (<code>org.apache.kafka.connect.transforms.HoistField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.HoistField$Value</code>)."
)
CONFIG_DEF = ConfigDef().define(
    FIELD_CONFIG,
    ConfigType.STRING,
    importance=Importance.MEDIUM,
    documentation="Field name for the single field that will be created in the resulting "
    "Struct or Map.",
)


class HoistField(KeyValueTransformation):
    """Replaces the key/value ``v`` with ``{field: v}`` (a Struct whose only field has the
    original schema, or a dict when schemaless). ``None`` values are wrapped too."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._field_name: str = self._parse(configs)[FIELD_CONFIG]
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field_name: value})
        updated_schema = self._cache.get_or_build(
            schema, lambda s: SchemaBuilder.struct().field(self._field_name, s).build()
        )
        return self.new_record(
            record, updated_schema, Struct(updated_schema).put(self._field_name, value)
        )

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "HoistField"]
