"""Connect data <-> Spark rows, for the embedded API's ``read_stream``/``write_stream``.

Connect schema -> Spark type (:func:`spark_type`): INT8..INT64 -> Byte..Long, FLOAT32/64 ->
Float/Double, BOOLEAN, STRING, BYTES -> Binary, ARRAY, MAP and STRUCT recursively; the
logical types Decimal -> ``decimal(38, scale)``, Date -> Date, Timestamp -> Timestamp, Time
-> String (``HH:MM:SS.fff``); a schemaless value -> String holding its JSON text.
:func:`to_spark` converts a value into the Spark type *of the column* (not of the record's
schema), so a record whose schema differs from the one the column was built from still
lands in the column, or fails with a ``DataError`` naming both.

Spark type -> Connect schema (:func:`connect_schema`) is the inverse, every schema optional
(Spark columns are nullable); TimestampNTZ maps to Timestamp too. :func:`to_connect` turns
a value of a Row into the Connect value (``Struct`` for a struct).
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Mapping
from typing import Any

import orjson
from pyspark.sql import types as T

from sparkcat.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError

_UTC = datetime.UTC
_EPOCH_DATE = datetime.date(1970, 1, 1)

_PRIMITIVES: dict[Type, T.DataType] = {
    Type.INT8: T.ByteType(),
    Type.INT16: T.ShortType(),
    Type.INT32: T.IntegerType(),
    Type.INT64: T.LongType(),
    Type.FLOAT32: T.FloatType(),
    Type.FLOAT64: T.DoubleType(),
    Type.BOOLEAN: T.BooleanType(),
    Type.STRING: T.StringType(),
    Type.BYTES: T.BinaryType(),
}
_BUILDERS: dict[type[T.DataType], Any] = {
    T.ByteType: SchemaBuilder.int8,
    T.ShortType: SchemaBuilder.int16,
    T.IntegerType: SchemaBuilder.int32,
    T.LongType: SchemaBuilder.int64,
    T.FloatType: SchemaBuilder.float32,
    T.DoubleType: SchemaBuilder.float64,
    T.BooleanType: SchemaBuilder.boolean,
    T.StringType: SchemaBuilder.string,
    T.BinaryType: SchemaBuilder.bytes,
}


# -- Connect -> Spark ---------------------------------------------------------------------
def spark_type(schema: Schema | None) -> T.DataType:
    """The Spark type of values of ``schema`` (``None``: schemaless, JSON text)."""
    if schema is None:
        return T.StringType()
    if schema.name == Decimal.LOGICAL_NAME:
        return T.DecimalType(38, int((schema.parameters or {}).get(Decimal.SCALE_FIELD, "0")))
    if schema.name == Date.LOGICAL_NAME:
        return T.DateType()
    if schema.name == Timestamp.LOGICAL_NAME:
        return T.TimestampType()
    if schema.name == Time.LOGICAL_NAME:
        return T.StringType()
    if schema.type is Type.ARRAY:
        return T.ArrayType(spark_type(schema.value_schema), True)
    if schema.type is Type.MAP:
        return T.MapType(spark_type(schema.key_schema), spark_type(schema.value_schema), True)
    if schema.type is Type.STRUCT:
        return T.StructType([T.StructField(f.name, spark_type(f.schema), True)
                             for f in schema.fields])  # fmt: skip
    return _PRIMITIVES[schema.type]


def to_spark(value: Any, dtype: T.DataType) -> Any:
    """``value`` (a Connect value) as a Python value of Spark type ``dtype``."""
    if value is None:
        return None
    if isinstance(dtype, T.StructType):
        return _struct_to_spark(value, dtype)
    if isinstance(dtype, T.ArrayType):
        return [to_spark(item, dtype.elementType) for item in _expect(value, (list, tuple), dtype)]
    if isinstance(dtype, T.MapType):
        items = _expect(value, (Mapping,), dtype).items()
        return {to_spark(k, dtype.keyType): to_spark(v, dtype.valueType) for k, v in items}
    if isinstance(dtype, T.StringType):
        if isinstance(value, datetime.time):
            return value.isoformat(timespec="milliseconds")
        return value if isinstance(value, str) else json_text(value)
    if isinstance(dtype, T.BinaryType):
        return bytes(value) if isinstance(value, bytes | bytearray) else str(value).encode()
    return _scalar_to_spark(value, dtype)


def _expect(value: Any, kinds: tuple[type, ...], dtype: T.DataType) -> Any:
    if not isinstance(value, kinds):
        raise DataError(f"A {type(value).__name__} value does not fit a column of type "
                        f"{dtype.simpleString()}")  # fmt: skip
    return value


def _struct_to_spark(value: Any, dtype: T.StructType) -> tuple[Any, ...]:
    if isinstance(value, Struct):
        schema = value.schema
        return tuple(
            to_spark(value.get(f.name) if schema.field(f.name) else None, f.dataType)
            for f in dtype.fields
        )
    data = _expect(value, (Mapping,), dtype)
    return tuple(to_spark(data.get(f.name), f.dataType) for f in dtype.fields)


def _scalar_to_spark(value: Any, dtype: T.DataType) -> Any:
    if isinstance(dtype, T.TimestampType | T.TimestampNTZType):
        if isinstance(value, datetime.datetime):
            return value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
        return datetime.datetime.fromtimestamp(int(value) / 1000.0, _UTC)
    if isinstance(dtype, T.DateType):
        if isinstance(value, datetime.date):
            return value
        return _EPOCH_DATE + datetime.timedelta(days=int(value))
    if isinstance(dtype, T.DecimalType):
        return decimal.Decimal(value)
    if isinstance(dtype, T.BooleanType):
        return bool(value)
    if isinstance(dtype, T.FloatType | T.DoubleType):
        return float(value)
    if isinstance(dtype, T.IntegralType):
        return int(value)
    raise DataError(f"Unsupported column type {dtype.simpleString()}")


def json_text(value: Any) -> str:
    """The JSON text of a Connect value (Structs as objects, bytes as base64)."""
    return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _json_default(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: value.get(f.name) for f in value.schema.fields}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# -- Spark -> Connect ---------------------------------------------------------------------
def connect_schema(dtype: T.DataType) -> Schema:
    """The (optional) Connect schema of values of Spark type ``dtype``."""
    builder: SchemaBuilder
    if isinstance(dtype, T.StructType):
        builder = SchemaBuilder.struct()
        for field in dtype.fields:
            builder.field(field.name, connect_schema(field.dataType))
    elif isinstance(dtype, T.ArrayType):
        builder = SchemaBuilder.array(connect_schema(dtype.elementType))
    elif isinstance(dtype, T.MapType):
        builder = SchemaBuilder.map(connect_schema(dtype.keyType), connect_schema(dtype.valueType))
    elif isinstance(dtype, T.DecimalType):
        builder = Decimal.builder(dtype.scale)
    elif isinstance(dtype, T.DateType):
        builder = Date.builder()
    elif isinstance(dtype, T.TimestampType | T.TimestampNTZType):
        builder = Timestamp.builder()
    elif type(dtype) in _BUILDERS:
        builder = _BUILDERS[type(dtype)]()
    else:
        raise DataError(f"No Connect schema for Spark type {dtype.simpleString()}")
    return builder.optional().build()


def to_connect(value: Any, dtype: T.DataType, schema: Schema) -> Any:
    """A Row's ``value`` of Spark type ``dtype`` as a Connect value of ``schema``."""
    if value is None:
        return None
    if isinstance(dtype, T.StructType):
        struct = Struct(schema)
        for index, field in enumerate(dtype.fields):
            inner = schema.fields[index].schema
            struct.put(field.name, to_connect(value[index], field.dataType, inner))
        return struct
    if isinstance(dtype, T.ArrayType):
        items = schema.value_schema
        assert items is not None
        return [to_connect(item, dtype.elementType, items) for item in value]
    if isinstance(dtype, T.MapType):
        keys, values = schema.key_schema, schema.value_schema
        assert keys is not None and values is not None
        return {to_connect(k, dtype.keyType, keys): to_connect(v, dtype.valueType, values)
                for k, v in value.items()}  # fmt: skip
    if isinstance(dtype, T.TimestampType):
        # pyspark hands out naive datetimes in the machine's time zone.
        return value.astimezone(_UTC) if value.tzinfo is None else value
    if isinstance(dtype, T.TimestampNTZType):
        return value.replace(tzinfo=_UTC)
    if isinstance(dtype, T.BinaryType):
        return bytes(value)
    return value


__all__ = ["connect_schema", "json_text", "spark_type", "to_connect", "to_spark"]
