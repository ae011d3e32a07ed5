"""Protobuf descriptors -> Connect schemas, as Confluent's ``ProtobufData.toConnectSchema``
maps them, building the value readers of :mod:`._to_connect` on the way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import descriptor_pb2

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf import _builtins as builtins
from sparkcat.converters.protobuf import _to_connect as rd
from sparkcat.converters.protobuf._common import (
    CONNECT_PRECISION_PROP,
    CONNECT_TYPE_PROP,
    ENUM,
    ENUM_PREFIX,
    INT_TYPE_NAMES,
    LOGICAL,
    TAG,
    TYPE,
    UNION_PREFIX,
    DataOptions,
    to_map_field,
)

_F = descriptor_pb2.FieldDescriptorProto
Deferred = Callable[[Schema], "rd.Convert | None"]
"""A value reader still waiting for its final schema (a struct's readers build Structs of it)."""


def _ready(convert: rd.Convert | None) -> Deferred:
    return lambda schema: convert


_LOGICAL_MESSAGES = {message for message, _ in LOGICAL.values()}
_INT64_TYPES = {_F.TYPE_UINT32, _F.TYPE_FIXED32, _F.TYPE_INT64, _F.TYPE_SINT64, _F.TYPE_SFIXED64}
_PRIMITIVES = {
    _F.TYPE_FLOAT: SchemaBuilder.float32,
    _F.TYPE_DOUBLE: SchemaBuilder.float64,
    _F.TYPE_BOOL: SchemaBuilder.boolean,
    _F.TYPE_STRING: SchemaBuilder.string,
    _F.TYPE_BYTES: SchemaBuilder.bytes,
}
_WRAPPED = {
    "DoubleValue": SchemaBuilder.float64,
    "FloatValue": SchemaBuilder.float32,
    "Int64Value": SchemaBuilder.int64,
    "UInt64Value": SchemaBuilder.int64,
    "Int32Value": SchemaBuilder.int32,
    "UInt32Value": SchemaBuilder.int64,
    "BoolValue": SchemaBuilder.boolean,
    "StringValue": SchemaBuilder.string,
    "BytesValue": SchemaBuilder.bytes,
}


class ToConnect:
    """Descriptors (as FileDescriptorProtos) -> a Connect schema and its value reader."""

    def __init__(
        self, options: DataOptions, files: Iterable[descriptor_pb2.FileDescriptorProto]
    ) -> None:
        self.options = options
        self.messages: dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        for file in [*builtins.BUILTIN_FILES.values(), *files]:
            self._index(
                f".{file.package}" if file.package else "", file.message_type, file.enum_type
            )
        self.stack: list[str] = []

    def _index(self, prefix: str, messages: Iterable[Any], enums: Iterable[Any]) -> None:
        for enum in enums:
            self.enums[f"{prefix}.{enum.name}"] = enum
        for message in messages:
            full = f"{prefix}.{message.name}"
            self.messages[full] = message
            self._index(full, message.nested_type, message.enum_type)

    def message(self, type_name: str) -> descriptor_pb2.DescriptorProto:
        found = self.messages.get(type_name)
        if found is None:
            raise DataError(
                f"Protobuf message type {type_name.lstrip('.')} not found in the schema"
            )
        return found

    def root(self, name: str, version: int | None) -> tuple[Schema, rd.Convert]:
        if self.options.wrapper_for_raw_primitives and name in builtins.WRAPPER_TYPES:
            short = builtins.WRAPPER_TYPES[name]
            schema = _WRAPPED[short]().optional().build()
            inner = rd.signed(64) if short == "UInt64Value" else None
            return schema, rd.wrapped(inner)
        builder, reads = self.struct("." + name, self.message("." + name))
        if version is not None:
            builder.version(version)
        schema = builder.build()
        return schema, rd.struct_reader(schema, reads)

    def struct(
        self, full: str, message: descriptor_pb2.DescriptorProto
    ) -> tuple[SchemaBuilder, list[Any]]:
        if full in self.stack:
            raise DataError(f"Recursive Protobuf message {full[1:]} is not supported")
        self.stack.append(full)
        enhanced = self.options.enhanced_schema_support
        builder = SchemaBuilder.struct().name(full[1:] if enhanced else message.name)
        reads: list[Any] = []
        for index, oneof in enumerate(message.oneof_decl):
            members = [
                f
                for f in message.field
                if f.HasField("oneof_index") and f.oneof_index == index and not f.proto3_optional
            ]
            if not members:
                continue  # the synthetic oneof of a proto3 `optional` field
            union = SchemaBuilder.struct().optional()
            union.name(UNION_PREFIX + (f"{full[1:]}.{oneof.name}" if enhanced else oneof.name))
            deferred = []
            for member in members:
                schema, later, _ = self.field(member)
                union.field(member.name, schema)
                deferred.append(later(schema))
            union_schema = union.build()
            name = f"{oneof.name}_{index}" if self.options.generate_index_for_unions else oneof.name
            builder.field(name, union_schema)
            mapping = {
                m.name: (i, conv) for i, (m, conv) in enumerate(zip(members, deferred, strict=True))
            }
            reads.append(rd.union_reader(oneof.name, union_schema, mapping))
        for field in message.field:
            if field.HasField("oneof_index") and not field.proto3_optional:
                continue
            schema, later, presence = self.field(field)
            builder.field(field.name, schema)
            reads.append(rd.FieldRead(field.name, later(schema), presence))
        self.stack.pop()
        return builder, reads

    def field(self, field: descriptor_pb2.FieldDescriptorProto) -> tuple[Schema, Deferred, bool]:
        """``(schema, reader factory, presence decides null)`` of one field."""
        params = (
            builtins.read_meta(field.options.SerializeToString())[1]
            if field.HasField("options")
            else {}
        )
        repeated = field.label == _F.LABEL_REPEATED
        if repeated and field.type == _F.TYPE_MESSAGE and self.is_map(field.type_name):
            return self.map(field)
        builder, later = self.single(field, params)
        is_message = field.type == _F.TYPE_MESSAGE
        presence = not repeated and (is_message or field.proto3_optional)
        if repeated:
            element = builder.optional().build()
            convert = later(element)
            builder = SchemaBuilder.array(element).optional()
            later = _ready(rd.repeated(convert))
        elif is_message and self.options.generate_struct_for_nulls and self.is_struct(field):
            presence = False  # an unset message reads as its default values
        if presence or not (
            self.options.wrapper_for_nullables or self.options.optional_for_nullables
        ):
            builder.optional()
        builder.parameter(TAG, str(field.number))
        return builder.build(), later, presence

    def is_struct(self, field: descriptor_pb2.FieldDescriptorProto) -> bool:
        """Whether a message field reads as a Connect STRUCT (not a logical type or wrapper)."""
        name = field.type_name[1:]
        if name in _LOGICAL_MESSAGES:
            return False
        return not (self.options.wrapper_for_nullables and name in builtins.WRAPPER_TYPES)

    def is_map(self, type_name: str) -> bool:
        entry = self.message(type_name)
        names = [f.name for f in entry.field]
        return entry.options.map_entry or (
            entry.name.endswith("Entry") and names == ["key", "value"]
        )

    def map(self, field: descriptor_pb2.FieldDescriptorProto) -> tuple[Schema, Deferred, bool]:
        entry = self.message(field.type_name)
        key, key_later, _ = self.field(entry.field[0])
        value, value_later, _ = self.field(entry.field[1])
        builder = SchemaBuilder.map(key, value).name(to_map_field(entry.name)).optional()
        builder.parameter(TAG, str(field.number))
        convert = rd.map_reader(key_later(key), value_later(value), not entry.options.map_entry)
        return builder.build(), _ready(convert), False

    def single(
        self, field: descriptor_pb2.FieldDescriptorProto, params: dict[str, str]
    ) -> tuple[SchemaBuilder, Deferred]:
        kind = field.type
        if kind in (_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32):
            connect_type = params.get(CONNECT_TYPE_PROP)
            if connect_type == "int8":
                return SchemaBuilder.int8(), _ready(rd.signed(8))
            if connect_type == "int16":
                return SchemaBuilder.int16(), _ready(rd.signed(16))
            return self.typed(SchemaBuilder.int32(), kind), _ready(None)
        if kind in _INT64_TYPES:
            return self.typed(SchemaBuilder.int64(), kind), _ready(None)
        if kind in (_F.TYPE_UINT64, _F.TYPE_FIXED64):
            return self.typed(SchemaBuilder.int64(), kind), _ready(rd.signed(64))
        if kind in _PRIMITIVES:
            return _PRIMITIVES[kind](), _ready(None)
        if kind == _F.TYPE_ENUM:
            return self.enum(field.type_name)
        if kind != _F.TYPE_MESSAGE:
            raise DataError(f"Unsupported Protobuf field type {kind} of field {field.name}")
        return self.message_type(field.type_name, params)

    @staticmethod
    def typed(builder: SchemaBuilder, kind: int) -> SchemaBuilder:
        """Keep a non-default integer type (``uint32``...) in the Type parameter, so that
        writing the schema back gives the same protobuf type."""
        name = INT_TYPE_NAMES.get(kind)
        return builder if name is None else builder.parameter(TYPE, name)

    def enum(self, type_name: str) -> tuple[SchemaBuilder, Deferred]:
        enum = self.enums.get(type_name)
        if enum is None:
            raise DataError(f"Protobuf enum type {type_name.lstrip('.')} not found in the schema")
        name = type_name[1:] if self.options.enhanced_schema_support else enum.name
        builder = SchemaBuilder.int32() if self.options.int_for_enums else SchemaBuilder.string()
        builder.name(name).parameter(ENUM, name)
        for value in enum.value:
            builder.parameter(ENUM_PREFIX + value.name, str(value.number))
        builder.optional()
        if self.options.int_for_enums:
            return builder, _ready(None)
        names: dict[int, str] = {}
        for value in enum.value:
            names.setdefault(value.number, value.name)
        return builder, _ready(rd.enum_names(names))

    def message_type(
        self, type_name: str, params: dict[str, str]
    ) -> tuple[SchemaBuilder, Deferred]:
        name = type_name[1:]
        if name == builtins.DECIMAL_TYPE:
            builder = Decimal.builder(int(params.get("scale", "0")))
            if "precision" in params:
                builder.parameter(CONNECT_PRECISION_PROP, params["precision"])
            return builder.optional(), _ready(rd.decimal_value)
        if name == builtins.DATE_TYPE:
            return Date.builder().optional(), _ready(rd.date_value)
        if name == builtins.TIME_TYPE:
            return Time.builder().optional(), _ready(rd.time_value)
        if name == builtins.TIMESTAMP_TYPE:
            builder = Timestamp.builder().optional()
            return builder, lambda schema: rd.timestamp_value(schema)
        if self.options.wrapper_for_nullables and name in builtins.WRAPPER_TYPES:
            short = builtins.WRAPPER_TYPES[name]
            inner = rd.signed(64) if short == "UInt64Value" else None
            return _WRAPPED[short]().optional(), _ready(rd.wrapped(inner))
        builder, reads = self.struct(type_name, self.message(type_name))
        return builder.optional(), lambda schema: rd.struct_reader(schema, reads)
