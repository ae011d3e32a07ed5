"""Incrementing, timestamp and timestamp+incrementing modes over leases: inserted and updated
rows are picked up, none twice; tables appearing while the connector runs are found."""

from __future__ import annotations

import datetime
import threading
from typing import Any

import pytest

from sparkcat.api.connector import ConnectorContext
from sparkcat.connectors.jdbc import JdbcSourceConnector
from sparkcat.connectors.jdbc.types import sqlite_timestamp

from .conftest import Database, Leases, fqn, read_values, unique

pytestmark = pytest.mark.broker


def ts(db: Database, seconds_ago: float) -> Any:
    value = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(
        seconds=seconds_ago
    )
    value = value.replace(microsecond=value.microsecond // 1000 * 1000)
    return sqlite_timestamp(value) if db.kind == "sqlite" else value


def make_table(db: Database, table: str) -> None:
    db.drop(table)
    kind = {"postgresql": "TIMESTAMP(3)", "mariadb": "DATETIME(3)", "sqlite": "DATETIME"}
    db.execute(f"CREATE TABLE {db.quote(table)} (id INTEGER NOT NULL PRIMARY KEY, "
               f"val VARCHAR(20) NOT NULL, modified {kind[db.kind]} NOT NULL)")  # fmt: skip


def insert(db: Database, table: str, rows: list[tuple[int, str, Any]]) -> None:
    m = db.mark
    db.execute(f"INSERT INTO {db.quote(table)} (id, val, modified) VALUES ({m}, {m}, {m})", rows)


def run(leases: Leases, name: str, config: dict[str, str], servers: str, topic: str,
        total: int) -> list[Any]:  # fmt: skip
    """Leases until the topic holds ``total`` records; returns all of them. A 500 ms lease
    polls several times at ``poll.interval.ms`` 100."""
    for _ in range(8):
        result = leases.source(name, config, max_ms=500)
        assert result.trace is None, result.trace
        if len(read_values(servers, topic, total, timeout_s=0.5)) >= total:
            break
    # One more lease: a row served twice would show up now.
    leases.source(name, config, max_ms=500)
    return read_values(servers, topic, total, timeout_s=0.5)


@pytest.mark.parametrize("mode", ["incrementing", "timestamp", "timestamp+incrementing"])
def test_modes_pick_up_inserts_and_updates_once(db: Database, leases: Leases, mode: str) -> None:
    table, name, prefix = unique("modes"), unique("conn"), unique("m") + "-"
    make_table(db, table)
    insert(db, table, [(i, f"v{i}", ts(db, 60 - i)) for i in range(1, 6)])
    config = {
        "connection.url": db.jdbc_url, "mode": mode, "incrementing.column.name": "id",
        "timestamp.column.name": "modified", "tables": fqn(db, table),
        "topic.prefix": prefix, "poll.interval.ms": "100",
    }  # fmt: skip
    topic = prefix + table
    first = run(leases, name, config, leases.servers, topic, 5)
    assert [v["id"] for v in first] == [1, 2, 3, 4, 5]
    (partition, offset), = leases.offsets[name]  # fmt: skip
    assert partition == {"table": fqn(db, table), "protocol": "1"}
    if mode != "timestamp":
        assert offset["incrementing"] == 5
    if mode != "incrementing":
        assert set(offset) >= {"timestamp", "timestamp_nanos"}

    db.execute(f"UPDATE {db.quote(table)} SET val = 'changed', modified = {db.mark} WHERE id = 2",
               (ts(db, 5),))  # fmt: skip
    insert(db, table, [(6, "v6", ts(db, 4)), (7, "v7", ts(db, 3))])
    expected = 7 if mode == "incrementing" else 8
    values = run(leases, name, config, leases.servers, topic, expected)
    got = [(v["id"], v["val"]) for v in values]
    if mode == "incrementing":
        # Incrementing mode sees new rows only, as in Confluent's connector.
        assert got == [(i, f"v{i}") for i in range(1, 8)]
    else:
        assert got == [(i, f"v{i}") for i in range(1, 6)] + [(2, "changed"), (6, "v6"), (7, "v7")]
    db.drop(table)


class _Context(ConnectorContext):
    def __init__(self) -> None:
        self.requests = threading.Event()

    def request_task_reconfiguration(self) -> None:
        self.requests.set()

    def raise_error(self, exc: BaseException) -> None:
        raise AssertionError(exc)


def test_new_table_is_found_while_running(db: Database, leases: Leases) -> None:
    first, later, prefix = unique("tbl"), unique("tbl"), unique("n") + "-"
    make_table(db, first)
    config = {
        "connection.url": db.jdbc_url, "mode": "incrementing", "incrementing.column.name": "id",
        "table.whitelist": f"{first},{later}", "topic.prefix": prefix,
        "table.poll.interval.ms": "200", "poll.interval.ms": "100",
    }  # fmt: skip
    connector = JdbcSourceConnector()
    context = _Context()
    connector.initialize(context)  # type: ignore[arg-type]
    connector.start(config)
    try:
        assert [c["tables"] for c in connector.task_configs(4)] == [fqn(db, first)]
        make_table(db, later)
        insert(db, later, [(1, "new", ts(db, 1))])
        assert context.requests.wait(10), "no reconfiguration requested for the new table"
        configs = connector.task_configs(4)
        assert sorted(c["tables"] for c in configs) == sorted([fqn(db, first), fqn(db, later)])
    finally:
        connector.stop()
    task_config = next(c for c in configs if c["tables"] == fqn(db, later))
    result = leases.source(unique("conn"), task_config, max_ms=1500)
    assert result.trace is None, result.trace
    assert [v["val"] for v in read_values(leases.servers, prefix + later, 1)] == ["new"]
    db.drop(first, later)


def test_bulk_and_query_modes(db: Database, leases: Leases) -> None:
    table, prefix = unique("bulk"), unique("b") + "-"
    make_table(db, table)
    insert(db, table, [(i, f"v{i}", ts(db, 10)) for i in range(1, 4)])
    bulk = {"connection.url": db.jdbc_url, "mode": "bulk", "tables": fqn(db, table),
            "topic.prefix": prefix, "poll.interval.ms": "60000"}  # fmt: skip
    result = leases.source(unique("conn"), bulk, max_ms=1000)
    assert result.trace is None, result.trace
    assert result.records == 3  # once per poll.interval.ms, not once per poll
    assert result.source_offsets == (({"table": table}, None),)
    query = {"connection.url": db.jdbc_url, "mode": "incrementing",
             "incrementing.column.name": "id", "topic.prefix": prefix + "q",
             "query": f"SELECT id, val FROM {db.quote(table)}",
             "poll.interval.ms": "100"}  # fmt: skip
    result = leases.source(unique("conn"), query, max_ms=1000)
    assert result.trace is None, result.trace
    assert result.source_offsets == (({"query": "query"}, {"incrementing": 3}),)
    assert [v["val"] for v in read_values(leases.servers, prefix + "q", 3)] == ["v1", "v2", "v3"]
    db.drop(table)


def test_unreachable_database_is_retried_not_failed(leases: Leases) -> None:
    config = {"connection.url": "jdbc:postgresql://127.0.0.1:1/x?user=postgres",
              "mode": "incrementing", "incrementing.column.name": "id",
              "tables": "x.public.t", "topic.prefix": "p-"}  # fmt: skip
    result = leases.source(unique("conn"), config, max_ms=1500)
    assert result.trace is None
    assert result.records == 0


def test_timestamp_mode_loses_no_row_of_a_group_cut_by_the_lease_end(
    db: Database, leases: Leases
) -> None:
    """Rows 3-9 share one timestamp. The first lease ends (after 2 records) while the query's
    result is still open in the middle of that group: the stored offset must not move into the
    group, or the next lease's ``timestamp > offset`` query would skip the rest of it."""
    table, name, prefix = unique("tsgroup"), unique("conn"), unique("g") + "-"
    make_table(db, table)
    a, b, c = ts(db, 30), ts(db, 20), ts(db, 10)
    rows = [(1, "v1", a), (2, "v2", a), *[(i, f"v{i}", b) for i in range(3, 10)], (10, "v10", c)]
    insert(db, table, rows)
    config = {
        "connection.url": db.jdbc_url, "mode": "timestamp", "timestamp.column.name": "modified",
        "tables": fqn(db, table), "topic.prefix": prefix, "poll.interval.ms": "100",
        "batch.max.rows": "4",
    }  # fmt: skip
    topic = prefix + table
    first = leases.source(name, config, max_ms=5000, max_records=2)
    assert first.trace is None, first.trace
    assert [v["id"] for v in read_values(leases.servers, topic, 2, timeout_s=2)] == [1, 2]
    for _ in range(3):
        result = leases.source(name, config, max_ms=500)
        assert result.trace is None, result.trace
    ids = [v["id"] for v in read_values(leases.servers, topic, 10, timeout_s=2)]
    assert ids == list(range(1, 11))
    db.drop(table)
