"""PostgreSQL type OIDs/modifiers → generic columns, and text forms → values."""

from __future__ import annotations

import datetime
import decimal

from sparkcat.connectors.debezium.postgres import values


def parse(oid: int, modifier: int, text: str) -> object:
    return values.parser(values.column("c", oid, modifier, True))(text)


def test_numeric_modifier_gives_precision_and_scale() -> None:
    column = values.column("p", values.NUMERIC, (10 << 16 | 2) + 4, False)
    assert (column.kind, column.precision, column.scale, column.optional) == (
        "decimal", 10, 2, False)  # fmt: skip
    assert values.column("n", values.NUMERIC, -1, True).precision is None


def test_text_forms() -> None:
    assert parse(values.BOOL, -1, "t") is True
    assert parse(values.BYTEA, -1, "\\x01ff") == b"\x01\xff"
    assert parse(values.NUMERIC, -1, "-1.50") == decimal.Decimal("-1.50")
    assert parse(values.TIMESTAMP, 3, "2024-01-02 03:04:05.123") == datetime.datetime(
        2024, 1, 2, 3, 4, 5, 123000)  # fmt: skip
    assert parse(values.TIMESTAMPTZ, -1, "2024-01-02 03:04:05+02") == datetime.datetime(
        2024, 1, 2, 1, 4, 5, tzinfo=datetime.UTC)  # fmt: skip
    assert parse(values.MONEY, -1, "-$1,234.50") == decimal.Decimal("-1234.50")
    assert parse(values.INTERVAL, -1, "P1DT2H0.5S") == 93_600_500_000
    assert parse(values.BIT, 1, "1") is True
