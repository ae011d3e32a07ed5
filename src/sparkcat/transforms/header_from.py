"""HeaderFrom: copy or move fields of the key/value into headers (Kafka's ``HeaderFrom``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance, ValidString
from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import Header
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    NonEmptyListValidator,
    SchemaUpdateCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_getter,
    require_map,
    require_struct,
)

FIELDS_CONFIG = "fields"
HEADERS_CONFIG = "headers"
OPERATION_CONFIG = "operation"
MOVE_OPERATION = "move"
COPY_OPERATION = "copy"
OVERVIEW_DOC = (
    "Moves or copies fields in the key/value of a record into that record's headers. "
    "Corresponding elements of <code>fields</code> and <code>headers</code> together identify a "
    "field and the header it should be moved or copied to. Use the concrete transformation type "
    "designed for the record key (<code>org.apache.kafka.connect.transforms.HeaderFrom$Key"
    "</code>) or value (<code>org.apache.kafka.connect.transforms.HeaderFrom$Value</code>)."
)
CONFIG_DEF = (
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        ConfigType.LIST,
        validator=NonEmptyListValidator(),
        importance=Importance.HIGH,
        documentation="Field names in the record whose values are to be copied or moved to "
        "headers.",
    )
    .define(
        HEADERS_CONFIG,
        ConfigType.LIST,
        validator=NonEmptyListValidator(),
        importance=Importance.HIGH,
        documentation="Header names, in the same order as the field names listed in the fields "
        "configuration property.",
    )
    .define(
        OPERATION_CONFIG,
        ConfigType.STRING,
        validator=ValidString.in_(MOVE_OPERATION, COPY_OPERATION),
        importance=Importance.HIGH,
        documentation="Either <code>move</code> if the fields are to be moved to the headers "
        "(removed from the key/value), or <code>copy</code> if the fields are to be copied to the "
        "headers (retained in the key/value).",
    )
)
define_replace_null_with_default(CONFIG_DEF)


class HeaderFrom(KeyValueTransformation):
    """Adds header ``headers[i]`` with the value (and, with a schema, the field schema) of field
    ``fields[i]``; ``move`` also removes the fields from the key/value."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._fields: list[str] = parsed[FIELDS_CONFIG]
        self._headers: list[str] = parsed[HEADERS_CONFIG]
        if len(self._fields) != len(self._headers):
            raise ConfigError(
                f"'{FIELDS_CONFIG}' config must have the same number of elements as "
                f"'{HEADERS_CONFIG}' config."
            )
        self._move = parsed[OPERATION_CONFIG] == MOVE_OPERATION
        self._purpose = f"header {parsed[OPERATION_CONFIG]}"
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache: SchemaUpdateCache[Schema, Schema] = SchemaUpdateCache()

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        pairs = zip(self._fields, self._headers, strict=True)
        if schema is None:
            original = require_map(value, self._purpose)
            updated = dict(original)
            added = []
            for field_name, header in pairs:
                added.append(Header(header, None, original.get(field_name)))
                if self._move:
                    updated.pop(field_name, None)
            return self.new_record(record, None, updated, record.headers.with_headers(added))
        struct = require_struct(value, self._purpose)
        out_schema, out_value = schema, struct
        if self._move:
            out_schema = self._cache.get_or_build(schema, self._moved_schema)
            out_value = Struct(out_schema)
            for field in out_schema.fields:
                source = struct.schema.field(field.name)
                assert source is not None  # the moved schema is a subset of this one
                out_value.put(field, self._get(struct, source))
        added = []
        for field_name, header in pairs:
            source = struct.schema.field(field_name)
            field_value = self._get(struct, source) if source is not None else None
            declared = schema.field(field_name)
            if declared is None:
                # Kafka fails here with a NullPointerException; say which field is missing.
                raise DataError(f"Unknown field: {field_name}")
            added.append(Header(header, declared.schema, field_value))
        return self.new_record(record, out_schema, out_value, record.headers.with_headers(added))

    def _moved_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name not in self._fields:
                builder.field(field.name, field.schema)
        return builder.build()

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "HeaderFrom"]
