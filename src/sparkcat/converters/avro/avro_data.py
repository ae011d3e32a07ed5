"""Connect schemas <-> Avro schemas, as Confluent's ``AvroData`` maps them.

Avro schemas are JSON values (``str`` for a bare primitive, ``dict`` for the others, ``list``
for a union) whose key order is the one Avro's Java library writes (``type``, ``name``,
``namespace``, ``doc``, ``fields``/``items``/``values``/``size``, then the properties in the
order ``AvroData`` adds them), so :func:`schema_text` gives the same text that Confluent's
converter registers for the same Connect schema, and both converters share a subject's
versions and ids.

Mapping (Connect -> Avro): INT8/INT16 -> ``int`` with ``connect.type``; INT32/INT64/FLOAT32/
FLOAT64/BOOLEAN/STRING/BYTES -> int/long/float/double/boolean/string/bytes; Decimal -> bytes
with ``logicalType: decimal`` (precision 64 unless ``connect.decimal.precision``); Date ->
int/date; Time -> int/time-millis; Timestamp -> long/timestamp-millis; ARRAY -> array; MAP with
(non-optional) STRING keys -> map, other keys -> array of ``MapEntry`` records with ``key`` and
``value``; STRUCT -> record (unnamed ones ``io.confluent.connect.avro.ConnectDefault``,
``ConnectDefault2``...); optional -> union with ``null`` (``null`` first, or second when the
schema has a default); ``connect.doc``/``connect.version``/``connect.parameters``/
``connect.default``/``connect.name`` carry what Avro cannot (``connect.meta.data``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from sparkcat.api._java_format import java_double_str
from sparkcat.api.data import Decimal, Schema, Type
from sparkcat.converters.avro._constants import (
    AVRO_ENUM_DEFAULT_PREFIX_PROP,
    AVRO_ENUM_DOC_PREFIX_PROP,
    AVRO_FIELD_DEFAULT_FLAG_PROP,
    AVRO_FIELD_DOC_PREFIX_PROP,
    AVRO_PROP,
    AVRO_RECORD_DOC_PROP,
    AVRO_TYPE_ENUM,
    AVRO_TYPE_UNION,
    CONNECT_AVRO_DECIMAL_PRECISION_PROP,
    CONNECT_AVRO_FIXED_SIZE_PROP,
    CONNECT_DEFAULT_VALUE_PROP,
    CONNECT_DOC_PROP,
    CONNECT_INTERNAL_TYPE_NAME,
    CONNECT_NAME_PROP,
    CONNECT_PARAMETERS_PROP,
    CONNECT_TYPE_NAMES,
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    DECIMAL_PRECISION_DEFAULT,
    DEFAULT_SCHEMA_FULL_NAME,
    DEFAULT_SCHEMA_NAME,
    LOGICAL_TYPES,
    MAP_ENTRY_TYPE_NAME,
    NAMESPACE,
    NON_AVRO_TYPES,
    PRIMITIVES,
    split_name,
)
from sparkcat.converters.avro._defaults import (
    default_is_valid,
    default_to_avro,
)
from sparkcat.converters.avro._to_connect import to_connect_schema

_NO_DEFAULT = object()


def schema_text(avro_schema: Any) -> str:
    """The compact JSON text of ``avro_schema`` (what Avro's ``Schema.toString()`` prints:
    Jackson's text, so float defaults in Java's ``Double.toString`` form, ``1.0E10``)."""
    return orjson.dumps(_java_floats(avro_schema)).decode()


def _java_floats(node: Any) -> Any:
    if isinstance(node, float):
        return orjson.Fragment(java_double_str(node).encode())
    if isinstance(node, dict):
        return {key: _java_floats(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_java_floats(value) for value in node]
    return node


class _FromConnect:
    """One ``fromConnectSchema`` call: the names handed out and the types already written."""

    def __init__(self, connect_meta_data: bool, enhanced: bool) -> None:
        self.meta = connect_meta_data
        self.enhanced = enhanced
        self.name_index = 0
        self.written: dict[Schema, Any] = {}  # non-optional schema -> its Avro schema
        self.named: dict[int, str] = {}  # id(avro dict) -> full name, for name references
        self._by_id: dict[int, dict[str, Any]] = {}
        self.namespaces: list[str | None] = [None]

    def name_or_default(self, name: str | None) -> tuple[str | None, str]:
        if name is not None:
            return split_name(name)
        self.name_index += 1
        suffix = str(self.name_index) if self.name_index > 1 else ""
        return NAMESPACE, DEFAULT_SCHEMA_NAME + suffix

    def convert(self, schema: Schema, ignore_optional: bool = False) -> Any:
        if not schema.optional and schema in self.written:
            return self._reference(self.written[schema])
        if schema.type is Type.STRUCT and schema.name == AVRO_TYPE_UNION:
            # a Connect union: the Avro union of its fields' (non-optional) schemas
            result: Any = ["null"] if schema.optional else []
            result += [self.convert(_non_optional(f.schema), True) for f in schema.fields]
        elif schema.type is Type.STRUCT and schema.optional and not ignore_optional:
            inner = self.convert(_non_optional(schema))
            result = ["null", inner]
        else:
            base: Any = self._base(schema)
            self._add_props(schema, base)
            if len(base) == 1:
                base = base["type"]  # a primitive without properties is written as its name
            result = base
            if schema.optional and not ignore_optional:
                result = [base, "null"] if schema.default_value is not None else ["null", base]
        if not schema.optional:
            self.written[schema] = result
        return result

    def _reference(self, avro: Any) -> Any:
        full = self.named.get(id(avro)) if isinstance(avro, dict) else None
        if full is None:
            return avro  # not a named type: Avro writes it out again
        namespace, name = split_name(full)
        return name if namespace == self.namespaces[-1] else full

    def _base(self, schema: Schema) -> dict[str, Any]:
        kind = schema.type
        params = schema.parameters or {}
        if kind is Type.STRING and self.enhanced and AVRO_TYPE_ENUM in params:
            return self._enum(schema, params)
        if (
            kind is Type.BYTES
            and schema.name is not None
            and CONNECT_AVRO_FIXED_SIZE_PROP in params
        ):
            return self._named(
                {"type": "fixed"},
                schema.name,
                None,
                {"size": int(params[CONNECT_AVRO_FIXED_SIZE_PROP])},
            )
        if kind in PRIMITIVES:
            base: dict[str, Any] = {"type": PRIMITIVES[kind]}
            if kind is Type.BYTES and schema.name == Decimal.LOGICAL_NAME:
                base["scale"] = int(params.get(Decimal.SCALE_FIELD, "0"))
                precision = params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP)
                base["precision"] = (
                    DECIMAL_PRECISION_DEFAULT if precision is None else int(precision)
                )
            return base
        if kind is Type.ARRAY:
            assert schema.value_schema is not None
            return {"type": "array", "items": self.convert(schema.value_schema)}
        if kind is Type.MAP:
            return self._map(schema)
        return self._record(schema, params)

    def _named(
        self, head: dict[str, Any], full_name: str | None, doc: str | None, body: dict[str, Any]
    ) -> dict[str, Any]:
        namespace, name = self.name_or_default(full_name)
        head["name"] = name
        enclosing = self.namespaces[-1]
        if namespace is not None:
            if namespace != enclosing:
                head["namespace"] = namespace
        elif enclosing is not None:
            head["namespace"] = ""
        if doc is not None:
            head["doc"] = doc
        head.update(body)
        self.named[id(head)] = name if namespace is None else f"{namespace}.{name}"
        self._by_id[id(head)] = head
        return head

    def _enum(self, schema: Schema, params: Mapping[str, str]) -> dict[str, Any]:
        prefix = AVRO_TYPE_ENUM + "."
        symbols = [key[len(prefix) :] for key in params if key.startswith(prefix)]
        namespace, name = split_name(params[AVRO_TYPE_ENUM])
        head: dict[str, Any] = {"type": "enum", "name": name}
        if namespace is not None and namespace != self.namespaces[-1]:
            head["namespace"] = namespace
        local = split_name(schema.name)[1] if schema.name is not None else DEFAULT_SCHEMA_NAME
        doc = params.get(AVRO_ENUM_DOC_PREFIX_PROP + local)
        if doc is not None:
            head["doc"] = doc
        head["symbols"] = symbols
        default = params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + local)
        if default is not None:
            head["default"] = default
        self.named[id(head)] = params[AVRO_TYPE_ENUM]
        self._by_id[id(head)] = head
        return head

    def _map(self, schema: Schema) -> dict[str, Any]:
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        if key_schema.type is Type.STRING and not key_schema.optional:
            return {"type": "map", "values": self.convert(value_schema)}
        if schema.name is None:
            entry: dict[str, Any] = {"type": "record", "name": MAP_ENTRY_TYPE_NAME}
            if self.namespaces[-1] != NAMESPACE:
                entry["namespace"] = NAMESPACE
            self.named[id(entry)] = f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}"
            self._by_id[id(entry)] = entry
            namespace: str | None = NAMESPACE
        else:
            entry = self._named({"type": "record"}, schema.name, None, {})
            namespace = split_name(schema.name)[0]
        self.namespaces.append(namespace)
        try:
            entry["fields"] = [
                self._field("key", key_schema, None),
                self._field("value", value_schema, None),
            ]
        finally:
            self.namespaces.pop()
        if schema.name is not None:
            entry[CONNECT_INTERNAL_TYPE_NAME] = MAP_ENTRY_TYPE_NAME
        return {"type": "array", "items": entry}

    def _record(self, schema: Schema, params: Mapping[str, str]) -> dict[str, Any]:
        record = self._named({"type": "record"}, schema.name, params.get(AVRO_RECORD_DOC_PROP), {})
        self.namespaces.append(split_name(self.named[id(record)])[0])
        try:
            record["fields"] = [
                self._field(f.name, f.schema, params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name))
                for f in schema.fields
            ]
        finally:
            self.namespaces.pop()
        return record

    def _field(self, name: str, schema: Schema, doc: str | None) -> dict[str, Any]:
        field: dict[str, Any] = {"name": name, "type": self.convert(schema)}
        if doc is not None:
            field["doc"] = doc
        default: Any = _NO_DEFAULT
        if schema.default_value is not None:
            default = default_to_avro(schema, schema.default_value)
        elif schema.optional:
            default = None
        # Avro drops a default that does not match the field's (first union) type.
        if default is not _NO_DEFAULT and default_is_valid(field["type"], default, self.lookup):
            field["default"] = default
        return field

    def lookup(self, name: str) -> Any:
        for avro_id, full in self.named.items():
            if full == name or split_name(full)[1] == name:
                return self._by_id[avro_id]
        return None

    def _add_props(self, schema: Schema, base: dict[str, Any]) -> None:
        params = schema.parameters
        if self.meta:
            if schema.doc is not None:
                base[CONNECT_DOC_PROP] = schema.doc
            if schema.version is not None:
                base[CONNECT_VERSION_PROP] = schema.version
            if params:
                shown = {k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP}
                if shown:
                    base[CONNECT_PARAMETERS_PROP] = shown
            if schema.default_value is not None and not (
                params and AVRO_FIELD_DEFAULT_FLAG_PROP in params
            ):
                base[CONNECT_DEFAULT_VALUE_PROP] = default_to_avro(schema, schema.default_value)
            if schema.name is not None:
                base[CONNECT_NAME_PROP] = schema.name
            type_name = CONNECT_TYPE_NAMES.get(schema.type)
            if type_name is not None:
                base[CONNECT_TYPE_PROP] = type_name
        logical = LOGICAL_TYPES.get(schema.name) if schema.name is not None else None
        if logical is not None:
            base["logicalType"] = logical  # precision and scale are already in place
        if params:
            for key, value in params.items():
                if key.startswith(AVRO_PROP):
                    base.setdefault(key, value)


def _non_optional(schema: Schema) -> Schema:
    return Schema(
        schema.type,
        False,
        schema.default_value,
        schema.name,
        schema.version,
        schema.doc,
        schema.parameters,
        schema.fields if schema.type is Type.STRUCT else None,
        schema.key_schema if schema.type is Type.MAP else None,
        schema.value_schema if schema.type in (Type.ARRAY, Type.MAP) else None,
    )


def from_connect_schema(
    schema: Schema, connect_meta_data: bool = True, enhanced: bool = False
) -> Any:
    """The Avro schema (JSON value) Confluent's ``AvroData.fromConnectSchema`` gives."""
    return _FromConnect(connect_meta_data, enhanced).convert(schema)


__all__ = [
    "AVRO_ENUM_DEFAULT_PREFIX_PROP",
    "AVRO_ENUM_DOC_PREFIX_PROP",
    "AVRO_FIELD_DEFAULT_FLAG_PROP",
    "AVRO_FIELD_DOC_PREFIX_PROP",
    "AVRO_PROP",
    "AVRO_RECORD_DOC_PROP",
    "AVRO_TYPE_ENUM",
    "AVRO_TYPE_UNION",
    "CONNECT_AVRO_DECIMAL_PRECISION_PROP",
    "CONNECT_AVRO_FIXED_SIZE_PROP",
    "CONNECT_DEFAULT_VALUE_PROP",
    "CONNECT_DOC_PROP",
    "CONNECT_INTERNAL_TYPE_NAME",
    "CONNECT_NAME_PROP",
    "CONNECT_PARAMETERS_PROP",
    "CONNECT_TYPE_NAMES",
    "CONNECT_TYPE_PROP",
    "CONNECT_VERSION_PROP",
    "DECIMAL_PRECISION_DEFAULT",
    "DEFAULT_SCHEMA_FULL_NAME",
    "DEFAULT_SCHEMA_NAME",
    "LOGICAL_TYPES",
    "MAP_ENTRY_TYPE_NAME",
    "NAMESPACE",
    "NON_AVRO_TYPES",
    "PRIMITIVES",
    "from_connect_schema",
    "schema_text",
    "split_name",
    "to_connect_schema",
]
