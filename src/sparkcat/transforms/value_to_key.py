"""ValueToKey: build the record key from fields of the value (Kafka's ``ValueToKey``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import Field, Schema, SchemaBuilder, Struct
from sparkcat.api.errors import DataError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    NonEmptyListValidator,
    SchemaUpdateCache,
    SimpleTransformation,
    define_replace_null_with_default,
    field_getter,
    require_map,
    require_struct,
)

FIELDS_CONFIG = "fields"
OVERVIEW_DOC = (
    "Replace the record key with a new key formed from a subset of fields in the record value."
)
CONFIG_DEF = ConfigDef().define(
    FIELDS_CONFIG,
    ConfigType.LIST,
    validator=NonEmptyListValidator(),
    importance=Importance.HIGH,
    documentation="Field names on the record value to extract as the record key.",
)
define_replace_null_with_default(CONFIG_DEF)
_PURPOSE = "copying fields from value to key"


class ValueToKey(SimpleTransformation):
    """The new key is a Struct (value schema) or dict (schemaless) of the listed value fields,
    in the listed order; the value is kept."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._fields: list[str] = parsed[FIELDS_CONFIG]
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache: SchemaUpdateCache[Schema, tuple[Schema, tuple[tuple[Field, Field], ...]]] = (
            SchemaUpdateCache()
        )

    def apply(self, record: Any) -> Any:
        if record.value_schema is None:
            value = require_map(record.value, _PURPOSE)
            key = {name: value.get(name) for name in self._fields}
            return self._with_key(record, None, key)
        struct = require_struct(record.value, _PURPOSE)
        key_schema, pairs = self._cache.get_or_build(struct.schema, self._key_plan)
        key_struct = Struct(key_schema)
        for key_field, value_field in pairs:
            key_struct.put(key_field, self._get(struct, value_field))
        return self._with_key(record, key_schema, key_struct)

    def _key_plan(self, schema: Schema) -> tuple[Schema, tuple[tuple[Field, Field], ...]]:
        builder = SchemaBuilder.struct()
        sources = []
        for name in self._fields:
            field = schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            builder.field(name, field.schema)
            sources.append(field)
        key_schema = builder.build()
        return key_schema, tuple(zip(key_schema.fields, sources, strict=True))

    @staticmethod
    def _with_key(record: Any, key_schema: Schema | None, key: Any) -> Any:
        return record.new_record(
            record.topic,
            record.kafka_partition,
            key_schema,
            key,
            record.value_schema,
            record.value,
            record.timestamp,
        )

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "ValueToKey"]
