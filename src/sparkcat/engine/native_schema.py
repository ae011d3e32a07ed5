"""Connect schemas and values <-> Arrow and Spark, for the Spark-native connectors.

Sink side: a Connect value schema becomes the Spark schema of a write (Struct -> StructType
with one column per top-level field, arrays, maps, Decimal/Date/Timestamp logical types;
Connect's Time, which Spark has no type for, becomes an INT column of milliseconds of the
day), and records become Arrow record batches of that schema. The Connect -> Arrow types are
those of the storage sink's Parquet files but for Time (``tests/unit/engine/test_native_schema``
checks that the two sinks agree); they are written here because the engine imports no
connector.

Source side: a Spark schema becomes a Connect struct schema, and Arrow rows become Structs.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import types as st
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from sparkcat.api import Schema, SchemaBuilder, Struct, Type
from sparkcat.api.data import Date, Decimal, Time, Timestamp
from sparkcat.api.errors import DataError

__all__ = [
    "arrow_target",
    "connect_schema",
    "rows_to_structs",
    "spark_schema",
    "to_record_batch",
    "unwritable",
]

# Formats whose Spark writers take only flat rows of atomic values.
_FLAT_FORMATS = {"csv", "text"}


_PRIMITIVE = {
    Type.INT8: pa.int8(),
    Type.INT16: pa.int16(),
    Type.INT32: pa.int32(),
    Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(),
    Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(),
    Type.STRING: pa.string(),
    Type.BYTES: pa.binary(),
}
# Time is int32 milliseconds of the day: Spark has no time type.
_LOGICAL = {
    Date.LOGICAL_NAME: pa.date32(),
    Time.LOGICAL_NAME: pa.int32(),
    Timestamp.LOGICAL_NAME: pa.timestamp("ms", tz="UTC"),
}


def _arrow(schema: Schema) -> pa.DataType:
    """The Arrow type of values of ``schema`` in a Spark write."""
    if schema.name in _LOGICAL:
        return _LOGICAL[schema.name]
    if schema.name == Decimal.LOGICAL_NAME:
        params = schema.parameters or {}
        precision = int(params.get("connect.decimal.precision", "38"))
        return pa.decimal128(min(precision, 38), int(params.get("scale", "0")))
    if schema.type in _PRIMITIVE:
        return _PRIMITIVE[schema.type]
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return pa.list_(pa.field("element", _arrow(schema.value_schema), True))
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(_arrow(schema.key_schema), pa.field("value", _arrow(schema.value_schema)))
    return pa.struct([pa.field(f.name, _arrow(f.schema), f.schema.optional)
                      for f in schema.fields])  # fmt: skip


def spark_schema(schema: Schema) -> st.StructType:
    """The Spark schema of values of ``schema``: a struct's fields are the columns; any
    other value is one ``value`` column."""
    if schema.type is Type.STRUCT:
        fields = [pa.field(f.name, _arrow(f.schema), f.schema.optional) for f in schema.fields]
    else:
        fields = [pa.field("value", _arrow(schema), schema.optional)]
    return from_arrow_schema(pa.schema(fields), prefer_timestamp_ntz=False)


def arrow_target(schema: st.StructType) -> pa.Schema:
    """The Arrow schema Spark expects for rows of ``schema`` (batches are cast to it)."""
    return to_arrow_schema(schema, timezone="UTC")


def unwritable(schema: Schema, fmt: str, path: str = "") -> str | None:
    """Why Spark's ``fmt`` writer cannot take values of ``schema`` (naming the field), or
    ``None``. Maps need atomic keys (a struct, array or map key has no stable text form and
    most readers of the files refuse it); csv and text take atomic columns only."""
    here = path or "the value"
    if schema.type is Type.MAP:
        key = schema.key_schema
        assert key is not None and schema.value_schema is not None
        if not key.type.is_primitive:
            return (
                f"field '{here}' is a map with {key.type.value} keys, which the Spark "
                f"{fmt} writer cannot take: map keys must be of a primitive type"
            )
        return unwritable(schema.value_schema, fmt, f"{path}.value" if path else "value")
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return unwritable(schema.value_schema, fmt, f"{path}[]" if path else "element")
    if schema.type is Type.STRUCT:
        for field in schema.fields:
            name = f"{path}.{field.name}" if path else field.name
            if fmt in _FLAT_FORMATS and not field.schema.type.is_primitive:
                return f"field '{name}' is of type {field.schema.type.value}: the Spark {fmt} " \
                       "writer takes only atomic columns"  # fmt: skip
            problem = unwritable(field.schema, fmt, name)
            if problem:
                return problem
    return None


def _time_ms(value: Any) -> Any:
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    return value


def _native(schema: Schema | None, value: Any) -> Any:
    """A Connect value as nested dicts/lists, as pyarrow takes them (logical values stay
    Python objects)."""
    if isinstance(value, Struct):
        return {
            f.name: _native(f.schema, v)
            for f, v in zip(value.schema.fields, value.values, strict=True)
        }
    if schema is not None and schema.type is Type.ARRAY and value is not None:
        return [_native(schema.value_schema, v) for v in value]
    if schema is not None and schema.type is Type.MAP and value is not None:
        return {k: _native(schema.value_schema, v) for k, v in value.items()}
    return value


def _column(schema: Schema, values: list[Any]) -> list[Any]:
    if schema.name == Time.LOGICAL_NAME:
        return [_time_ms(v) for v in values]
    if schema.type.is_primitive:
        return values
    return [_native(schema, v) for v in values]


def to_record_batch(
    schema: Schema | None, values: Sequence[Any], target: pa.Schema
) -> pa.RecordBatch:
    """Connect values (Structs of ``schema``, or dicts when ``schema`` is None: schemaless
    values under a declared Spark schema) as one Arrow batch of ``target``."""
    if schema is None:
        rows = [v if isinstance(v, Mapping) else {} for v in values]
        return pa.RecordBatch.from_pylist(rows, schema=target)
    if schema.type is Type.STRUCT:
        rows = [v.values for v in values]
        arrays = [
            pa.array(_column(f.schema, [row[i] for row in rows]), type=target.field(i).type)
            for i, f in enumerate(schema.fields)
        ]
    else:
        arrays = [pa.array(_column(schema, list(values)), type=target.field(0).type)]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# -- source side: Spark -> Connect --------------------------------------------------------

_ATOMIC: dict[type, Any] = {
    st.ByteType: SchemaBuilder.int8,
    st.ShortType: SchemaBuilder.int16,
    st.IntegerType: SchemaBuilder.int32,
    st.LongType: SchemaBuilder.int64,
    st.FloatType: SchemaBuilder.float32,
    st.DoubleType: SchemaBuilder.float64,
    st.BooleanType: SchemaBuilder.boolean,
    st.StringType: SchemaBuilder.string,
    st.BinaryType: SchemaBuilder.bytes,
    st.DateType: Date.builder,
    st.TimestampType: Timestamp.builder,
    st.TimestampNTZType: Timestamp.builder,
}


def _connect(data_type: st.DataType, nullable: bool, where: str) -> Schema:
    builder: Any
    if isinstance(data_type, st.DecimalType):
        builder = Decimal.builder(data_type.scale).parameter(
            "connect.decimal.precision", str(data_type.precision)
        )
    elif type(data_type) in _ATOMIC:
        builder = _ATOMIC[type(data_type)]()
    elif isinstance(data_type, st.ArrayType):
        element = _connect(data_type.elementType, data_type.containsNull, where + "[]")
        builder = SchemaBuilder.array(element)
    elif isinstance(data_type, st.MapType):
        builder = SchemaBuilder.map(
            _connect(data_type.keyType, False, where + ".key"),
            _connect(data_type.valueType, data_type.valueContainsNull, where + ".value"),
        )
    elif isinstance(data_type, st.StructType):
        builder = SchemaBuilder.struct()
        for field in data_type.fields:
            builder.field(field.name, _connect(field.dataType, field.nullable,
                                               f"{where}.{field.name}"))  # fmt: skip
    else:
        raise DataError(f"Column '{where}' has Spark type {data_type.simpleString()}, which "
                        "has no Connect schema")  # fmt: skip
    return (builder.optional() if nullable else builder).build()  # type: ignore[no-any-return]


def connect_schema(schema: st.StructType, name: str | None = None) -> Schema:
    """The Connect struct schema of rows of a Spark schema (every field optional: Spark's
    file readers report every column nullable)."""
    builder = SchemaBuilder.struct()
    if name:
        builder.name(name)
    for field in schema.fields:
        builder.field(field.name, _connect(field.dataType, True, field.name))
    return builder.build()


def _value(schema: Schema, value: Any) -> Any:
    if value is None:
        return None
    if schema.type is Type.STRUCT and schema.name != Decimal.LOGICAL_NAME:
        return Struct.from_values(schema, [_value(f.schema, value.get(f.name))
                                           for f in schema.fields])  # fmt: skip
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return [_value(schema.value_schema, v) for v in value]
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        items = value.items() if isinstance(value, Mapping) else value
        return {_value(schema.key_schema, k): _value(schema.value_schema, v) for k, v in items}
    if schema.name == Timestamp.LOGICAL_NAME and isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if schema.name == Decimal.LOGICAL_NAME and not isinstance(value, decimal.Decimal):
        return decimal.Decimal(value)
    return value


def rows_to_structs(schema: Schema, table: pa.Table) -> list[Struct]:
    """The rows of an Arrow table as Structs of ``schema`` (from :func:`connect_schema`)."""
    return [_value(schema, row) for row in table.to_pylist()]
