"""The JSON form of Connect schemas inside JsonConverter's envelope (Kafka's ``JsonSchema``).

A schema becomes an object whose keys come in Kafka's order: ``type``; ``items`` (array),
``keys``/``values`` (map) or ``fields`` (struct, each field's schema with ``"field"`` last);
``optional``; then ``name``, ``version``, ``doc``, ``parameters`` and ``default`` when set.
Both directions are pure functions; the converter caches their results in :class:`LRUCache`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sparkcat.api.data import Schema, SchemaBuilder, Type
from sparkcat.api.errors import DataError

ENVELOPE_SCHEMA_FIELD_NAME = "schema"
ENVELOPE_PAYLOAD_FIELD_NAME = "payload"

# Connect type <-> JSON type name (FLOAT32/FLOAT64 are "float"/"double" in the envelope).
TYPE_NAMES: dict[Type, str] = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_BUILDERS: dict[str, Type] = {name: type_ for type_, name in TYPE_NAMES.items()}

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A bounded map that evicts the least recently used entry (Kafka's ``LRUCache``)."""

    __slots__ = ("_data", "_max_size")

    def __init__(self, max_size: int) -> None:
        self._max_size = max(max_size, 0)
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self._max_size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def as_json_schema(schema: Schema, default_to_json: Callable[[Schema, Any], Any]) -> dict[str, Any]:
    """The envelope form of ``schema``; ``default_to_json`` renders its default value."""
    node: dict[str, Any] = {"type": TYPE_NAMES[schema.type]}
    if schema.type is Type.ARRAY:
        node["items"] = _child(schema.value_schema, default_to_json)
    elif schema.type is Type.MAP:
        node["keys"] = _child(schema.key_schema, default_to_json)
        node["values"] = _child(schema.value_schema, default_to_json)
    elif schema.type is Type.STRUCT:
        fields = []
        for field in schema.fields:
            field_node = as_json_schema(field.schema, default_to_json)
            field_node["field"] = field.name
            fields.append(field_node)
        node["fields"] = fields
    node["optional"] = schema.optional
    if schema.name is not None:
        node["name"] = schema.name
    if schema.version is not None:
        node["version"] = schema.version
    if schema.doc is not None:
        node["doc"] = schema.doc
    if schema.parameters is not None:
        node["parameters"] = dict(schema.parameters)
    if schema.default_value is not None:
        node["default"] = default_to_json(schema, schema.default_value)
    return node


def _child(schema: Schema | None, default_to_json: Callable[[Schema, Any], Any]) -> Any:
    # Kafka writes a JSON null for a missing element/key/value schema.
    return None if schema is None else as_json_schema(schema, default_to_json)


def as_connect_schema(node: Any, default_to_connect: Callable[[Schema, Any], Any]) -> Schema:
    """The Connect schema of an envelope ``schema`` object; :class:`DataError` if malformed.

    ``default_to_connect(schema, json)`` converts the ``default`` member with the schema built
    so far (Kafka's ``convertToConnect(builder, default)``).
    """
    if not isinstance(node, dict):
        raise DataError("Schema must contain 'type' field")
    type_name = node.get("type")
    if not isinstance(type_name, str):
        raise DataError("Schema must contain 'type' field")
    type_ = _BUILDERS.get(type_name)
    if type_ is None:
        raise DataError(f"Unknown schema type: {type_name}")
    builder = _builder(type_, node, default_to_connect)
    if node.get("optional") is True:
        builder.optional()
    else:
        builder.required()
    name = node.get("name")
    if isinstance(name, str):
        builder.name(name)
    version = node.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        builder.version(version)
    doc = node.get("doc")
    if isinstance(doc, str):
        builder.doc(doc)
    parameters = node.get("parameters")
    if isinstance(parameters, dict):
        for key, value in parameters.items():
            if not isinstance(value, str):
                raise DataError("Schema parameters must have string values.")
            builder.parameter(key, value)
    if "default" in node:
        builder.default_value(default_to_connect(builder.build(), node["default"]))
    return builder.build()


def _builder(
    type_: Type, node: dict[str, Any], default_to_connect: Callable[[Schema, Any], Any]
) -> SchemaBuilder:
    if type_ is Type.ARRAY:
        items = node.get("items")
        if items is None:
            raise DataError("Array schema did not specify the element type")
        return SchemaBuilder.array(as_connect_schema(items, default_to_connect))
    if type_ is Type.MAP:
        if "keys" not in node:
            raise DataError("Map schema did not specify the key type")
        if "values" not in node:
            raise DataError("Map schema did not specify the value type")
        return SchemaBuilder.map(
            as_connect_schema(node["keys"], default_to_connect),
            as_connect_schema(node["values"], default_to_connect),
        )
    if type_ is Type.STRUCT:
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise DataError('Struct schema\'s "fields" argument is not an array.')
        builder = SchemaBuilder.struct()
        for field in fields:
            name = field.get("field") if isinstance(field, dict) else None
            if not isinstance(name, str):
                raise DataError("Struct schema's field name not specified properly")
            builder.field(name, as_connect_schema(field, default_to_connect))
        return builder
    return SchemaBuilder.type(type_)


def contains_decimal(schema: Schema | None) -> bool:
    """Whether ``schema`` has a Decimal anywhere (its JSON numbers then need exact parsing)."""
    if schema is None:
        return False
    if schema.name == "org.apache.kafka.connect.data.Decimal":
        return True
    if schema.type is Type.ARRAY:
        return contains_decimal(schema.value_schema)
    if schema.type is Type.MAP:
        return contains_decimal(schema.key_schema) or contains_decimal(schema.value_schema)
    if schema.type is Type.STRUCT:
        return any(contains_decimal(f.schema) for f in schema.fields)
    return False
