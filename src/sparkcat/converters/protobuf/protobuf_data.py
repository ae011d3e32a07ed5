"""Connect schemas <-> protobuf descriptors, as Confluent's ``ProtobufData`` maps them.

Writing: a STRUCT becomes a proto3 file holding one message (package = the schema name's
namespace), nested structs nested messages, arrays ``repeated`` fields, maps ``*Entry``
messages, INT8/INT16 ``int32`` with the ``connect.type`` parameter in Confluent's
``(confluent.field_meta)`` option, Decimal ``confluent.type.Decimal``, Date
``google.type.Date``, Time ``google.type.TimeOfDay``, Timestamp ``google.protobuf.Timestamp``,
STRUCTs named ``io.confluent.connect.protobuf.Union.<name>`` oneofs, and STRINGs with
``io.confluent.connect.protobuf.Enum`` parameters enums. Field numbers come from the
``io.confluent.connect.protobuf.Tag`` parameter, else count up from 1.

Reading is the reverse (:mod:`._from_descriptor`), building the value readers of
:mod:`._to_connect` on the way.
"""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf import descriptor_pb2

from sparkcat.api.data import Decimal, Schema, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf import _builtins as builtins
from sparkcat.converters.protobuf import _to_connect as rd
from sparkcat.converters.protobuf._common import (
    CONNECT_PRECISION_PROP,
    CONNECT_TYPE_PROP,
    DEFAULT_SCHEMA_NAME,
    ENUM,
    INT_TYPES,
    LOGICAL,
    MAP_KEYS,
    SCALARS,
    TAG,
    UNION_PREFIX,
    WRAPPERS,
    DataOptions,
    enum_numbers,
    int_type,
    is_union,
    scrub_name,
    split_name,
    to_map_entry,
    to_map_field,
    wraps,
)
from sparkcat.converters.protobuf._from_descriptor import ToConnect

__all__ = [
    "DataOptions",
    "ProtobufData",
    "enum_numbers",
    "is_union",
    "scrub_name",
    "split_name",
    "to_map_entry",
    "to_map_field",
    "wraps",
]

_F = descriptor_pb2.FieldDescriptorProto


class _FromConnect:
    """One Connect STRUCT -> one FileDescriptorProto."""

    def __init__(self, options: DataOptions) -> None:
        self.options = options
        self.defaults = 0
        self.dependencies: list[str] = []
        self.defined: dict[str, str] = {}  # struct schema name -> full message type name

    def name(self, name: str) -> str:
        return scrub_name(name) if self.options.scrub_invalid_names else name

    def name_or_default(self, name: str | None) -> str:
        if name:
            return name
        self.defaults += 1
        return f"{DEFAULT_SCHEMA_NAME}{self.defaults}"

    def unqualified(self, name: str | None) -> str:
        return self.name(split_name(self.name_or_default(name))[1])

    def depend(self, location: str) -> None:
        if location not in self.dependencies:
            self.dependencies.append(location)

    def file(self, schema: Schema) -> tuple[descriptor_pb2.FileDescriptorProto, str]:
        if schema.type in WRAPPERS:
            # a primitive root is its google.protobuf wrapper, in the wrappers file itself
            wrapper = WRAPPERS[schema.type]
            special = int_type(schema)
            if special:
                wrapper = INT_TYPES[special][1]
            return builtins.BUILTIN_FILES[builtins.WRAPPER_LOCATION], f"google.protobuf.{wrapper}"
        if schema.type is not Type.STRUCT:
            raise DataError(f"Unsupported root schema of type {schema.type}")
        full = self.name_or_default(schema.name)
        namespace, short = split_name(full)
        short = self.name(short)
        if namespace and self.options.scrub_invalid_names:
            namespace = ".".join(scrub_name(part) for part in namespace.split("."))
        file = descriptor_pb2.FileDescriptorProto(syntax="proto3")
        if namespace:
            file.package = namespace
        scope = f".{namespace}.{short}" if namespace else f".{short}"
        file.name = (namespace.replace(".", "/") + "/" if namespace else "") + short + ".proto"
        if schema.name:
            self.defined[schema.name] = scope
        self.message(file.message_type.add(name=short), scope, schema)
        file.dependency.extend(self.dependencies)
        return file, scope[1:]

    def message(self, message: descriptor_pb2.DescriptorProto, scope: str, schema: Schema) -> None:
        counter = 1
        synthetic: list[descriptor_pb2.FieldDescriptorProto] = []
        for field in schema.fields:
            field_schema = field.schema
            tag = (field_schema.parameters or {}).get(TAG)
            if is_union(field_schema):
                assert field_schema.name is not None
                oneof = self.name(split_name(field_schema.name[len(UNION_PREFIX) :])[1])
                message.oneof_decl.add(name=oneof)
                for member in field_schema.fields:
                    member_tag = (member.schema.parameters or {}).get(TAG)
                    number = int(member_tag) if member_tag else counter
                    counter = max(counter, number) + 1
                    proto = self.field(message, scope, member.schema, self.name(member.name))
                    proto.number = number
                    proto.oneof_index = len(message.oneof_decl) - 1
                continue
            number = int(tag) if tag else counter
            if not tag:
                counter += 1
            proto = self.field(message, scope, field_schema, self.name(field.name))
            proto.number = number
            if (
                self.options.optional_for_nullables
                and field_schema.optional
                and proto.label != _F.LABEL_REPEATED
                and proto.type != _F.TYPE_MESSAGE
            ):
                synthetic.append(proto)
        # proto3 `optional`: synthetic oneofs, declared after every real one
        for proto in synthetic:
            proto.proto3_optional = True
            proto.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name=f"_{proto.name}")

    def field(
        self,
        message: descriptor_pb2.DescriptorProto,
        scope: str,
        schema: Schema,
        name: str,
    ) -> descriptor_pb2.FieldDescriptorProto:
        proto = message.field.add(name=name, label=_F.LABEL_OPTIONAL)
        element = schema
        if schema.type is Type.ARRAY:
            proto.label = _F.LABEL_REPEATED
            assert schema.value_schema is not None
            element = schema.value_schema
            if element.type is Type.ARRAY:
                raise DataError("Array cannot be nested")
        elif schema.type is Type.MAP:
            proto.label = _F.LABEL_REPEATED
        params: dict[str, str] = {}
        proto.type, type_name = self.type_of(message, scope, element, name, params)
        if type_name:
            proto.type_name = type_name
        if params:
            proto.options.MergeFromString(builtins.meta_option(params))
        return proto

    def type_of(
        self,
        message: descriptor_pb2.DescriptorProto,
        scope: str,
        schema: Schema,
        field_name: str,
        params: dict[str, str],
    ) -> tuple[int, str]:
        logical = LOGICAL.get(schema.name) if schema.name else None
        if logical is not None:
            if schema.name == Decimal.LOGICAL_NAME:
                parameters = schema.parameters or {}
                if CONNECT_PRECISION_PROP in parameters:
                    params["precision"] = parameters[CONNECT_PRECISION_PROP]
                if Decimal.SCALE_FIELD in parameters:
                    params["scale"] = parameters[Decimal.SCALE_FIELD]
            self.depend(logical[1])
            return _F.TYPE_MESSAGE, "." + logical[0]
        kind = schema.type
        if kind in (Type.INT8, Type.INT16):
            params[CONNECT_TYPE_PROP] = "int8" if kind is Type.INT8 else "int16"
        if ENUM in (schema.parameters or {}) and kind in (Type.STRING, Type.INT32):
            return _F.TYPE_ENUM, self.enum(message, scope, schema)
        special = int_type(schema)
        if wraps(self.options, schema):
            self.depend(builtins.WRAPPER_LOCATION)
            wrapper = INT_TYPES[special][1] if special else WRAPPERS[kind]
            return _F.TYPE_MESSAGE, f".google.protobuf.{wrapper}"
        if special:
            return INT_TYPES[special][0], ""
        if kind in SCALARS:
            return SCALARS[kind], ""
        if kind is Type.MAP:
            return _F.TYPE_MESSAGE, self.map_entry(message, scope, schema, field_name)
        if kind is Type.STRUCT:
            return _F.TYPE_MESSAGE, self.struct(message, scope, schema, field_name)
        raise DataError(f"Unknown schema type: {kind}")

    def enum(self, message: descriptor_pb2.DescriptorProto, scope: str, schema: Schema) -> str:
        name = self.name(split_name((schema.parameters or {})[ENUM])[1])
        if all(e.name != name for e in message.enum_type):
            enum = message.enum_type.add(name=name)
            for symbol, number in sorted(enum_numbers(schema).items(), key=lambda kv: kv[1]):
                enum.value.add(name=symbol, number=number)
        return f"{scope}.{name}"

    def struct(
        self, message: descriptor_pb2.DescriptorProto, scope: str, schema: Schema, field_name: str
    ) -> str:
        known = self.defined.get(schema.name) if schema.name else None
        if known is not None:
            return known
        name = self.unqualified(schema.name)
        if name == field_name:
            name += "Message"  # a message type may not share its field's name
        full = f"{scope}.{name}"
        if schema.name:
            self.defined[schema.name] = full
        self.message(message.nested_type.add(name=name), full, schema)
        return full

    def map_entry(
        self, message: descriptor_pb2.DescriptorProto, scope: str, schema: Schema, field_name: str
    ) -> str:
        name = to_map_entry(self.unqualified(schema.name) if schema.name else field_name)
        entry = message.nested_type.add(name=name)
        full = f"{scope}.{name}"
        assert schema.key_schema is not None and schema.value_schema is not None
        key = self.field(entry, full, schema.key_schema, "key")
        key.number = 1
        value = self.field(entry, full, schema.value_schema, "value")
        value.number = 2
        # A real protobuf map where protobuf allows one; otherwise (float or message keys,
        # repeated values) the same bytes as a repeated entry message, as Confluent reads both.
        if (
            key.type in MAP_KEYS
            and key.label != _F.LABEL_REPEATED
            and value.label != _F.LABEL_REPEATED
            and not key.HasField("options")
        ):
            entry.options.map_entry = True
        return full


class ProtobufData:
    """Schema mapping both ways for one converter's configuration."""

    def __init__(self, options: DataOptions | None = None) -> None:
        self.options = options or DataOptions()

    def from_connect_schema(self, schema: Schema) -> tuple[descriptor_pb2.FileDescriptorProto, str]:
        """``(file, full name of its message)`` for a STRUCT schema."""
        return _FromConnect(self.options).file(schema)

    def to_connect_schema(
        self,
        files: Iterable[descriptor_pb2.FileDescriptorProto],
        message_name: str,
        version: int | None = None,
    ) -> tuple[Schema, rd.Convert]:
        """``(Connect schema, message -> Connect value)`` of message ``message_name`` (full
        name) defined in ``files`` (the schema's file and its non-builtin dependencies)."""
        return ToConnect(self.options, files).root(message_name, version)
