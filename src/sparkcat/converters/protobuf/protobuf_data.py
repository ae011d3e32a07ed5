"""Connect schemas <-> protobuf descriptors, as Confluent's ``ProtobufData`` maps them.

Writing: a STRUCT becomes a proto3 file holding one message (package = the schema name's
namespace), nested structs nested messages, arrays ``repeated`` fields, maps ``*Entry``
messages, INT8/INT16 ``int32`` with the ``connect.type`` parameter in Confluent's
``(confluent.field_meta)`` option, Decimal ``confluent.type.Decimal``, Date
``google.type.Date``, Time ``google.type.TimeOfDay``, Timestamp ``google.protobuf.Timestamp``,
STRUCTs named ``io.confluent.connect.protobuf.Union.<name>`` oneofs, and STRINGs with
``io.confluent.connect.protobuf.Enum`` parameters enums. Field numbers come from the
``io.confluent.connect.protobuf.Tag`` parameter, else count up from 1.

Reading is the reverse, building the value readers of :mod:`._to_connect` on the way.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import descriptor_pb2

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf import _builtins as builtins
from sparkcat.converters.protobuf import _to_connect as rd

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
ENUM = NAMESPACE + ".Enum"
ENUM_PREFIX = ENUM + "."
UNION = NAMESPACE + ".Union"
UNION_PREFIX = UNION + "."
TAG = NAMESPACE + ".Tag"
CONNECT_PRECISION_PROP = "connect.decimal.precision"
CONNECT_TYPE_PROP = "connect.type"

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    Type.INT8: _F.TYPE_INT32,
    Type.INT16: _F.TYPE_INT32,
    Type.INT32: _F.TYPE_INT32,
    Type.INT64: _F.TYPE_INT64,
    Type.FLOAT32: _F.TYPE_FLOAT,
    Type.FLOAT64: _F.TYPE_DOUBLE,
    Type.BOOLEAN: _F.TYPE_BOOL,
    Type.STRING: _F.TYPE_STRING,
    Type.BYTES: _F.TYPE_BYTES,
}
_WRAPPERS = {
    Type.INT8: "Int32Value",
    Type.INT16: "Int32Value",
    Type.INT32: "Int32Value",
    Type.INT64: "Int64Value",
    Type.FLOAT32: "FloatValue",
    Type.FLOAT64: "DoubleValue",
    Type.BOOLEAN: "BoolValue",
    Type.STRING: "StringValue",
    Type.BYTES: "BytesValue",
}
_LOGICAL = {
    Decimal.LOGICAL_NAME: (builtins.DECIMAL_TYPE, builtins.DECIMAL_LOCATION),
    Date.LOGICAL_NAME: (builtins.DATE_TYPE, builtins.DATE_LOCATION),
    Time.LOGICAL_NAME: (builtins.TIME_TYPE, builtins.TIME_LOCATION),
    Timestamp.LOGICAL_NAME: (builtins.TIMESTAMP_TYPE, builtins.TIMESTAMP_LOCATION),
}
# Types a protobuf map key may have
_MAP_KEYS = {_F.TYPE_INT32, _F.TYPE_INT64, _F.TYPE_BOOL, _F.TYPE_STRING}
_NAME_START = re.compile(r"^[A-Za-z]")
_NAME_INVALID = re.compile(r"[^A-Za-z0-9_]")


@dataclasses.dataclass(frozen=True, slots=True)
class DataOptions:
    """The mapping switches of ``ProtobufDataConfig`` (see :mod:`.config`)."""

    enhanced_schema_support: bool = False
    generate_index_for_unions: bool = True
    scrub_invalid_names: bool = False
    int_for_enums: bool = False
    optional_for_nullables: bool = False
    wrapper_for_nullables: bool = False
    wrapper_for_raw_primitives: bool = True
    generate_struct_for_nulls: bool = False


def scrub_name(name: str) -> str:
    """Confluent's ``doScrubName``: URL-encode, prefix ``x`` unless a letter leads, then
    anything but ``[A-Za-z0-9_]`` becomes ``_``."""
    encoded = urllib.parse.quote_plus(name, safe="*")
    if not _NAME_START.match(encoded):
        encoded = "x" + encoded
    return _NAME_INVALID.sub("_", encoded)


def split_name(full_name: str) -> tuple[str | None, str]:
    namespace, dot, name = full_name.rpartition(".")
    return (namespace if dot else None), name


def to_map_entry(name: str) -> str:
    """protoc's entry message name of map field ``name`` (``tag_counts`` -> ``TagCountsEntry``)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Entry"


def to_map_field(entry: str) -> str:
    """Confluent's map schema name of an entry message (``TagCountsEntry`` -> ``tag_counts``)."""
    base = entry[: -len("Entry")] if entry.endswith("Entry") else entry
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()


def is_union(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and (schema.name or "").startswith(UNION_PREFIX)


def wraps(options: DataOptions, schema: Schema) -> bool:
    """Whether ``schema`` (a primitive) is written as a google.protobuf wrapper message."""
    return (
        options.wrapper_for_nullables
        and schema.optional
        and schema.type in _WRAPPERS
        and schema.name not in _LOGICAL
        and ENUM not in (schema.parameters or {})
    )


def enum_numbers(schema: Schema) -> dict[str, int]:
    params = schema.parameters or {}
    return {k[len(ENUM_PREFIX) :]: int(v) for k, v in params.items() if k.startswith(ENUM_PREFIX)}


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
        if schema.type is not Type.STRUCT:
            raise DataError(f"Unsupported root schema of type {schema.type}")
        full = self.name_or_default(schema.name)
        namespace, short = split_name(full)
        short = self.name(short)
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
        logical = _LOGICAL.get(schema.name) if schema.name else None
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
        if wraps(self.options, schema):
            self.depend(builtins.WRAPPER_LOCATION)
            return _F.TYPE_MESSAGE, f".google.protobuf.{_WRAPPERS[kind]}"
        if kind in _SCALARS:
            return _SCALARS[kind], ""
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
            key.type in _MAP_KEYS
            and key.label != _F.LABEL_REPEATED
            and value.label != _F.LABEL_REPEATED
            and not key.HasField("options")
        ):
            entry.options.map_entry = True
        return full


Deferred = Callable[[Schema], "rd.Convert | None"]
"""A value reader still waiting for its final schema (a struct's readers build Structs of it)."""


def _ready(convert: rd.Convert | None) -> Deferred:
    return lambda schema: convert


_LOGICAL_MESSAGES = {message for message, _ in _LOGICAL.values()}
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


class _ToConnect:
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
            return SchemaBuilder.int32(), _ready(None)
        if kind in _INT64_TYPES:
            return SchemaBuilder.int64(), _ready(None)
        if kind in (_F.TYPE_UINT64, _F.TYPE_FIXED64):
            return SchemaBuilder.int64(), _ready(rd.signed(64))
        if kind in _PRIMITIVES:
            return _PRIMITIVES[kind](), _ready(None)
        if kind == _F.TYPE_ENUM:
            return self.enum(field.type_name)
        if kind != _F.TYPE_MESSAGE:
            raise DataError(f"Unsupported Protobuf field type {kind} of field {field.name}")
        return self.message_type(field.type_name, params)

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
        return _ToConnect(self.options, files).root(message_name, version)
