"""Flatten: flatten nested Structs/Maps into top-level fields (Kafka's ``Flatten``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import Schema, SchemaBuilder, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.transforms._base import (
    KeyValueTransformation,
    SchemaUpdateCache,
    copy_schema_basics,
    require_map,
    require_struct_or_null,
    type_name,
)

DELIMITER_CONFIG = "delimiter"
DELIMITER_DEFAULT = "."
OVERVIEW_DOC = (
    "Flatten a nested data structure, generating names for each field by concatenating the "
    "field names at each level with a configurable delimiter character. Applies to Struct when "
    "schema present, or a Map in the case of schemaless data. Array fields and their contents "
    "are not modified. The default delimiter is '.'.<p/>Use the concrete transformation type "
    "designed for the record key (<code>org.apache.kafka.connect.transforms.Flatten$Key</code>) "
    "or value (<code>org.apache.kafka.connect.transforms.Flatten$Value</code>)."
)
CONFIG_DEF = ConfigDef().define(
    DELIMITER_CONFIG,
    ConfigType.STRING,
    DELIMITER_DEFAULT,
    importance=Importance.MEDIUM,
    documentation="Delimiter to insert between field names from the input record when "
    "generating field names for the output record",
)
_PURPOSE = "flattening"
_LEAF_TYPES = frozenset(
    {
        Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64,
        Type.BOOLEAN, Type.STRING, Type.BYTES, Type.ARRAY,
    }
)  # fmt: skip
_SCHEMALESS_LEAVES = (bool, int, float, str, bytes, bytearray, list)


class Flatten(KeyValueTransformation):
    """Flattens nested Structs (schema) or dicts (schemaless) into ``parent<delimiter>child``
    fields. Arrays are left alone; a MAP inside a Struct is an error, as in Kafka. A flattened
    field is optional (and takes a default) when any ancestor is optional (has a default)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._delimiter: str = self._parse(configs)[DELIMITER_CONFIG]
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else f"{prefix}{self._delimiter}{name}"

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            out: dict[str, Any] = {}
            self._flatten_map(require_map(value, _PURPOSE), "", out)
            return self.new_record(record, None, out)
        struct = require_struct_or_null(value, _PURPOSE)
        updated_schema = self._cache.get_or_build(schema, self._updated_schema)
        if struct is None:
            return self.new_record(record, updated_schema, None)
        flat = Struct(updated_schema)
        self._flatten_struct(struct, "", flat)
        return self.new_record(record, updated_schema, flat)

    def _flatten_map(self, original: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, value in original.items():
            name = self._name(prefix, key)
            if value is None or isinstance(value, _SCHEMALESS_LEAVES):
                out[name] = value
            elif isinstance(value, dict):
                self._flatten_map(value, name, out)
            elif isinstance(value, Struct):
                raise DataError(
                    f"Flatten transformation does not support {type_name(value)} for record "
                    f"without schemas (for field {name})."
                )
            else:
                raise DataError(
                    f"Flatten transformation was passed a value of type {type_name(value)} "
                    "which is not supported by Connect's data API"
                )

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._build_schema(schema, "", builder, schema.optional, schema.default_value)
        return builder.build()

    def _build_schema(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            field_type = field.schema.type
            if field_type in _LEAF_TYPES:
                builder.field(name, _leaf_schema(field.schema, field_optional, default))
            elif field_type is Type.STRUCT:
                self._build_schema(field.schema, name, builder, field_optional, default)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field_type.name} for record "
                    f"with schemas (for field {name})."
                )

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            field_type = field.schema.type
            if field_type in _LEAF_TYPES:
                out.put(name, struct.get(field))
            elif field_type is Type.STRUCT:
                self._flatten_struct(struct.get_struct(field.name), name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field_type.name} for record "
                    f"with schemas (for field {name})."
                )

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


def _leaf_schema(original: Schema, optional: bool, default: Any) -> Schema:
    if original.type is Type.ARRAY:
        assert original.value_schema is not None
        builder = SchemaBuilder.array(original.value_schema)
    else:
        builder = SchemaBuilder.type(original.type)
    copy_schema_basics(original, builder)
    if optional:
        builder.optional()
    if default is not None:
        builder.default_value(default)
    return builder.build()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "Flatten"]
