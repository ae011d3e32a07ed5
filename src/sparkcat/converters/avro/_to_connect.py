"""Avro schemas -> Connect schemas, as Confluent's ``AvroData.toConnectSchema`` maps them."""

from __future__ import annotations

import json
from typing import Any

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from sparkcat.api.errors import DataError
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
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    DECIMAL_PRECISION_DEFAULT,
    DEFAULT_SCHEMA_FULL_NAME,
    MAP_ENTRY_TYPE_NAME,
    NAMESPACE,
    NON_AVRO_TYPES,
    split_name,
)
from sparkcat.converters.avro._defaults import default_from_avro


class _ToConnect:
    """One ``toConnectSchema`` call over a parsed Avro JSON schema."""

    def __init__(self, connect_meta_data: bool, enhanced: bool = False) -> None:
        self.meta = connect_meta_data
        self.enhanced = enhanced
        self.types: dict[str, Any] = {}  # full name -> definition, for name references
        self.namespaces: list[str | None] = [None]

    def resolve(self, avro: Any) -> Any:
        if isinstance(avro, str) and avro not in _AVRO_PRIMITIVES:
            full = (
                avro
                if "." in avro or self.namespaces[-1] is None
                else (f"{self.namespaces[-1]}.{avro}")
            )
            found = self.types.get(full) or self.types.get(avro)
            if found is None:
                raise DataError(f"Unknown Avro type name: {avro}")
            return found
        return avro

    def full_name(self, avro: dict[str, Any]) -> str:
        name = avro["name"]
        if "." in name:
            return str(name)
        namespace = avro.get("namespace", self.namespaces[-1])
        return f"{namespace}.{name}" if namespace else str(name)

    def convert(
        self,
        avro: Any,
        optional: bool = False,
        field_default: Any = None,
        has_field_default: bool = False,
        version: int | None = None,
    ) -> Schema:
        avro = self.resolve(avro)
        if isinstance(avro, list):
            return self._union(avro)
        node: dict[str, Any] = {"type": avro} if isinstance(avro, str) else avro
        builder = self._builder(node)
        self._apply_props(node, builder, version)
        connect_default = node.get(CONNECT_DEFAULT_VALUE_PROP)
        default = field_default if has_field_default else connect_default
        if has_field_default and self.meta and CONNECT_DEFAULT_VALUE_PROP not in node:
            builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")
        if default is not None:
            try:
                builder.default_value(default_from_avro(builder.schema(), default))
            except DataError:
                pass  # Confluent logs and ignores an invalid default
        self._apply_name(node, builder)
        if optional:
            builder.optional()
        return builder.build()

    def _union(self, members: list[Any]) -> Schema:
        if len(members) == 1:
            return self.convert(members[0])
        if len(members) == 2 and "null" in members:
            other = members[1] if members[0] == "null" else members[0]
            return self.convert(other, optional=True)
        builder = SchemaBuilder.struct().name(AVRO_TYPE_UNION)
        names: set[str] = set()
        for member in members:
            resolved = self.resolve(member)
            if resolved == "null" or (isinstance(resolved, dict) and resolved["type"] == "null"):
                builder.optional()
                continue
            name = self._member_name(resolved)
            if name in names:
                raise DataError("Multiple union schemas map to the Connect union field name")
            names.add(name)
            builder.field(name, self.convert(member, optional=True))
        return builder.build()

    def _member_name(self, member: Any) -> str:
        """The Connect field name of a union member (Confluent's ``unionMemberFieldName``)."""
        kind = member if isinstance(member, str) else member["type"]
        if isinstance(member, dict) and kind in ("record", "error", "enum", "fixed"):
            full = self.full_name(member)
            return full if self.enhanced else split_name(full)[1]
        return str(kind)

    def _builder(self, node: dict[str, Any]) -> SchemaBuilder:
        kind = node["type"]
        if not isinstance(kind, str) or (kind not in _AVRO_PRIMITIVES and kind not in _COMPLEX):
            raise DataError(f"Unsupported Avro schema: {node}")
        logical = node.get("logicalType")
        if kind in ("bytes", "fixed"):
            if logical == "decimal":
                builder = Decimal.builder(int(node.get("scale", 0)))
                precision = node.get("precision")
                if precision is not None and precision != DECIMAL_PRECISION_DEFAULT:
                    builder.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, str(precision))
            else:
                builder = SchemaBuilder.bytes()
            if kind == "fixed":
                self.types[self.full_name(node)] = node
                builder.parameter(CONNECT_AVRO_FIXED_SIZE_PROP, str(node["size"]))
            return builder
        if kind == "int":
            if logical == "date":
                return Date.builder()
            if logical == "time-millis":
                return Time.builder()
            connect_type = node.get(CONNECT_TYPE_PROP)
            if connect_type is not None and logical is None:
                found = NON_AVRO_TYPES.get(connect_type)
                if found is None:
                    raise DataError("Connect type annotation for Avro int field is null")
                return SchemaBuilder.type(found)
            return SchemaBuilder.int32()
        if kind == "long":
            return Timestamp.builder() if logical == "timestamp-millis" else SchemaBuilder.int64()
        simple = _SIMPLE.get(kind)
        if simple is not None:
            return SchemaBuilder.type(simple)
        if kind == "null":
            raise DataError("Standalone null schemas are not supported by this converter")
        if kind == "array":
            return self._array(node)
        if kind == "map":
            return SchemaBuilder.map(Schema.STRING_SCHEMA, self.convert(node["values"]))
        if kind == "enum":
            return self._enum(node)
        return self._record(node)

    def _array(self, node: dict[str, Any]) -> SchemaBuilder:
        items = self.resolve(node["items"])
        if isinstance(items, dict) and items.get("type") == "record" and _is_map_entry(items):
            self.types[self.full_name(items)] = items
            fields = {f["name"]: f for f in items["fields"]}
            if len(fields) != 2 or "key" not in fields or "value" not in fields:
                raise DataError(
                    "Found map encoded as array of key-value pairs, but array elements do not "
                    "match the expected format."
                )
            self.namespaces.append(split_name(self.full_name(items))[0])
            try:
                key = self.convert(fields["key"]["type"])
                value = self.convert(fields["value"]["type"])
            finally:
                self.namespaces.pop()
            return SchemaBuilder.map(key, value)
        return SchemaBuilder.array(self.convert(items))

    def _enum(self, node: dict[str, Any]) -> SchemaBuilder:
        full = self.full_name(node)
        self.types[full] = node
        builder = SchemaBuilder.string()
        if self.meta:
            if node.get("doc") is not None:
                builder.parameter(AVRO_ENUM_DOC_PREFIX_PROP + node["name"], node["doc"])
            if node.get("default") is not None:
                builder.parameter(AVRO_ENUM_DEFAULT_PREFIX_PROP + node["name"], node["default"])
        builder.parameter(AVRO_TYPE_ENUM, full)
        for symbol in node["symbols"]:
            builder.parameter(f"{AVRO_TYPE_ENUM}.{symbol}", symbol)
        return builder

    def _record(self, node: dict[str, Any]) -> SchemaBuilder:
        full = self.full_name(node)
        self.types[full] = node
        builder = SchemaBuilder.struct()
        if self.meta and node.get("doc") is not None:
            builder.parameter(AVRO_RECORD_DOC_PROP, node["doc"])
        self.namespaces.append(split_name(full)[0])
        try:
            for field in node["fields"]:
                if self.meta and field.get("doc") is not None:
                    builder.parameter(AVRO_FIELD_DOC_PREFIX_PROP + field["name"], field["doc"])
                has_default = "default" in field
                field_schema = self.convert(
                    field["type"],
                    field_default=field.get("default"),
                    has_field_default=has_default
                    and not isinstance(self.resolve(field["type"]), list),
                )
                builder.field(field["name"], field_schema)
        finally:
            self.namespaces.pop()
        return builder

    def _apply_props(
        self, node: dict[str, Any], builder: SchemaBuilder, version: int | None
    ) -> None:
        if self.meta and node.get(CONNECT_DOC_PROP) is not None:
            builder.doc(node[CONNECT_DOC_PROP])
        connect_version = node.get(CONNECT_VERSION_PROP)
        if connect_version is not None:
            if not isinstance(connect_version, int):
                raise DataError(f"Invalid Connect version found: {connect_version}")
            version = connect_version
        if version is not None and version >= 0:
            current = builder.schema().version
            if current is None:
                builder.version(version)
            elif current != version:
                raise DataError(
                    "Mismatched versions: version already added to SchemaBuilder "
                    f"({current}) differs from version in source schema ({version})"
                )
        params = node.get(CONNECT_PARAMETERS_PROP)
        if self.meta and params is not None:
            if not isinstance(params, dict):
                raise DataError(f"Expected JSON object for schema parameters but found: {params}")
            for key, value in params.items():
                if not isinstance(value, str):
                    raise DataError(
                        f"Expected schema parameter values to be strings but found: {value}"
                    )
                builder.parameter(key, value)
        for key, value in node.items():
            if key.startswith(AVRO_PROP):
                builder.parameter(key, value if isinstance(value, str) else json.dumps(value))

    def _apply_name(self, node: dict[str, Any], builder: SchemaBuilder) -> None:
        name = node.get(CONNECT_NAME_PROP)
        kind = node["type"]
        if name is not None and not isinstance(name, str):
            raise DataError(f"Invalid schema name: {name}")
        if (name is None and kind in ("record", "enum")) or (
            name is None and kind == "fixed" and builder.schema().name != Decimal.LOGICAL_NAME
        ):
            name = self.full_name(node)
        if name is None or name.startswith(DEFAULT_SCHEMA_FULL_NAME):
            return
        current = builder.schema().name
        if current is None:
            builder.name(name)
        elif current != name:
            raise DataError(
                "Mismatched names: name already added to SchemaBuilder "
                f"({current}) differs from name in source schema ({name})"
            )


_AVRO_PRIMITIVES = frozenset(
    ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
)
_COMPLEX = frozenset(("record", "enum", "array", "map", "fixed", "error"))
_SIMPLE = {
    "boolean": Type.BOOLEAN,
    "float": Type.FLOAT32,
    "double": Type.FLOAT64,
    "string": Type.STRING,
}


def _is_map_entry(record: dict[str, Any]) -> bool:
    if record.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME:
        return True
    namespace = record.get("namespace")
    name = record["name"]
    return name == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}" or (
        name == MAP_ENTRY_TYPE_NAME and namespace == NAMESPACE
    )


def to_connect_schema(
    avro_schema: Any,
    version: int | None = None,
    connect_meta_data: bool = True,
    enhanced: bool = False,
) -> Schema:
    """The Connect schema Confluent's ``AvroData.toConnectSchema`` gives for ``avro_schema``
    (parsed JSON); ``version`` is the registry's version, used without ``connect.version``.
    Unions other than ``[null, T]`` become STRUCTs named ``io.confluent.connect.avro.Union``
    with one optional field per member (named by the member's type, or its record/enum/fixed
    name: the short name, or the full name with ``enhanced``)."""
    return _ToConnect(connect_meta_data, enhanced).convert(avro_schema, version=version)
