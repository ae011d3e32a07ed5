"""Names, parameters and rules both directions of the Connect <-> protobuf mapping share
(Confluent's ``ProtobufData`` constants and its naming helpers)."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse

from google.protobuf import descriptor_pb2

from sparkcat.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sparkcat.converters.protobuf import _builtins as builtins

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
ENUM = NAMESPACE + ".Enum"
ENUM_PREFIX = ENUM + "."
UNION = NAMESPACE + ".Union"
UNION_PREFIX = UNION + "."
TAG = NAMESPACE + ".Tag"
TYPE = NAMESPACE + ".Type"  # the protobuf type of an INT32/INT64 that is not int32/int64
CONNECT_PRECISION_PROP = "connect.decimal.precision"
CONNECT_TYPE_PROP = "connect.type"

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    Type.INT8: F.TYPE_INT32,
    Type.INT16: F.TYPE_INT32,
    Type.INT32: F.TYPE_INT32,
    Type.INT64: F.TYPE_INT64,
    Type.FLOAT32: F.TYPE_FLOAT,
    Type.FLOAT64: F.TYPE_DOUBLE,
    Type.BOOLEAN: F.TYPE_BOOL,
    Type.STRING: F.TYPE_STRING,
    Type.BYTES: F.TYPE_BYTES,
}
WRAPPERS = {
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
LOGICAL = {
    Decimal.LOGICAL_NAME: (builtins.DECIMAL_TYPE, builtins.DECIMAL_LOCATION),
    Date.LOGICAL_NAME: (builtins.DATE_TYPE, builtins.DATE_LOCATION),
    Time.LOGICAL_NAME: (builtins.TIME_TYPE, builtins.TIME_LOCATION),
    Timestamp.LOGICAL_NAME: (builtins.TIMESTAMP_TYPE, builtins.TIMESTAMP_LOCATION),
}
# Types a protobuf map key may have
MAP_KEYS = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_BOOL, F.TYPE_STRING}
_NAME_VALID = re.compile(r"[A-Za-z0-9_]+")
_NAME_BAD_START = re.compile(r"[0-9_]")
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
    """Confluent's ``doScrubName``: a valid name stays; else URL-encode it (as Java's
    ``URLEncoder``), prefix ``x`` if a digit or ``_`` leads, and turn anything but
    ``[A-Za-z0-9_]`` into ``_``."""
    if not name or (_NAME_VALID.fullmatch(name) and not _NAME_BAD_START.match(name)):
        return name
    encoded = urllib.parse.quote_plus(name, safe="*").replace("~", "%7E")
    if _NAME_BAD_START.match(encoded):
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


# Integer types kept in the Type parameter, and the wrapper of each when nullable
INT_TYPES = {
    "sint32": (F.TYPE_SINT32, "Int32Value"),
    "sfixed32": (F.TYPE_SFIXED32, "Int32Value"),
    "uint32": (F.TYPE_UINT32, "UInt32Value"),
    "fixed32": (F.TYPE_FIXED32, "UInt32Value"),
    "uint64": (F.TYPE_UINT64, "UInt64Value"),
    "fixed64": (F.TYPE_FIXED64, "UInt64Value"),
    "sint64": (F.TYPE_SINT64, "Int64Value"),
    "sfixed64": (F.TYPE_SFIXED64, "Int64Value"),
}
INT_TYPE_NAMES = {kind: name for name, (kind, _) in INT_TYPES.items()}


def int_type(schema: Schema) -> str | None:
    """The protobuf integer type an INT32/INT64 schema asks for (its Type parameter)."""
    if schema.type not in (Type.INT32, Type.INT64):
        return None
    name = (schema.parameters or {}).get(TYPE)
    return name if name in INT_TYPES else None


def is_union(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and (schema.name or "").startswith(UNION_PREFIX)


def wraps(options: DataOptions, schema: Schema) -> bool:
    """Whether ``schema`` (a primitive) is written as a google.protobuf wrapper message."""
    return (
        options.wrapper_for_nullables
        and schema.optional
        and schema.type in WRAPPERS
        and schema.name not in LOGICAL
        and ENUM not in (schema.parameters or {})
    )


def enum_numbers(schema: Schema) -> dict[str, int]:
    params = schema.parameters or {}
    return {k[len(ENUM_PREFIX) :]: int(v) for k, v in params.items() if k.startswith(ENUM_PREFIX)}
