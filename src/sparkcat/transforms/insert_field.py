"""InsertField: add fields from record metadata or a static value (Kafka's ``InsertField``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from sparkcat.api.errors import ConfigError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaUpdateCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_getter,
    require_map,
    require_sink_record,
    require_struct,
)
from sparkcat.transforms._field_copy import FieldCopy

TOPIC_FIELD_CONFIG = "topic.field"
PARTITION_FIELD_CONFIG = "partition.field"
OFFSET_FIELD_CONFIG = "offset.field"
TIMESTAMP_FIELD_CONFIG = "timestamp.field"
STATIC_FIELD_CONFIG = "static.field"
STATIC_VALUE_CONFIG = "static.value"

OVERVIEW_DOC = (
    "Insert field(s) using attributes from the record metadata or a configured static value."
    "<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.InsertField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.InsertField$Value</code>)."
)
_OPTIONALITY_DOC = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
    "optional (the default)."
)
_PURPOSE = "field insertion"


CONFIG_DEF = ConfigDef()
for _name, _doc in (
    (TOPIC_FIELD_CONFIG, "Field name for Kafka topic. " + _OPTIONALITY_DOC),
    (PARTITION_FIELD_CONFIG, "Field name for Kafka partition. " + _OPTIONALITY_DOC),
    (
        OFFSET_FIELD_CONFIG,
        "Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC,
    ),
    (TIMESTAMP_FIELD_CONFIG, "Field name for record timestamp. " + _OPTIONALITY_DOC),
    (STATIC_FIELD_CONFIG, "Field name for static data field. " + _OPTIONALITY_DOC),
    (STATIC_VALUE_CONFIG, "Static field value, if field name configured."),
):
    CONFIG_DEF.define(
        _name, ConfigType.STRING, None, importance=Importance.MEDIUM, documentation=_doc
    )
define_replace_null_with_default(CONFIG_DEF)

_OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


class InsertionSpec(NamedTuple):
    """A field to insert: ``name`` and whether it is optional (``?``, default) or not (``!``)."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)

    def __str__(self) -> str:
        return self.name


class _Plan(NamedTuple):
    schema: Schema
    copied: tuple[tuple[Field, Field], ...]  # (output field, input field)
    copy: FieldCopy
    # The inserted fields' initial values: the static value in place (validated once, in
    # _plan), None for the per-record ones.
    tail: tuple[Any, ...]


class InsertField(KeyValueTransformation):
    """Adds topic, partition, offset (sink records), timestamp or a static string as fields of
    a Struct (schema) or Map (schemaless). Records whose key/value is ``None`` pass unchanged."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._topic = InsertionSpec.parse(parsed[TOPIC_FIELD_CONFIG])
        self._partition = InsertionSpec.parse(parsed[PARTITION_FIELD_CONFIG])
        self._offset = InsertionSpec.parse(parsed[OFFSET_FIELD_CONFIG])
        self._timestamp = InsertionSpec.parse(parsed[TIMESTAMP_FIELD_CONFIG])
        self._static = InsertionSpec.parse(parsed[STATIC_FIELD_CONFIG])
        self._static_value: str | None = parsed[STATIC_VALUE_CONFIG]
        self._get = field_getter(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        specs = (self._topic, self._partition, self._offset, self._timestamp, self._static)
        if all(spec is None for spec in specs):
            raise ConfigError("No field insertion configured")
        if self._static is not None and self._static_value is None:
            raise ConfigError(
                STATIC_VALUE_CONFIG, "null", f"No value specified for static field: {self._static}"
            )
        # Only a static field: its value is set once per schema, not per record.
        self._dynamic = any(
            spec is not None
            for spec in (self._topic, self._partition, self._offset, self._timestamp)
        )
        self._replace_null = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._cache: SchemaUpdateCache[Schema, _Plan] = SchemaUpdateCache()

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record, value)
        struct = value if value.__class__ is Struct else require_struct(value, _PURPOSE)
        schema = struct.schema
        cache = self._cache
        plan = (
            cache.last_value if schema is cache.last_key else cache.get_or_build(schema, self._plan)
        )
        copied = plan.copy.read(struct)
        if copied is None or self._dynamic:
            return self._apply_with_puts(record, struct, plan, copied)
        copied.extend(plan.tail)
        return self.new_record(record, plan.schema, Struct.from_valid_values(plan.schema, copied))

    def _inserted(self, record: Any, timestamp_value: Any) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self._topic is not None:
            out.append((self._topic.name, record.topic))
        if self._partition is not None and record.kafka_partition is not None:
            out.append((self._partition.name, record.kafka_partition))
        if self._offset is not None:
            out.append((self._offset.name, require_sink_record(record, _PURPOSE).kafka_offset))
        if self._timestamp is not None and record.timestamp is not None:
            out.append((self._timestamp.name, timestamp_value))
        if self._static is not None and self._static_value is not None:
            out.append((self._static.name, self._static_value))
        return out

    def _apply_schemaless(self, record: Any, value: Any) -> Any:
        updated = dict(require_map(value, _PURPOSE))
        updated.update(self._inserted(record, record.timestamp))
        return self.new_record(record, None, updated)

    def _apply_with_puts(
        self, record: Any, struct: Struct, plan: _Plan, copied: list[Any] | None
    ) -> Any:
        """The schema'd path with per-record inserted values (validated by ``put``), or with a
        null in a required field (``copied`` None), for which ``put`` raises Kafka's error."""
        if copied is None:
            updated = Struct(plan.schema)
            get = self._get
            for out_field, in_field in plan.copied:
                updated.put(out_field, get(struct, in_field))
        else:
            copied.extend(plan.tail)
            updated = Struct.from_valid_values(plan.schema, copied)
        if self._dynamic:
            timestamp = record.timestamp
            ts_value = None
            if self._timestamp is not None and timestamp is not None:
                ts_value = Timestamp.to_logical(Timestamp.SCHEMA, timestamp)
            for name, inserted in self._inserted(record, ts_value):
                updated.put(name, inserted)
        elif self._static is not None:
            updated.put(self._static.name, self._static_value)
        return self.new_record(record, plan.schema, updated)

    def _plan(self, schema: Schema) -> _Plan:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        extra = (
            (self._topic, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
            (self._partition, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
            (self._offset, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
            (self._timestamp, _OPTIONAL_TIMESTAMP_SCHEMA, Timestamp.SCHEMA),
            (self._static, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
        )
        for spec, optional_schema, required_schema in extra:
            if spec is not None:
                builder.field(spec.name, optional_schema if spec.optional else required_schema)
        updated = builder.build()
        tail: list[Any] = [None] * (len(updated.fields) - len(schema.fields))
        if self._static is not None and not self._dynamic:
            field = updated.fields[-1]
            Schema.validate_value(field.schema, self._static_value, field.name)
            tail[-1] = self._static_value
        return _Plan(
            updated,
            tuple(zip(updated.fields, schema.fields, strict=False)),
            FieldCopy(schema.fields, updated, self._replace_null),
            tuple(tail),
        )

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "InsertField"]
