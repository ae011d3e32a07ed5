"""ExtractNewRecordState: the "unwrap" SMT (``io.debezium.transforms.ExtractNewRecordState``).

A Debezium change event's value is an envelope (``before``, ``after``, ``source``, ``op``,
``ts_ms``, ``transaction``); this SMT replaces it with the flat ``after`` row so that sinks see
plain rows. The key is left as it is. What happens to deletes and tombstones is
``delete.tombstone.handling.mode``:

=========================  ==============================================  ==================
mode                       delete event becomes                            tombstone
=========================  ==============================================  ==================
``drop``                   dropped                                         dropped
``tombstone`` (default)    null value, with the row's value schema         dropped
``rewrite``                ``before`` + ``__deleted="true"``               dropped
``rewrite-with-tombstone`` ``before`` + ``__deleted="true"``               kept
``delete-to-tombstone``    null value and null value schema                dropped
=========================  ==============================================  ==================

In both rewrite modes creates, updates and snapshot reads get ``__deleted="false"``. Without
``delete.tombstone.handling.mode`` the deprecated ``drop.tombstones`` and
``delete.handling.mode`` (drop|none|rewrite) are honoured when either is given. Truncate events
(no ``before``, no ``after``) are dropped.

As in Debezium, a record is an envelope when its value schema's name ends in ``.Envelope``:
schemaless values (dicts) and other records (heartbeats, schema changes) pass unchanged; a
tombstone is handled as above whether it has a schema or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sparkcat.api.config import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.errors import DataError
from sparkcat.api.records import Header
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    SchemaUpdateCache,
    SimpleTransformation,
    copy_schema_basics,
    define_replace_null_with_default,
    require_struct,
)
from sparkcat.transforms._envelope_fields import FieldReference
from sparkcat.transforms.extract_field import ExtractField
from sparkcat.transforms.insert_field import InsertField
from sparkcat.transforms.replace_field import ReplaceField

DELETE_TOMBSTONE_HANDLING_MODE_CONFIG = "delete.tombstone.handling.mode"
DROP_TOMBSTONES_CONFIG = "drop.tombstones"
DELETE_HANDLING_MODE_CONFIG = "delete.handling.mode"
ROUTE_BY_FIELD_CONFIG = "route.by.field"
ADD_FIELDS_CONFIG = "add.fields"
ADD_FIELDS_PREFIX_CONFIG = "add.fields.prefix"
ADD_HEADERS_CONFIG = "add.headers"
ADD_HEADERS_PREFIX_CONFIG = "add.headers.prefix"
DROP_FIELDS_HEADER_NAME_CONFIG = "drop.fields.header.name"
DROP_FIELDS_FROM_KEY_CONFIG = "drop.fields.from.key"
DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE_CONFIG = "drop.fields.keep.schema.compatible"

DELETED_FIELD = "__deleted"
ENVELOPE_SCHEMA_NAME_SUFFIX = ".Envelope"
_PURPOSE = "source field insertion"


class DeleteHandling(NamedTuple):
    """What a mode does: to a delete event (``drop``, ``null`` value with the row schema,
    ``rewrite`` to ``before``, or a ``tombstone``), whether tombstones are kept, and whether
    rows get ``__deleted``."""

    delete: str
    keep_tombstones: bool

    @property
    def rewrite(self) -> bool:
        return self.delete == "rewrite"


MODES: dict[str, DeleteHandling] = {
    "drop": DeleteHandling("drop", False),
    "tombstone": DeleteHandling("null", False),
    "rewrite": DeleteHandling("rewrite", False),
    "rewrite-with-tombstone": DeleteHandling("rewrite", True),
    "delete-to-tombstone": DeleteHandling("tombstone", False),
}
_LEGACY_DELETES = {"drop": "drop", "none": "null", "rewrite": "rewrite"}

CONFIG_DEF = (
    ConfigDef()
    .define(
        DELETE_TOMBSTONE_HANDLING_MODE_CONFIG,
        ConfigType.STRING,
        None,
        CaseInsensitiveValidString.in_(*MODES),
        Importance.MEDIUM,
        "How to handle delete and tombstone records: drop (remove the delete event and its "
        "tombstone), tombstone (the default: the delete becomes a record with a null value, "
        "tombstones are removed), rewrite (the delete becomes its before row with __deleted="
        "true, tombstones are removed), rewrite-with-tombstone (rewrite, tombstones kept), "
        "delete-to-tombstone (the delete becomes a tombstone, the original one is removed).",
    )
    .define(
        DROP_TOMBSTONES_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Deprecated: use delete.tombstone.handling.mode. Whether tombstones "
        "are removed.",
    )
    .define(
        DELETE_HANDLING_MODE_CONFIG,
        ConfigType.STRING,
        "drop",
        CaseInsensitiveValidString.in_(*_LEGACY_DELETES),
        Importance.MEDIUM,
        "Deprecated: use delete.tombstone.handling.mode. none passes deletes with a null "
        "value, drop removes them, rewrite adds a __deleted field.",
    )
    .define(
        ROUTE_BY_FIELD_CONFIG,
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="The column whose value replaces the topic name.",
    )
    .define(
        ADD_FIELDS_PREFIX_CONFIG,
        ConfigType.STRING,
        "__",
        importance=Importance.LOW,
        documentation="Adds this prefix to each field listed.",
    )
    .define(
        ADD_FIELDS_CONFIG,
        ConfigType.LIST,
        "",
        importance=Importance.LOW,
        documentation="Adds each field listed, prefixed with __ (or __<struct>_ if the struct "
        "is specified), e.g. 'version,connector,source.ts_ms' adds __version, __connector and "
        "__source_ts_ms; 'source.ts_ms:EVENT_TIMESTAMP' adds __EVENT_TIMESTAMP.",
    )
    .define(
        ADD_HEADERS_PREFIX_CONFIG,
        ConfigType.STRING,
        "__",
        importance=Importance.LOW,
        documentation="Adds this prefix to each header.",
    )
    .define(
        ADD_HEADERS_CONFIG,
        ConfigType.LIST,
        "",
        importance=Importance.LOW,
        documentation="Adds each field listed as a header, named as add.fields names fields.",
    )
    .define(
        DROP_FIELDS_HEADER_NAME_CONFIG,
        ConfigType.STRING,
        None,
        importance=Importance.LOW,
        documentation="The name of a header holding a list of fields to remove from the value.",
    )
    .define(
        DROP_FIELDS_FROM_KEY_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Whether the fields named by drop.fields.header.name are removed from "
        "the key too.",
    )
    .define(
        DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="true: only optional fields are dropped, so schemas stay compatible; "
        "false: every named field is dropped.",
    )
)
define_replace_null_with_default(CONFIG_DEF)


def is_envelope(schema: Schema | None) -> bool:
    """Whether a value schema is a Debezium change-event envelope (Debezium's own test)."""
    return schema is not None and (schema.name or "").endswith(ENVELOPE_SCHEMA_NAME_SUFFIX)


def resolve_handling(configs: Mapping[str, Any], parsed: Mapping[str, Any]) -> DeleteHandling:
    """The mode from ``delete.tombstone.handling.mode``; otherwise from the legacy keys when
    either is set; otherwise ``tombstone``.

    Debezium 2.5 to 3.1 fell back to the legacy keys' defaults (drop both) when nothing was set;
    3.2 removed the legacy keys and made ``tombstone`` the default, as its docs had said all along.
    """
    mode = parsed[DELETE_TOMBSTONE_HANDLING_MODE_CONFIG]
    if mode is not None and mode.strip():
        return MODES[mode.strip().lower()]
    if DROP_TOMBSTONES_CONFIG in configs or DELETE_HANDLING_MODE_CONFIG in configs:
        delete = _LEGACY_DELETES[parsed[DELETE_HANDLING_MODE_CONFIG].lower()]
        return DeleteHandling(delete, not parsed[DROP_TOMBSTONES_CONFIG])
    return MODES["tombstone"]


def _configured(transform: Any, configs: Mapping[str, Any]) -> Any:
    transform.configure(configs)
    return transform


class ExtractNewRecordState(SimpleTransformation):
    """Flattens Debezium change events to their ``after`` row (see the module docstring)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self.handling = resolve_handling(configs, parsed)
        self._fields = FieldReference.parse_all(
            parsed[ADD_FIELDS_PREFIX_CONFIG], parsed[ADD_FIELDS_CONFIG]
        )
        self._headers = FieldReference.parse_all(
            parsed[ADD_HEADERS_PREFIX_CONFIG], parsed[ADD_HEADERS_CONFIG]
        )
        self._route_by = parsed[ROUTE_BY_FIELD_CONFIG] or None
        self._drop_header = parsed[DROP_FIELDS_HEADER_NAME_CONFIG] or None
        self._drop_from_key = parsed[DROP_FIELDS_FROM_KEY_CONFIG]
        self._drop_compatible = parsed[DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE_CONFIG]
        replace_null = "true" if parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG] else "false"
        self._after = _configured(ExtractField.Value(), {"field": "after"})
        self._before = _configured(ExtractField.Value(), {"field": "before"})
        self._mark = {
            flag: _configured(
                InsertField.Value(),
                {
                    "static.field": DELETED_FIELD,
                    "static.value": flag,
                    REPLACE_NULL_WITH_DEFAULT_CONFIG: replace_null,
                },
            )
            for flag in ("true", "false")
        }
        self._schemas: SchemaUpdateCache[tuple[Schema, Schema], tuple[Schema, tuple[Any, ...]]]
        self._schemas = SchemaUpdateCache(64)

    def apply(self, record: Any) -> Any:
        value = record.value
        tombstone = value is None
        envelope = is_envelope(record.value_schema)
        if self._headers and (envelope or tombstone):
            record = record.new_record(
                record.topic, record.kafka_partition, record.key_schema, record.key,
                record.value_schema, value, record.timestamp,
                record.headers.with_headers(self._header_values(value)),
            )  # fmt: skip
        if tombstone:
            return record if self.handling.keep_tombstones else None
        if not envelope:
            return record
        unwrapped = self._after.apply(record)
        if unwrapped.value is None:
            if self._before.apply(record).value is None:
                return None  # a truncate
            return self._delete(record)
        if self.handling.rewrite and isinstance(unwrapped.value, Struct):
            unwrapped = self._mark["false"].apply(unwrapped)
        if self._route_by is not None:
            row = require_struct(
                unwrapped.value, "Read record to set topic routing for CREATE / UPDATE"
            )
            unwrapped = _set_topic(unwrapped, row.get_string(self._route_by))
        unwrapped = self._add_fields(record, unwrapped)
        return self._drop_fields(unwrapped)

    def _delete(self, record: Any) -> Any:
        delete = self.handling.delete
        if delete == "drop":
            return None
        if delete == "tombstone":
            return record.new_record(
                record.topic, record.kafka_partition, record.key_schema, record.key,
                None, None, record.timestamp,
            )  # fmt: skip
        if delete == "null":
            # Debezium keeps the row's value schema here (not a true tombstone); the JDBC
            # sinks read a null value as a delete either way.
            out = self._after.apply(record)
        else:
            out = self._before.apply(record)
            if isinstance(out.value, Struct):
                out = self._mark["true"].apply(out)
        if self._route_by is not None:
            envelope = require_struct(record.value, "Read record to set topic routing for DELETE")
            before = envelope.get_struct("before")
            if before is None:
                raise DataError(f"Cannot route a delete without a before row by {self._route_by}")
            out = _set_topic(out, before.get_string(self._route_by))
        out = self._drop_fields(out)
        if out.value is not None:
            out = self._add_fields(record, out)
        return out

    def _header_values(self, envelope: Any) -> list[Header]:
        headers = []
        for ref in self._headers:
            if envelope is None:
                # A tombstone carries no envelope; only the operation is known.
                if ref.field == "op":
                    headers.append(Header(ref.new_field, _OPTIONAL_STRING, "d"))
                continue
            struct = require_struct(envelope, _PURPOSE)
            schema = ref.schema(struct.schema)
            if schema is not None:
                headers.append(Header(ref.new_field, schema, ref.value(struct)))
        return headers

    def _add_fields(self, original: Any, unwrapped: Any) -> Any:
        row = require_struct(unwrapped.value, _PURPOSE)
        if not self._fields:
            return unwrapped
        envelope: Struct = original.value
        schema, present = self._schemas.get_or_build(
            (row.schema, envelope.schema), self._extended_schema
        )
        out = Struct(schema)
        for field in row.schema.fields:
            out.put(field.name, row.get_without_default(field))
        for ref in present:
            out.put(ref.new_field, ref.value(envelope))
        return unwrapped.new_record(
            unwrapped.topic, unwrapped.kafka_partition, unwrapped.key_schema, unwrapped.key,
            schema, out, unwrapped.timestamp,
        )  # fmt: skip

    def _extended_schema(
        self, schemas: tuple[Schema, Schema]
    ) -> tuple[Schema, tuple[FieldReference, ...]]:
        row_schema, envelope_schema = schemas
        builder = copy_schema_basics(row_schema, SchemaBuilder.struct())
        for field in row_schema.fields:
            builder.field(field.name, field.schema)
        present = []
        for ref in self._fields:
            added = ref.schema(envelope_schema)
            if added is not None:
                builder.field(ref.new_field, added)
                present.append(ref)
        return builder.build(), tuple(present)

    def _drop_fields(self, record: Any) -> Any:
        if self._drop_header is None:
            return record
        header = record.headers.last_with_name(self._drop_header)
        if header is None or not header.value:
            return record
        names = list(header.value)
        if self._drop_from_key and record.key is not None:
            record = self._exclude(ReplaceField.Key(), record, record.key_schema, names)
        return self._exclude(ReplaceField.Value(), record, record.value_schema, names)

    def _exclude(self, transform: Any, record: Any, schema: Schema | None, names: list[str]) -> Any:
        if self._drop_compatible and schema is not None:
            names = [f.name for f in schema.fields if f.schema.optional and f.name in names]
        if not names:
            return record
        return _configured(transform, {"exclude": names}).apply(record)

    def close(self) -> None:
        if hasattr(self, "_schemas"):
            self._schemas.clear()


_OPTIONAL_STRING = SchemaBuilder.string().optional().build()


def _set_topic(record: Any, topic: str | None) -> Any:
    if topic is None or not topic.strip():
        return record
    return record.new_record(
        topic, record.kafka_partition, record.key_schema, record.key,
        record.value_schema, record.value, record.timestamp,
    )  # fmt: skip


__all__ = ["CONFIG_DEF", "MODES", "DeleteHandling", "ExtractNewRecordState", "is_envelope"]
