"""Connect data <-> Spark values (no JVM: pyspark's type objects only)."""

from __future__ import annotations

import datetime
import decimal

import pytest
from pyspark.sql import types as T

from sparkcat.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from sparkcat.api.errors import DataError
from sparkcat.engine import connect_types as ct

UTC = datetime.UTC


def _order_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("price", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("at", Timestamp.SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
        .build()
    )


def test_connect_schema_to_spark_type() -> None:
    assert ct.spark_type(_order_schema()) == T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("price", T.DecimalType(38, 2)),
            T.StructField("day", T.DateType()),
            T.StructField("at", T.TimestampType()),
            T.StructField("tags", T.ArrayType(T.StringType())),
            T.StructField("attrs", T.MapType(T.StringType(), T.IntegerType())),
            T.StructField("blob", T.BinaryType()),
        ]
    )
    assert ct.spark_type(None) == T.StringType()
    assert ct.spark_type(Time.SCHEMA) == T.StringType()


def test_struct_value_to_spark_row() -> None:
    schema = _order_schema()
    at = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    struct = (
        Struct(schema)
        .put("id", 7)
        .put("price", decimal.Decimal("9.50"))
        .put("day", datetime.date(2026, 11, 25))
        .put("at", at)
        .put("tags", ["a", "b"])
        .put("attrs", {"x": 1})
    )
    row = ct.to_spark(struct, ct.spark_type(schema))
    assert row == (7, decimal.Decimal("9.50"), datetime.date(2026, 11, 25), at, ["a", "b"],
                   {"x": 1}, None)  # fmt: skip


def test_values_follow_the_column_type_not_the_record() -> None:
    assert ct.to_spark({"a": 1, "b": [1, 2]}, T.StringType()) == '{"a":1,"b":[1,2]}'
    assert ct.to_spark(5, T.StringType()) == "5"
    assert ct.to_spark({"id": 3}, T.StructType([T.StructField("id", T.LongType())])) == (3,)
    assert ct.to_spark(0, T.TimestampType()) == datetime.datetime(1970, 1, 1, tzinfo=UTC)
    with pytest.raises(DataError, match="does not fit a column of type array<int>"):
        ct.to_spark("x", T.ArrayType(T.IntegerType()))


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (T.IntegerType(), Schema.OPTIONAL_INT32_SCHEMA),
        (T.StringType(), Schema.OPTIONAL_STRING_SCHEMA),
        (T.DoubleType(), Schema.OPTIONAL_FLOAT64_SCHEMA),
        (T.DecimalType(10, 3), Decimal.builder(3).optional().build()),
        (T.TimestampType(), Timestamp.builder().optional().build()),
    ],
)
def test_spark_type_to_connect_schema(dtype: T.DataType, expected: Schema) -> None:
    assert ct.connect_schema(dtype) == expected


def test_row_to_connect_struct_round_trips() -> None:
    dtype = T.StructType(
        [
            T.StructField("n", T.IntegerType()),
            T.StructField("inner", T.StructType([T.StructField("s", T.StringType())])),
            T.StructField("m", T.MapType(T.StringType(), T.DoubleType())),
        ]
    )
    schema = ct.connect_schema(dtype)
    value = ct.to_connect((1, ("x",), {"k": 2.0}), dtype, schema)
    assert isinstance(value, Struct)
    assert value.get("n") == 1
    assert value.get("inner").get("s") == "x"
    assert ct.to_spark(value, ct.spark_type(schema)) == (1, ("x",), {"k": 2.0})


def test_unsupported_spark_type() -> None:
    with pytest.raises(DataError, match="No Connect schema"):
        ct.connect_schema(T.NullType())
