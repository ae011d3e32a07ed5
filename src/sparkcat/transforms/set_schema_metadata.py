"""SetSchemaMetadata: set the name and/or version of the key/value schema
(Kafka's ``SetSchemaMetadata``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import Schema, SchemaBuilder, Struct, Type
from sparkcat.api.errors import ConfigError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaUpdateCache,
    define_replace_null_with_default,
    field_getter,
    require_schema,
)

SCHEMA_NAME_CONFIG = "schema.name"
SCHEMA_VERSION_CONFIG = "schema.version"
OVERVIEW_DOC = (
    "Set the schema name, version or both on the record's key "
    "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Value</code>) schema."
)
CONFIG_DEF = (
    ConfigDef()
    .define(
        SCHEMA_NAME_CONFIG,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Schema name to set.",
    )
    .define(
        SCHEMA_VERSION_CONFIG,
        ConfigType.INT,
        None,
        importance=Importance.HIGH,
        documentation="Schema version to set.",
    )
)
define_replace_null_with_default(CONFIG_DEF)


class SetSchemaMetadata(KeyValueTransformation):
    """Replaces the schema's name and/or version; a Struct key/value is copied onto the renamed
    schema. A ``None`` value without a schema passes unchanged; other schemaless data is an
    error (``Schema required for [updating schema metadata]``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._name: str | None = parsed[SCHEMA_NAME_CONFIG]
        self._version: int | None = parsed[SCHEMA_VERSION_CONFIG]
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        if self._name is None and self._version is None:
            raise ConfigError("Neither schema name nor version configured")
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        updated_schema = self._cache.get_or_build(
            require_schema(schema, "updating schema metadata"), self._renamed
        )
        return self.new_record(
            record, updated_schema, self._update_schema_in(value, updated_schema)
        )

    def _renamed(self, schema: Schema) -> Schema:
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            builder = SchemaBuilder.array(schema.value_schema)
        elif schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            builder = SchemaBuilder.map(schema.key_schema, schema.value_schema)
        else:
            builder = SchemaBuilder.type(schema.type)
            if schema.type is Type.STRUCT:
                for field in schema.fields:
                    builder.field(field.name, field.schema)
        name = self._name if self._name is not None else schema.name
        version = self._version if self._version is not None else schema.version
        if name is not None:
            builder.name(name)
        if version is not None:
            builder.version(version)
        if schema.doc is not None:
            builder.doc(schema.doc)
        if schema.parameters:
            builder.parameters(dict(schema.parameters))
        if schema.optional:
            builder.optional()
        default = schema.default_value
        if default is None:
            return builder.build()
        if isinstance(default, Struct):
            # The default must reference the renamed schema too, so build it in two steps.
            bare = builder.build()
            builder.default_value(self._update_schema_in(default, bare))
            return builder.build()
        return builder.default_value(default).build()

    def _update_schema_in(self, value: Any, schema: Schema) -> Any:
        if not isinstance(value, Struct):
            return value
        updated = Struct(schema)
        for field, original in zip(schema.fields, value.schema.fields, strict=False):
            updated.put(field, self._get(value, original))
        return updated

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "SetSchemaMetadata"]
