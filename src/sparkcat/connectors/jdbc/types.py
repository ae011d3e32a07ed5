"""Type mapping both ways: database columns -> Connect schemas and values (source), Connect
schemas and values -> database types and parameters (sink).

Confluent's mapping, in SQLAlchemy terms: BOOLEAN, TINYINT (INT8), SMALLINT (INT16), INT
(INT32), BIGINT (INT64), REAL/FLOAT (FLOAT32), DOUBLE (FLOAT64), NUMERIC/DECIMAL (Connect
``Decimal`` or, with ``numeric.mapping``, the best fitting primitive), character types
(STRING), binary types (BYTES), DATE, TIME and TIMESTAMP (the logical types).
"""

from __future__ import annotations

import datetime
import decimal
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from sparkcat.api.errors import ConnectError

log = logging.getLogger(__name__)

Convert = Callable[[Any], Any] | None
"""A per-value converter (``None``: the driver's value is already right)."""

_UTC = datetime.UTC


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """One result column: its name, Connect schema and value converter."""

    name: str
    schema: Schema
    convert: Convert


def _zone(name: str) -> datetime.tzinfo:
    return _UTC if name.upper() == "UTC" else ZoneInfo(name)


def column_mapping(
    name: str,
    sql_type: Any,
    nullable: bool,
    *,
    numeric_mapping: str,
    db_timezone: str,
    sqlite: bool = False,
) -> ColumnMapping | None:
    """The mapping of a column of SQLAlchemy type ``sql_type``; ``None`` for a type Connect
    cannot carry (the column is left out, with a warning, as Confluent does)."""
    builder, convert = _builder(sql_type, numeric_mapping, _zone(db_timezone), sqlite)
    if builder is None:
        log.warning("JDBC type %s of column %s not currently supported: skipped", sql_type, name)
        return None
    if nullable:
        builder.optional()
    return ColumnMapping(name, builder.build(), convert)


def _builder(
    t: Any, numeric_mapping: str, zone: datetime.tzinfo, sqlite: bool
) -> tuple[SchemaBuilder | None, Convert]:
    if isinstance(t, sa.Boolean):
        return SchemaBuilder.boolean(), (_int_bool if sqlite else None)
    unsigned = bool(getattr(t, "unsigned", False))  # MySQL: the next wider type
    if isinstance(t, mysql.TINYINT):
        return (SchemaBuilder.int16() if unsigned else SchemaBuilder.int8()), None
    if isinstance(t, sa.SmallInteger):
        return (SchemaBuilder.int32() if unsigned else SchemaBuilder.int16()), None
    if isinstance(t, sa.BigInteger):
        if unsigned:
            return Decimal.builder(0), _decimal_value(0)
        return SchemaBuilder.int64(), None
    if isinstance(t, sa.Integer):
        return (SchemaBuilder.int64() if unsigned else SchemaBuilder.int32()), None
    if isinstance(t, sa.Float):
        single = not isinstance(t, sa.Double) and not sqlite and not isinstance(t, mysql.DOUBLE)
        return (SchemaBuilder.float32() if single else SchemaBuilder.float64()), None
    if isinstance(t, sa.Numeric):
        return _numeric(t.precision, t.scale, numeric_mapping, sqlite)
    if isinstance(t, sa.DateTime):
        return Timestamp.builder(), _timestamp_reader(zone, sqlite)
    if isinstance(t, sa.Date):
        return Date.builder(), (_sqlite_date if sqlite else None)
    if isinstance(t, sa.Time):
        return Time.builder(), _time_value
    if isinstance(t, sa.LargeBinary | sa.types._Binary):
        return SchemaBuilder.bytes(), _bytes_value
    if isinstance(t, sa.String | sa.Enum | sa.Uuid | sa.JSON):
        return SchemaBuilder.string(), _string_value
    return None, None


def _numeric(
    precision: int | None, scale: int | None, mapping: str, sqlite: bool
) -> tuple[SchemaBuilder, Convert]:
    if precision is None or scale is None:
        # An unconstrained NUMERIC has no fixed scale a Connect Decimal could declare.
        return SchemaBuilder.float64(), _float_value
    if mapping in ("precision_only", "best_fit", "best_fit_eager_double") and scale == 0:
        for limit, builder in (
            (2, SchemaBuilder.int8),
            (4, SchemaBuilder.int16),
            (9, SchemaBuilder.int32),
            (18, SchemaBuilder.int64),
        ):
            if precision <= limit:
                return builder(), _int_value
    if mapping == "best_fit_eager_double" and scale > 0:
        return SchemaBuilder.float64(), _float_value
    if mapping == "best_fit" and scale > 0 and precision <= 15:
        return SchemaBuilder.float64(), _float_value
    return Decimal.builder(scale), _decimal_value(scale) if sqlite else None


def _int_bool(v: Any) -> Any:
    return None if v is None else bool(v)


def _int_value(v: Any) -> Any:
    return None if v is None else int(v)


def _float_value(v: Any) -> Any:
    return None if v is None else float(v)


def _decimal_value(scale: int) -> Callable[[Any], Any]:
    exponent = decimal.Decimal(1).scaleb(-scale)

    def convert(v: Any) -> Any:
        return None if v is None else decimal.Decimal(str(v)).quantize(exponent)

    return convert


def _timestamp_reader(zone: datetime.tzinfo, sqlite: bool) -> Callable[[Any], Any]:
    utc = zone is _UTC

    def convert(v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, str):
            v = datetime.datetime.fromisoformat(v)
        if v.tzinfo is None:
            return v.replace(tzinfo=_UTC) if utc else v.replace(tzinfo=zone).astimezone(_UTC)
        return v.astimezone(_UTC)

    return convert


def _sqlite_date(v: Any) -> Any:
    if isinstance(v, str):
        return datetime.date.fromisoformat(v[:10])
    return v


def _time_value(v: Any) -> Any:
    if isinstance(v, datetime.timedelta):  # MySQL's TIME
        seconds = int(v.total_seconds())
        return datetime.time(seconds // 3600 % 24, seconds // 60 % 60, seconds % 60, v.microseconds)
    if isinstance(v, str):
        return datetime.time.fromisoformat(v)
    return v


def _bytes_value(v: Any) -> Any:
    if v is None or isinstance(v, bytes):
        return v
    return bytes(v)


def _string_value(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, dict | list):
        return json.dumps(v)
    return str(v)


def value_mapping(name: str, value: Any) -> ColumnMapping:
    """The mapping of a query column known only by a value (SQLite queries have no types)."""
    if isinstance(value, bool):
        builder = SchemaBuilder.boolean()
    elif isinstance(value, int):
        builder = SchemaBuilder.int64()
    elif isinstance(value, float):
        builder = SchemaBuilder.float64()
    elif isinstance(value, bytes | memoryview):
        return ColumnMapping(name, SchemaBuilder.bytes().optional().build(), _bytes_value)
    else:
        return ColumnMapping(name, SchemaBuilder.string().optional().build(), _string_value)
    return ColumnMapping(name, builder.optional().build(), None)


# Query mode has no table to describe: the drivers' type codes stand for the column types.
_PG_OIDS: dict[int, Any] = {
    16: sa.Boolean(),
    20: sa.BigInteger(),
    21: sa.SmallInteger(),
    23: sa.Integer(),
    700: sa.REAL(),
    701: sa.Double(),
    25: sa.Text(),
    1043: sa.String(),
    1042: sa.String(),
    17: sa.LargeBinary(),
    1082: sa.Date(),
    1083: sa.Time(),
    1114: sa.DateTime(),
    1184: sa.DateTime(timezone=True),
    2950: sa.Uuid(),
    114: sa.JSON(),
    3802: sa.JSON(),
}
_MYSQL_CODES: dict[int, Any] = {
    1: sa.SmallInteger(),
    2: sa.SmallInteger(),
    3: sa.Integer(),
    9: sa.Integer(),
    8: sa.BigInteger(),
    4: sa.REAL(),
    5: sa.Double(),
    10: sa.Date(),
    11: sa.Time(),
    7: sa.DateTime(),
    12: sa.DateTime(),
    15: sa.String(),
    253: sa.String(),
    254: sa.String(),
    252: sa.Text(),
    16: sa.Boolean(),
}


def query_mapping(
    result: Any, index: int, name: str, value: Any, numeric_mapping: str, db_timezone: str
) -> ColumnMapping | None:
    """The mapping of column ``index`` of a query's ``result`` (no table to describe)."""
    description = result.cursor.description[index]
    code = description[1]
    backend = result.context.dialect.name
    sql_type: Any = None
    if backend == "postgresql":
        sql_type = _PG_OIDS.get(code)
        if code == 1700:
            precision, scale = description[4], description[5]
            sql_type = sa.Numeric(precision or None, scale if precision else None)
    elif backend == "mysql":
        sql_type = _MYSQL_CODES.get(code)
        if code in (0, 246):
            sql_type = sa.Numeric(description[4], description[5])
        if code == 252 and isinstance(value, bytes):
            sql_type = sa.LargeBinary()
    if sql_type is None:
        return value_mapping(name, value)
    return column_mapping(
        name,
        sql_type,
        True,
        numeric_mapping=numeric_mapping,
        db_timezone=db_timezone,
    )


# ----------------------------------------------------------------------------- sink side
def sql_type(dialect: str, schema: Schema, is_key: bool = False) -> str:
    """The column type ``auto.create``/``auto.evolve`` use for a field of ``schema``."""
    logical = schema.name
    t = schema.type
    if dialect == "SqliteDatabaseDialect":
        if logical in (
            Decimal.LOGICAL_NAME,
            Date.LOGICAL_NAME,
            Time.LOGICAL_NAME,
            Timestamp.LOGICAL_NAME,
        ):
            return {
                Decimal.LOGICAL_NAME: "NUMERIC",
                Date.LOGICAL_NAME: "DATE",
                Time.LOGICAL_NAME: "TIME",
                Timestamp.LOGICAL_NAME: "DATETIME",
            }[logical]
        return _mapped(_SQLITE, schema)
    if logical == Decimal.LOGICAL_NAME:
        scale = int((schema.parameters or {}).get(Decimal.SCALE_FIELD, "0"))
        return f"DECIMAL(65,{scale})" if dialect == "MySqlDatabaseDialect" else "DECIMAL"
    if dialect == "MySqlDatabaseDialect":
        if logical == Date.LOGICAL_NAME:
            return "DATE"
        if logical == Time.LOGICAL_NAME:
            return "TIME(3)"
        if logical == Timestamp.LOGICAL_NAME:
            return "DATETIME(3)"
        if t is Type.STRING:
            return "VARCHAR(256)" if is_key else "TEXT"
        if t is Type.BYTES:
            return "VARBINARY(1024)" if is_key else "BLOB"
        return _mapped(_MYSQL, schema)
    if logical == Date.LOGICAL_NAME:
        return "DATE"
    if logical == Time.LOGICAL_NAME:
        return "TIME"
    if logical == Timestamp.LOGICAL_NAME:
        return "TIMESTAMP"
    return _mapped(_POSTGRES, schema)


def _mapped(types: dict[Type, str], schema: Schema) -> str:
    """The dialect's column type of ``schema``'s type; structs, arrays and maps (a Debezium
    ``VariableScaleDecimal``, say) have none: Kafka's JDBC sink fails such a record with this
    message rather than a bare lookup error."""
    found = types.get(schema.type)
    if found is None:
        raise ConnectError(
            f"{schema.name} ({schema.type.name}) type doesn't have a mapping to the SQL "
            "database column type"
        )
    return found


_POSTGRES = {
    Type.INT8: "SMALLINT",
    Type.INT16: "SMALLINT",
    Type.INT32: "INT",
    Type.INT64: "BIGINT",
    Type.FLOAT32: "REAL",
    Type.FLOAT64: "DOUBLE PRECISION",
    Type.BOOLEAN: "BOOLEAN",
    Type.STRING: "TEXT",
    Type.BYTES: "BYTEA",
}
_MYSQL = {
    Type.INT8: "TINYINT",
    Type.INT16: "SMALLINT",
    Type.INT32: "INT",
    Type.INT64: "BIGINT",
    Type.FLOAT32: "FLOAT",
    Type.FLOAT64: "DOUBLE",
    Type.BOOLEAN: "TINYINT",
}
_SQLITE = {
    Type.INT8: "INTEGER",
    Type.INT16: "INTEGER",
    Type.INT32: "INTEGER",
    Type.INT64: "INTEGER",
    Type.FLOAT32: "REAL",
    Type.FLOAT64: "REAL",
    Type.BOOLEAN: "INTEGER",
    Type.STRING: "TEXT",
    Type.BYTES: "BLOB",
}


def param_converter(dialect: str, schema: Schema, db_timezone: str) -> Convert:
    """How a Connect value of ``schema`` is bound as a statement parameter."""
    logical = schema.name
    sqlite = dialect == "SqliteDatabaseDialect"
    if logical == Timestamp.LOGICAL_NAME:
        zone = _zone(db_timezone)

        def timestamp(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, int):
                v = datetime.datetime.fromtimestamp(v / 1000, _UTC)
            naive = (v.astimezone(zone) if v.tzinfo else v).replace(tzinfo=None)
            return sqlite_timestamp(naive) if sqlite else naive

        return timestamp
    if sqlite and logical in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
        return _isoformat
    if sqlite and logical == Decimal.LOGICAL_NAME:
        return _decimal_text
    return None


def sqlite_timestamp(value: datetime.datetime) -> str:
    """SQLite keeps timestamps as text: this is the one spelling both connectors use, so
    comparisons in timestamp mode are text comparisons of like values."""
    return value.isoformat(sep=" ")


def _isoformat(v: Any) -> Any:
    return None if v is None else v.isoformat()


def _decimal_text(v: Any) -> Any:
    return None if v is None else str(v)


__all__ = [
    "ColumnMapping",
    "column_mapping",
    "param_converter",
    "query_mapping",
    "sql_type",
    "sqlite_timestamp",
    "value_mapping",
]
