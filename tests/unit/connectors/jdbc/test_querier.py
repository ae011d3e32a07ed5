"""Queries per mode and dialect, offsets' shapes, task grouping."""

from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa

from sparkcat.api.errors import ConnectError
from sparkcat.connectors.jdbc.dialect import (
    Dialect,
    MySqlDialect,
    PostgresDialect,
    SqliteDialect,
    TableId,
)
from sparkcat.connectors.jdbc.offsets import Offset, check_offset, table_partition
from sparkcat.connectors.jdbc.querier import Querier, QuerySettings
from sparkcat.connectors.jdbc.source_connector import group_partitions

END = datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.UTC)
BEGIN = datetime.datetime(2024, 5, 1, 11, 0, 0, 123456, tzinfo=datetime.UTC)


def querier(dialect: Dialect, mode: str, *, ts: tuple[str, ...] = ("ts",),
            table: TableId | None = TableId("shop", "public", "t"), query: str | None = None,
            offset: Offset = Offset()) -> Querier:  # fmt: skip
    settings = QuerySettings(mode, "id", ts, "p-", "", "none", "UTC", 0, True)
    return Querier(settings, dialect, sa.create_engine("sqlite://"), table, query, offset)


def test_bulk() -> None:
    q = querier(PostgresDialect(), "bulk")
    assert q.statement(None) == ('SELECT * FROM "public"."t"', ())
    assert (q.partition, q.topic) == ({"table": "t"}, "p-t")


def test_incrementing() -> None:
    q = querier(MySqlDialect(), "incrementing", table=TableId("shop", None, "t"),
                offset=Offset(41))  # fmt: skip
    assert q.statement(None) == (
        "SELECT * FROM `shop`.`t` WHERE `id` > %s ORDER BY `id` ASC",
        (41,),
    )
    assert q.partition == {"table": "shop.t", "protocol": "1"}
    fresh = querier(SqliteDialect(), "incrementing", table=TableId(None, None, "t"))
    assert fresh.statement(None) == ('SELECT * FROM "t" WHERE "id" > ? ORDER BY "id" ASC', (-1,))


def test_timestamp_with_coalesce() -> None:
    q = querier(PostgresDialect(), "timestamp", ts=("m", "c"), offset=Offset(None, BEGIN))
    sql, params = q.statement(END)
    assert sql == ('SELECT * FROM "public"."t" WHERE COALESCE("m", "c") > %s AND '
                   'COALESCE("m", "c") < %s ORDER BY COALESCE("m", "c") ASC')  # fmt: skip
    assert params == (BEGIN.replace(tzinfo=None), END.replace(tzinfo=None))


def test_timestamp_incrementing() -> None:
    q = querier(PostgresDialect(), "timestamp+incrementing", offset=Offset(7, BEGIN))
    sql, params = q.statement(END)
    assert sql == ('SELECT * FROM "public"."t" WHERE "ts" < %s AND (("ts" = %s AND "id" > %s) '
                   'OR "ts" > %s) ORDER BY "ts","id" ASC')  # fmt: skip
    naive = BEGIN.replace(tzinfo=None)
    assert params == (END.replace(tzinfo=None), naive, 7, naive)


def test_sqlite_timestamps_are_text() -> None:
    q = querier(SqliteDialect(), "timestamp", table=TableId(None, None, "t"))
    assert q.statement(END)[1] == ("1970-01-01 00:00:00", "2024-05-01 12:00:00")


def test_query_mode_appends_criteria_and_suffix() -> None:
    settings = QuerySettings("incrementing", "id", (), "topic", "LIMIT 10", "none", "UTC", 0, True)
    q = Querier(settings, PostgresDialect(), sa.create_engine("sqlite://"), None,
                "SELECT * FROM a JOIN b USING (k)", Offset())  # fmt: skip
    assert q.statement(None)[0] == (
        'SELECT * FROM a JOIN b USING (k) WHERE "id" > %s ORDER BY "id" ASC LIMIT 10'
    )
    assert (q.partition, q.topic) == ({"query": "query"}, "topic")
    like = Querier(settings, PostgresDialect(), sa.create_engine("sqlite://"), None,
                   "SELECT * FROM a WHERE s LIKE 'x%'", Offset())  # fmt: skip
    assert like.statement(None)[0].startswith("SELECT * FROM a WHERE s LIKE 'x%%' WHERE")


def test_offsets_have_confluents_shape() -> None:
    offset = Offset(5, BEGIN)
    assert offset.to_map() == {"incrementing": 5, "timestamp": 1714561200123,
                               "timestamp_nanos": 123456000}  # fmt: skip
    assert Offset.from_map(offset.to_map()) == offset
    assert Offset.from_map({"timestamp": 1714561200123}).timestamp == BEGIN.replace(
        microsecond=123000
    )
    assert table_partition("db.public.t") == {"table": "db.public.t", "protocol": "1"}


def test_offsets_are_checked_on_alter() -> None:
    check_offset({"table": "t", "protocol": "1"}, {"incrementing": 3})
    check_offset({"query": "query"}, None)
    with pytest.raises(ConnectError, match="Partition objects"):
        check_offset({"file": "x"}, {"incrementing": 3})
    with pytest.raises(ConnectError, match="Long"):
        check_offset({"table": "t"}, {"incrementing": "3"})
    with pytest.raises(ConnectError, match="Unknown offset keys"):
        check_offset({"table": "t"}, {"position": 3})


def test_group_partitions_like_kafka() -> None:
    assert group_partitions(list("abcde"), 2) == [["a", "b", "c"], ["d", "e"]]
    assert group_partitions(list("ab"), 2) == [["a"], ["b"]]
