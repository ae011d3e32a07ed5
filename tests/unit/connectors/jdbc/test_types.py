"""Type mapping both ways."""

from __future__ import annotations

import datetime
import decimal
import re

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
)
from sparkcat.api.errors import ConnectError
from sparkcat.connectors.jdbc.types import column_mapping, param_converter, sql_type


def mapped(sql_type_: object, *, nullable: bool = False, numeric: str = "none",
           sqlite: bool = False) -> Schema:  # fmt: skip
    mapping = column_mapping("c", sql_type_, nullable, numeric_mapping=numeric,
                             db_timezone="UTC", sqlite=sqlite)  # fmt: skip
    assert mapping is not None
    return mapping.schema


@pytest.mark.parametrize(
    ("column", "schema"),
    [
        (sa.Boolean(), BOOLEAN_SCHEMA), (mysql.TINYINT(), INT8_SCHEMA),
        (sa.SmallInteger(), INT16_SCHEMA), (sa.Integer(), INT32_SCHEMA),
        (mysql.INTEGER(unsigned=True), INT64_SCHEMA), (sa.BigInteger(), INT64_SCHEMA),
        (sa.REAL(), FLOAT32_SCHEMA), (mysql.FLOAT(), FLOAT32_SCHEMA),
        (postgresql.DOUBLE_PRECISION(), FLOAT64_SCHEMA), (mysql.DOUBLE(), FLOAT64_SCHEMA),
        (sa.Text(), STRING_SCHEMA), (sa.String(20), STRING_SCHEMA), (sa.Uuid(), STRING_SCHEMA),
        (postgresql.BYTEA(), BYTES_SCHEMA), (mysql.BLOB(), BYTES_SCHEMA),
        (sa.Date(), Date.SCHEMA), (sa.Time(), Time.SCHEMA), (sa.DateTime(), Timestamp.SCHEMA),
        (sa.Numeric(10, 2), Decimal.schema(2)),
    ],
)  # fmt: skip
def test_database_types_map_to_connect_schemas(column: object, schema: Schema) -> None:
    assert mapped(column) == schema


def test_nullable_columns_are_optional() -> None:
    assert mapped(sa.Integer(), nullable=True).optional


def test_numeric_mapping() -> None:
    assert mapped(sa.Numeric(4, 0), numeric="best_fit") == INT16_SCHEMA
    assert mapped(sa.Numeric(18, 0), numeric="precision_only") == INT64_SCHEMA
    assert mapped(sa.Numeric(10, 2), numeric="best_fit") == FLOAT64_SCHEMA
    assert mapped(sa.Numeric(10, 2), numeric="precision_only") == Decimal.schema(2)
    assert mapped(sa.Numeric(30, 2), numeric="best_fit") == Decimal.schema(2)
    assert mapped(sa.Numeric(30, 2), numeric="best_fit_eager_double") == FLOAT64_SCHEMA


def test_unsupported_types_are_skipped() -> None:
    mapping = column_mapping("c", postgresql.INTERVAL(), False, numeric_mapping="none",
                             db_timezone="UTC")  # fmt: skip
    assert mapping is None


def test_values_are_converted_to_connect_values() -> None:
    ts = column_mapping("c", sa.DateTime(), True, numeric_mapping="none",
                        db_timezone="Europe/Paris")  # fmt: skip
    assert ts is not None and ts.convert is not None
    assert ts.convert(datetime.datetime(2024, 7, 1, 12)) == datetime.datetime(
        2024, 7, 1, 10, tzinfo=datetime.UTC
    )
    time = column_mapping("c", sa.Time(), True, numeric_mapping="none", db_timezone="UTC")
    assert time is not None and time.convert is not None
    assert time.convert(datetime.timedelta(hours=1, seconds=2, microseconds=3000)) == (
        datetime.time(1, 0, 2, 3000)
    )
    dec = column_mapping("c", sa.Numeric(8, 2), True, numeric_mapping="none",
                         db_timezone="UTC", sqlite=True)  # fmt: skip
    assert dec is not None and dec.convert is not None
    assert str(dec.convert(1.5)) == "1.50"


@pytest.mark.parametrize(
    ("schema", "pg", "my", "lite"),
    [
        (INT8_SCHEMA, "SMALLINT", "TINYINT", "INTEGER"),
        (INT32_SCHEMA, "INT", "INT", "INTEGER"),
        (INT64_SCHEMA, "BIGINT", "BIGINT", "INTEGER"),
        (FLOAT32_SCHEMA, "REAL", "FLOAT", "REAL"),
        (FLOAT64_SCHEMA, "DOUBLE PRECISION", "DOUBLE", "REAL"),
        (BOOLEAN_SCHEMA, "BOOLEAN", "TINYINT", "INTEGER"),
        (STRING_SCHEMA, "TEXT", "TEXT", "TEXT"),
        (BYTES_SCHEMA, "BYTEA", "BLOB", "BLOB"),
        (Decimal.schema(3), "DECIMAL", "DECIMAL(65,3)", "NUMERIC"),
        (Date.SCHEMA, "DATE", "DATE", "DATE"),
        (Time.SCHEMA, "TIME", "TIME(3)", "TIME"),
        (Timestamp.SCHEMA, "TIMESTAMP", "DATETIME(3)", "DATETIME"),
    ],
)
def test_connect_schemas_map_to_column_types(schema: Schema, pg: str, my: str, lite: str) -> None:
    assert sql_type("PostgreSqlDatabaseDialect", schema) == pg
    assert sql_type("MySqlDatabaseDialect", schema) == my
    assert sql_type("SqliteDatabaseDialect", schema) == lite


@pytest.mark.parametrize(
    "dialect", ["PostgreSqlDatabaseDialect", "MySqlDatabaseDialect", "SqliteDatabaseDialect"]
)
def test_a_struct_field_has_no_column_type(dialect: str) -> None:
    # Debezium's VariableScaleDecimal (a NUMERIC without precision), unwrapped into a row.
    struct = (
        SchemaBuilder.struct()
        .name("io.debezium.data.VariableScaleDecimal")
        .field("scale", INT32_SCHEMA)
        .field("value", BYTES_SCHEMA)
        .build()
    )
    message = (
        "io.debezium.data.VariableScaleDecimal (STRUCT) type doesn't have a mapping to the SQL "
        "database column type"
    )
    with pytest.raises(ConnectError, match=re.escape(message)):
        sql_type(dialect, struct)


def test_mysql_key_columns_get_indexable_types() -> None:
    assert sql_type("MySqlDatabaseDialect", STRING_SCHEMA, is_key=True) == "VARCHAR(256)"


def test_parameters_in_db_timezone() -> None:
    convert = param_converter("PostgreSqlDatabaseDialect", Timestamp.SCHEMA, "Asia/Tokyo")
    assert convert is not None
    value = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    assert convert(value) == datetime.datetime(2024, 1, 1, 9)
    lite = param_converter("SqliteDatabaseDialect", Decimal.schema(2), "UTC")
    assert lite is not None and lite(decimal.Decimal("1.50")) == "1.50"
    assert param_converter("PostgreSqlDatabaseDialect", INT32_SCHEMA, "UTC") is None
