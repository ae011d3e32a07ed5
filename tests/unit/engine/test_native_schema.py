"""Connect <-> Spark/Arrow schemas of the Spark-native connectors (pyspark's type helpers
only: no JVM)."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from sparkcat.api import Schema, SchemaBuilder, Struct
from sparkcat.api.data import Date, Decimal, Time, Timestamp
from sparkcat.connectors.storage.formats.parquet import arrow_schema
from sparkcat.engine.native_schema import (
    arrow_target,
    connect_schema,
    rows_to_structs,
    spark_schema,
    to_record_batch,
    unwritable,
)

INNER = SchemaBuilder.struct().field("x", SchemaBuilder.int32().build()).build()
ORDER = (
    SchemaBuilder.struct()
    .field("id", SchemaBuilder.int64().build())
    .field("name", SchemaBuilder.string().optional().build())
    .field("tags", SchemaBuilder.array(SchemaBuilder.string().build()).optional().build())
    .field(
        "attrs",
        SchemaBuilder.map(SchemaBuilder.string().build(), SchemaBuilder.int32().build())
        .optional()
        .build(),
    )
    .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("inner", INNER)
    .build()
)


def order(i: int) -> Struct:
    return (
        Struct(ORDER)
        .put("id", i)
        .put("name", f"n{i}")
        .put("tags", ["a", "b"])
        .put("attrs", {"k": i})
        .put("price", decimal.Decimal("12.34"))
        .put("day", dt.date(2024, 2, 29))
        .put("at", dt.time(1, 2, 3, 4000))
        .put("ts", dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC))
        .put("inner", Struct(INNER).put("x", 7))
    )


def test_struct_fields_become_columns_with_logical_types() -> None:
    assert spark_schema(ORDER).simpleString() == (
        "struct<id:bigint,name:string,tags:array<string>,attrs:map<string,int>,"
        "price:decimal(10,2),day:date,at:int,ts:timestamp,inner:struct<x:int>>"
    )
    assert [f.nullable for f in spark_schema(ORDER).fields][:2] == [False, True]


def test_the_spark_and_storage_sinks_write_the_same_types() -> None:
    """The engine has its own Connect -> Arrow table (it imports no connector): it must
    give the storage sink's Parquet types, Time aside (Spark has no time type)."""
    builder = SchemaBuilder.struct()
    for field in ORDER.fields:
        if field.schema.name != Time.LOGICAL_NAME:
            builder.field(field.name, field.schema)
    without_time = builder.build()
    storage = from_arrow_schema(arrow_schema(without_time), prefer_timestamp_ntz=False)
    assert spark_schema(without_time).simpleString() == storage.simpleString()


def test_a_non_struct_value_is_one_value_column() -> None:
    assert spark_schema(SchemaBuilder.string().build()).simpleString() == "struct<value:string>"


def test_records_become_an_arrow_batch_of_the_target() -> None:
    target = arrow_target(spark_schema(ORDER))
    batch = to_record_batch(ORDER, [order(1), order(2)], target)
    assert batch.schema == target
    row = batch.to_pylist()[1]
    assert row["id"] == 2 and row["attrs"] == [("k", 2)] and row["inner"] == {"x": 7}
    assert row["price"] == decimal.Decimal("12.34") and row["at"] == 3723004
    assert row["ts"] == dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC)


def test_schemaless_maps_under_a_declared_schema() -> None:
    target = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    batch = to_record_batch(None, [{"id": 1, "name": "a"}, {"id": 2}], target)
    assert batch.to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]


def struct_keyed_map() -> Schema:
    keyed = SchemaBuilder.map(INNER, SchemaBuilder.string().build()).build()
    return (
        SchemaBuilder.struct()
        .field("id", SchemaBuilder.int64().build())
        .field("lookup", keyed)
        .build()
    )


def test_map_with_struct_keys_is_refused_naming_the_field() -> None:
    assert unwritable(struct_keyed_map(), "parquet") == (
        "field 'lookup' is a map with struct keys, which the Spark parquet writer cannot "
        "take: map keys must be of a primitive type"
    )
    assert unwritable(ORDER, "parquet") is None


@pytest.mark.parametrize("fmt", ["csv", "text"])
def test_flat_formats_refuse_nested_columns(fmt: str) -> None:
    assert unwritable(ORDER, fmt) == (
        f"field 'tags' is of type array: the Spark {fmt} writer takes only atomic columns"
    )


def test_spark_rows_come_back_as_structs() -> None:
    target = arrow_target(spark_schema(ORDER))
    table = pa.Table.from_batches([to_record_batch(ORDER, [order(5)], target)])
    schema = connect_schema(spark_schema(ORDER), name="orders")
    assert schema.name == "orders" and schema.field("ts").schema.name == Timestamp.LOGICAL_NAME
    (value,) = rows_to_structs(schema, table)
    assert value.get("id") == 5 and value.get("attrs") == {"k": 5}
    assert value.get("price") == decimal.Decimal("12.34")
    assert value.get("inner").get("x") == 7
    assert value.get("day") == dt.date(2024, 2, 29)
