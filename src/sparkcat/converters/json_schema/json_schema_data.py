"""Connect schemas <-> JSON Schema documents, as Confluent's ``JsonSchemaData`` maps them.

Connect -> JSON Schema: INT8..INT64 -> ``{"type":"integer","connect.type":"int8"...}``,
FLOAT32/FLOAT64 -> ``number`` with ``connect.type``, BOOLEAN -> ``boolean``, STRING ->
``string`` (an enum when it carries ``io.confluent.connect.json.Enum`` parameters), BYTES ->
``string`` with ``connect.type: bytes`` (a ``number`` for Decimal with
``decimal.format=NUMERIC``), ARRAY -> ``array``, MAP with STRING keys -> ``object`` with
``additionalProperties`` and ``connect.type: map``, other maps -> ``array`` of ``{key,
value}`` objects with ``connect.type: map``, STRUCT -> ``object`` whose ``properties`` carry
``connect.index`` (field order), optional -> ``oneOf`` ``[{"type":"null"}, T]``; name ->
``title``, doc -> ``description``, version -> ``connect.version``, parameters ->
``connect.parameters``, default -> ``default``.

The document is semantically Confluent's; its key order is sparkcat's (Confluent's follows
Java hash maps), so a subject shared with Confluent's converter may get one extra version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.data import Decimal, Schema, SchemaBuilder, Type
from sparkcat.api.errors import DataError

NAMESPACE = "io.confluent.connect.json"
CONNECT_TYPE_PROP = "connect.type"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INDEX_PROP = "connect.index"
JSON_TYPE_ENUM = NAMESPACE + ".Enum"
JSON_TYPE_ONE_OF = NAMESPACE + ".OneOf"
NULL_MARKER = "<NULL>"

_NUMBERS = {
    Type.INT8: ("integer", "int8"),
    Type.INT16: ("integer", "int16"),
    Type.INT32: ("integer", "int32"),
    Type.INT64: ("integer", "int64"),
    Type.FLOAT32: ("number", "float32"),
    Type.FLOAT64: ("number", "float64"),
}
_FROM_CONNECT_TYPE = {
    "int8": Type.INT8,
    "int16": Type.INT16,
    "int32": Type.INT32,
    "int64": Type.INT64,
    "float32": Type.FLOAT32,
    "float64": Type.FLOAT64,
    "bytes": Type.BYTES,
}


class JsonSchemaMapping:
    """The mapping under one converter's settings."""

    def __init__(
        self,
        decimal_numeric: bool = False,
        allow_additional_properties: bool = True,
        optional_for_nonrequired: bool = False,
    ) -> None:
        self.decimal_numeric = decimal_numeric
        self.allow_additional_properties = allow_additional_properties
        self.optional_for_nonrequired = optional_for_nonrequired

    # -- Connect -> JSON Schema ------------------------------------------------------------
    def from_connect_schema(self, schema: Schema) -> dict[str, Any]:
        document: dict[str, Any] = self._from_connect(schema, None, False)
        return document

    def _from_connect(self, schema: Schema, index: int | None, ignore_optional: bool) -> Any:
        if schema.type is Type.STRUCT and schema.optional and not ignore_optional:
            combined: dict[str, Any] = {
                "oneOf": [{"type": "null"}, self._from_connect(schema, None, True)]
            }
            if index is not None:
                combined[CONNECT_INDEX_PROP] = index
            return combined
        node = self._base(schema)
        if schema.name is not None:
            node["title"] = schema.name
        if schema.doc is not None:
            node["description"] = schema.doc
        if schema.default_value is not None:
            from sparkcat.converters.json_schema._values import to_json_default

            node["default"] = to_json_default(self, schema, schema.default_value)
        if schema.version is not None:
            node[CONNECT_VERSION_PROP] = schema.version
        params = {k: v for k, v in (schema.parameters or {}).items() if not k.startswith(NAMESPACE)}
        if params:
            node[CONNECT_PARAMETERS_PROP] = params
        if schema.optional and not ignore_optional:
            combined = {"oneOf": [{"type": "null"}, node]}
            if index is not None:
                combined[CONNECT_INDEX_PROP] = index
            return combined
        if index is not None:
            node[CONNECT_INDEX_PROP] = index
        return node

    def _base(self, schema: Schema) -> dict[str, Any]:
        kind = schema.type
        if kind in _NUMBERS:
            json_type, connect_type = _NUMBERS[kind]
            return {"type": json_type, CONNECT_TYPE_PROP: connect_type}
        if kind is Type.BOOLEAN:
            return {"type": "boolean"}
        if kind is Type.STRING:
            params = schema.parameters or {}
            if JSON_TYPE_ENUM in params:
                prefix = JSON_TYPE_ENUM + "."
                values = [
                    None if k[len(prefix) :] == NULL_MARKER else k[len(prefix) :]
                    for k in params
                    if k.startswith(prefix)
                ]
                return {"type": "string", "enum": values}
            return {"type": "string"}
        if kind is Type.BYTES:
            numeric = self.decimal_numeric and schema.name == Decimal.LOGICAL_NAME
            return {"type": "number" if numeric else "string", CONNECT_TYPE_PROP: "bytes"}
        if kind is Type.ARRAY:
            assert schema.value_schema is not None
            return {"type": "array", "items": self._from_connect(schema.value_schema, None, False)}
        if kind is Type.MAP:
            key, value = schema.key_schema, schema.value_schema
            assert key is not None and value is not None
            if key.type is Type.STRING and not key.optional:
                return {
                    "type": "object",
                    "additionalProperties": self._from_connect(value, None, False),
                    CONNECT_TYPE_PROP: "map",
                }
            entry = {
                "type": "object",
                "properties": {
                    "key": self._from_connect(key, 0, False),
                    "value": self._from_connect(value, 1, False),
                },
            }
            return {"type": "array", "items": entry, CONNECT_TYPE_PROP: "map"}
        if schema.name == JSON_TYPE_ONE_OF:
            raise DataError("Connect unions (io.confluent.connect.json.OneOf) are not supported")
        node: dict[str, Any] = {
            "type": "object",
            "properties": {
                f.name: self._from_connect(f.schema, f.index, False) for f in schema.fields
            },
        }
        if not self.allow_additional_properties:
            node["additionalProperties"] = False
        return node

    # -- JSON Schema -> Connect ------------------------------------------------------------
    def to_connect_schema(self, document: Any, version: int | None = None) -> Schema:
        return _ToConnect(self, document).convert(document, version, False)


class _ToConnect:
    def __init__(self, mapping: JsonSchemaMapping, root: Any) -> None:
        self.mapping = mapping
        self.root = root

    def _resolve(self, node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#"):
                raise DataError(f"Unsupported JSON Schema reference: {ref}")
            target = self.root
            for part in ref[1:].split("/"):
                if part:
                    target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
            seen += 1
            if seen > 32:
                raise DataError(f"Recursive JSON Schema reference: {ref}")
        return node

    def convert(self, node: Any, version: int | None, optional: bool) -> Schema:
        node = self._resolve(node)
        if node is True or node == {}:
            raise DataError("JSON Schemas without a type are not supported")
        if not isinstance(node, dict):
            raise DataError(f"Unsupported JSON Schema: {node!r}")
        combined = node.get("oneOf", node.get("anyOf"))
        kind = node.get("type")
        if isinstance(kind, list):
            combined = [{**node, "type": t} for t in kind]
        if combined is not None:
            return self._combined(combined, version, optional)
        builder = self._builder(node, kind)
        if node.get("title") is not None and builder.schema().name is None:
            builder.name(node["title"])
        connect_version = node.get(CONNECT_VERSION_PROP, version)
        if connect_version is not None:
            builder.version(int(connect_version))
        if node.get("description") is not None:
            builder.doc(node["description"])
        params = node.get(CONNECT_PARAMETERS_PROP)
        if isinstance(params, Mapping):
            builder.parameters({str(k): str(v) for k, v in params.items()})
        if "default" in node and node["default"] is not None:
            from sparkcat.converters.json_schema._values import from_json

            builder.default_value(from_json(self.mapping, builder.schema())(node["default"]))
        if optional:
            builder.optional()
        return builder.build()

    def _combined(self, members: list[Any], version: int | None, optional: bool) -> Schema:
        if len(members) == 1:
            return self.convert(members[0], version, optional)
        resolved = [self._resolve(m) for m in members]
        nulls = [m for m in resolved if isinstance(m, dict) and m.get("type") == "null"]
        if len(resolved) == 2 and len(nulls) == 1:
            other = resolved[0] if resolved[1] is nulls[0] else resolved[1]
            return self.convert(other, version, True)
        raise DataError("JSON Schema unions other than [null, type] are not supported")

    def _builder(self, node: dict[str, Any], kind: Any) -> SchemaBuilder:
        connect_type = node.get(CONNECT_TYPE_PROP)
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            builder = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "")
            for value in values:
                symbol = NULL_MARKER if value is None else str(value)
                builder.parameter(f"{JSON_TYPE_ENUM}.{symbol}", symbol)
            return builder
        if kind == "boolean":
            return SchemaBuilder.boolean()
        if kind in ("integer", "number"):
            if connect_type is None:
                return SchemaBuilder.int64() if kind == "integer" else SchemaBuilder.float64()
            found = _FROM_CONNECT_TYPE.get(connect_type)
            if found is None:
                raise DataError(f"Unsupported type {connect_type}")
            return SchemaBuilder.type(found)
        if kind == "string":
            return SchemaBuilder.bytes() if connect_type == "bytes" else SchemaBuilder.string()
        if kind == "array":
            items = self._resolve(node.get("items"))
            if items is None:
                raise DataError("Array schema did not specify the items type")
            if connect_type == "map" and isinstance(items, dict) and items.get("type") == "object":
                props = items.get("properties", {})
                return SchemaBuilder.map(
                    self.convert(props["key"], None, False),
                    self.convert(props["value"], None, False),
                )
            return SchemaBuilder.array(self.convert(items, None, False))
        if kind == "object":
            if connect_type == "map":
                return SchemaBuilder.map(
                    Schema.STRING_SCHEMA,
                    self.convert(node.get("additionalProperties"), None, False),
                )
            return self._struct(node)
        raise DataError(f"Unsupported JSON Schema type: {kind}")

    def _struct(self, node: dict[str, Any]) -> SchemaBuilder:
        properties: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", ()))
        ordered: dict[int, tuple[str, Any]] = {}
        for name, sub in properties.items():
            index = sub.get(CONNECT_INDEX_PROP) if isinstance(sub, dict) else None
            ordered[len(ordered) if index is None else int(index)] = (name, sub)
        builder = SchemaBuilder.struct()
        for _, (name, sub) in sorted(ordered.items()):
            optional = self.mapping.optional_for_nonrequired and name not in required
            builder.field(name, self.convert(sub, None, optional))
        return builder
