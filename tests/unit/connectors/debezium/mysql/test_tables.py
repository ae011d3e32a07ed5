"""Debezium's MySQL type mapping: information_schema column rows to Connect schemas, and the
values of the binlog and of a snapshot normalised to what those schemas hold."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.mysql.tables import (
    CapturedTable,
    SchemaSettings,
    TableDefinition,
    column_of,
)
from sparkcat.connectors.debezium.types import TypeModes, column_schema


def settings(bigint_precise: bool = False) -> SchemaSettings:
    modes = TypeModes(time_precision="adaptive_time_microseconds")
    return SchemaSettings("srv", ".", "mysql", modes, KeyColumns(), NameFilter(), bigint_precise)


def info(column_type: str, nullable: bool = True, **extra: Any) -> dict[str, Any]:
    data_type = column_type.split("(")[0].split(" ")[0]
    return {"column_name": "c", "data_type": data_type, "column_type": column_type,
            "is_nullable": "YES" if nullable else "NO", **extra}  # fmt: skip


@pytest.mark.parametrize("column_type, extra, expected", [
    ("tinyint(1)", {}, ("int16", None)),
    ("smallint unsigned", {}, ("int32", None)),
    ("int", {}, ("int32", None)),
    ("int unsigned", {}, ("int64", None)),
    ("bigint unsigned", {}, ("int64", None)),
    ("float", {}, ("float64", None)),
    ("decimal(10,2)", {"numeric_precision": 10, "numeric_scale": 2},
     ("bytes", "org.apache.kafka.connect.data.Decimal")),
    ("varchar(20)", {}, ("string", None)),
    ("varbinary(4)", {}, ("bytes", None)),
    ("date", {}, ("int32", "io.debezium.time.Date")),
    ("time(3)", {"datetime_precision": 3}, ("int64", "io.debezium.time.MicroTime")),
    ("datetime", {"datetime_precision": 0}, ("int64", "io.debezium.time.Timestamp")),
    ("datetime(6)", {"datetime_precision": 6}, ("int64", "io.debezium.time.MicroTimestamp")),
    ("timestamp(6)", {"datetime_precision": 6}, ("string", "io.debezium.time.ZonedTimestamp")),
    ("year(4)", {}, ("int32", "io.debezium.time.Year")),
    ("json", {}, ("string", "io.debezium.data.Json")),
    ("bit(1)", {"numeric_precision": 1}, ("boolean", None)),
    ("bit(12)", {"numeric_precision": 12}, ("bytes", "io.debezium.data.Bits")),
    ("enum('a','it''s')", {}, ("string", "io.debezium.data.Enum")),
    ("set('x','y')", {}, ("string", "io.debezium.data.EnumSet")),
])  # fmt: skip
def test_mysql_types_map_as_debezium_maps_them(
    column_type: str, extra: dict[str, Any], expected: tuple[str, str | None]
) -> None:
    schema = column_schema(column_of(info(column_type, **extra), settings()), settings().modes)
    assert (schema.type.name.lower(), schema.name) == expected
    assert schema.optional


def test_enum_members_and_bigint_unsigned_precise() -> None:
    column = column_of(info("enum('a','it''s','b,c')"), settings())
    schema = column_schema(column, settings().modes)
    assert schema.parameters == {"allowed": "a,it's,b,c"}
    big = column_schema(column_of(info("bigint unsigned", False), settings(True)),
                        settings().modes)  # fmt: skip
    assert big.name == "org.apache.kafka.connect.data.Decimal" and not big.optional


def test_binlog_and_snapshot_values_become_the_same_connect_values() -> None:
    s = settings()
    rows = [info("json"), info("set('x','y','z')"), info("bit(1)"), info("bit(12)",
            numeric_precision=12), info("time(6)", datetime_precision=6),
            info("timestamp", datetime_precision=0)]  # fmt: skip
    columns = tuple({**r, "column_name": f"c{i}"} for i, r in enumerate(rows))
    table = CapturedTable(TableDefinition("db", "t", columns, ()), s)
    binlog = {"c0": {b"a": [1, b"x"]}, "c1": {"z", "x"}, "c2": "1", "c3": "000000000101",
              "c4": datetime.timedelta(hours=1, microseconds=5),
              "c5": datetime.datetime(2024, 1, 2, 3, 4, 5)}  # fmt: skip
    snapshot = {"c0": '{"a":[1,"x"]}', "c1": "x,z", "c2": b"\x01", "c3": b"\x00\x05",
                "c4": datetime.timedelta(hours=1, microseconds=5),
                "c5": datetime.datetime(2024, 1, 2, 3, 4, 5)}  # fmt: skip
    values = [table.debezium.value(table.row(r)) for r in (binlog, snapshot)]
    assert values[0] == values[1]
    got = values[0]
    assert (got.get("c0"), got.get("c1"), got.get("c2"), got.get("c3")) == (
        '{"a":[1,"x"]}', "x,z", True, b"\x05")  # fmt: skip
    assert (got.get("c4"), got.get("c5")) == (3_600_000_005, "2024-01-02T03:04:05Z")
