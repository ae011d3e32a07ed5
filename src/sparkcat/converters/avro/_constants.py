"""Names and properties of Confluent's ``AvroData`` (shared by both directions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Date, Decimal, Schema, Time, Timestamp, Type

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = NAMESPACE + "." + DEFAULT_SCHEMA_NAME
MAP_ENTRY_TYPE_NAME = "MapEntry"
CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = NAMESPACE + ".record.doc"
AVRO_FIELD_DOC_PREFIX_PROP = NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = NAMESPACE + ".field.default"
AVRO_ENUM_DOC_PREFIX_PROP = NAMESPACE + ".enum.doc."
AVRO_ENUM_DEFAULT_PREFIX_PROP = NAMESPACE + ".enum.default."
AVRO_TYPE_ENUM = NAMESPACE + ".Enum"
AVRO_TYPE_UNION = NAMESPACE + ".Union"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
DECIMAL_PRECISION_DEFAULT = 64
AVRO_PROP = "avro"

LOGICAL_TYPES = {
    Decimal.LOGICAL_NAME: "decimal",
    Date.LOGICAL_NAME: "date",
    Time.LOGICAL_NAME: "time-millis",
    Timestamp.LOGICAL_NAME: "timestamp-millis",
}
# The one Connect -> Avro type table of the package (schemas, defaults and union branches).
PRIMITIVES = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
# Connect logical values <-> the int/long/bytes Avro holds them as.
LOGICAL_TO_AVRO: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.from_logical,
    Date.LOGICAL_NAME: Date.from_logical,
    Time.LOGICAL_NAME: Time.from_logical,
    Timestamp.LOGICAL_NAME: Timestamp.from_logical,
}
LOGICAL_TO_CONNECT: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.to_logical,
    Date.LOGICAL_NAME: Date.to_logical,
    Time.LOGICAL_NAME: Time.to_logical,
    Timestamp.LOGICAL_NAME: Timestamp.to_logical,
}
CONNECT_TYPE_NAMES = {Type.INT8: "int8", Type.INT16: "int16"}
NON_AVRO_TYPES = {"int8": Type.INT8, "int16": Type.INT16}


def split_name(full_name: str) -> tuple[str | None, str]:
    """``(namespace or None, name)`` of a dotted full name."""
    namespace, dot, name = full_name.rpartition(".")
    return (namespace if dot else None), name
