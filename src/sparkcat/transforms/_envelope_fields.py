"""References to fields of a Debezium change-event envelope, as ``add.fields`` and ``add.headers``
of ``io.debezium.transforms.ExtractNewRecordState`` name them.

A reference is ``[struct.]field[:newName]``. Without a struct, ``op``, ``ts_ms``, ``ts_us`` and
``ts_ns`` are the envelope's own fields, ``id``, ``total_order`` and ``data_collection_order``
belong to ``transaction`` and every other name to ``source``. The output name is the prefix plus
``newName``, or plus ``field`` (no struct given) or ``struct_field``. A field that is not in its
struct is looked up in the envelope itself, where another SMT may have put it.
"""

from __future__ import annotations

from typing import Any

from sparkcat.api.data import Schema, SchemaBuilder, Struct, Type
from sparkcat.transforms._base import copy_schema_basics

_TOP_LEVEL = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})
_TRANSACTION = frozenset({"id", "total_order", "data_collection_order"})


def _java_split(text: str, separator: str) -> list[str]:
    # Java's String.split drops trailing empty strings; the reference syntax relies on it.
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _default_struct(field: str) -> str | None:
    if field in _TOP_LEVEL:
        return None
    if field in _TRANSACTION:
        return "transaction"
    if field == "updateDescription":  # MongoDB's envelope
        return field
    return "source"


class FieldReference:
    """One entry of ``add.fields``/``add.headers``: where to read it and the name to write."""

    __slots__ = ("field", "new_field", "struct")

    def __init__(self, prefix: str, spec: str) -> None:
        parts = _java_split(spec, ":")
        path = _java_split(parts[0], ".")
        self.field = path[1] if len(path) > 1 else path[0]
        self.struct = path[0] if len(path) > 1 else _default_struct(self.field)
        if len(parts) == 1:
            suffix = self.field if len(path) == 1 else f"{self.struct}_{self.field}"
        elif len(parts) == 2:
            suffix = parts[1]
        else:
            raise ValueError(f"Unexpected field name: {spec}")
        self.new_field = prefix + suffix

    @classmethod
    def parse_all(cls, prefix: str, specs: list[str]) -> tuple[FieldReference, ...]:
        return tuple(cls(prefix, spec.strip()) for spec in specs)

    def schema(self, envelope_schema: Schema) -> Schema | None:
        """The optional schema of the added field or header, or ``None`` when the envelope has
        no such field (then nothing is added)."""
        parent: Schema | None = envelope_schema
        if self.struct is not None:
            struct_field = envelope_schema.field(self.struct)
            parent = struct_field.schema if struct_field is not None else None
        found = parent.field(self.field) if parent is not None else None
        if found is None:
            found = envelope_schema.field(self.field)
        if found is None:
            return None
        return _optional_copy(found.schema)

    def value(self, envelope: Struct) -> Any:
        """The referenced value as stored (defaults are not applied)."""
        parent: Struct | None = envelope
        if self.struct is not None:
            parent = (
                envelope.get_without_default(self.struct)
                if envelope.schema.field(self.struct) is not None
                else None
            )
        if parent is None:
            return None
        if parent.schema.field(self.field) is not None:
            return parent.get_without_default(self.field)
        return envelope.get_without_default(self.field)

    def __repr__(self) -> str:
        return f"FieldReference({self.struct}.{self.field} -> {self.new_field})"


def _optional_copy(schema: Schema) -> Schema:
    """Kafka's ``SchemaUtil.copySchemaBasics(schema).optional().build()``: type, name,
    version, doc and parameters; not the default."""
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        builder = SchemaBuilder.array(schema.value_schema)
    elif schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        builder = SchemaBuilder.map(schema.key_schema, schema.value_schema)
    elif schema.type is Type.STRUCT:
        builder = SchemaBuilder.struct()
        for field in schema.fields:
            builder.field(field.name, field.schema)
    else:
        builder = SchemaBuilder.type(schema.type)
    return copy_schema_basics(schema, builder).optional().build()


__all__ = ["FieldReference"]
