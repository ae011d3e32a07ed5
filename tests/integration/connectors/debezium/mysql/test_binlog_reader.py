"""The binlog reader against the session's throwaway MariaDB (``cdc_mariadb``)."""

from __future__ import annotations

import uuid
from typing import Any

import pymysql
import pytest
from tests.support.cdc_mariadb import PASSWORD, SERVER_ID, USER, ThrowawayMariaDb

from sparkcat.connectors.debezium.mysql.binlog_reader import (
    BinlogReader,
    ConnectionSettings,
    RowChange,
    SchemaChange,
)
from sparkcat.connectors.debezium.mysql.offsets import BinlogOffset
from sparkcat.connectors.debezium.mysql.server import binlog_problems, current_position


@pytest.fixture
def server(cdc_mariadb: ThrowawayMariaDb) -> Any:
    """A fresh database on the throwaway server, and the binlog position before it."""
    name = f"cdc_{uuid.uuid4().hex[:8]}"
    conn = cdc_mariadb.connect()
    start = current_position(conn)
    conn.close()
    cdc_mariadb.execute(f"CREATE DATABASE {name}",
                        f"CREATE TABLE {name}.t (id INT PRIMARY KEY, a VARCHAR(20))")  # fmt: skip
    yield cdc_mariadb, name, start
    cdc_mariadb.execute(f"DROP DATABASE {name}")


def reader(cdc: ThrowawayMariaDb, start: BinlogOffset, **kwargs: Any) -> BinlogReader:
    settings = ConnectionSettings(cdc.host, cdc.port, USER, PASSWORD)
    return BinlogReader(settings, 5400, start, mariadb=True, **kwargs)


def read_all(r: BinlogReader) -> list[Any]:
    try:
        return r.poll()
    finally:
        r.close()


def rows(changes: list[Any], db: str) -> list[tuple[str, Any, Any]]:
    return [(c.op, c.before, c.after) for c in changes
            if isinstance(c, RowChange) and c.database == db]  # fmt: skip


def test_inserts_updates_deletes_with_their_source_fields(server: Any) -> None:
    cdc, db, start = server
    cdc.execute(
        "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "UPDATE t SET a = 'bb' WHERE id = 2",
        "DELETE FROM t WHERE id IN (1, 3)",
        database=db,
    )
    changes = read_all(reader(cdc, start, include_query=True))
    assert rows(changes, db) == [
        ("c", None, {"id": 1, "a": "a"}), ("c", None, {"id": 2, "a": "b"}),
        ("c", None, {"id": 3, "a": "c"}),
        ("u", {"id": 2, "a": "b"}, {"id": 2, "a": "bb"}),
        ("d", {"id": 1, "a": "a"}, None), ("d", {"id": 3, "a": "c"}, None),
    ]  # fmt: skip
    inserts = [c for c in changes if isinstance(c, RowChange) and c.op == "c"]
    assert [c.row for c in inserts] == [0, 1, 2]
    assert len({c.pos for c in inserts}) == 1  # one rows event
    first = inserts[0]
    assert (first.database, first.table, first.server_id) == (db, "t", SERVER_ID)
    assert first.file == start.file and first.pos > start.pos
    assert first.gtid is not None and first.gtid.startswith(f"0-{SERVER_ID}-")
    assert first.query is None  # MariaDB's annotate-rows events are not read yet
    assert first.ts_ms % 1000 == 0 and first.ts_ms > 1_700_000_000_000
    # Debezium's offset keys: mid-event rows name the next row; the last row the whole event
    assert set(first.offset.to_dict()) == {"server_id", "gtids", "file", "pos", "event",
                                           "row", "ts_sec"}  # fmt: skip
    assert [c.offset.row for c in inserts] == [1, 2, 3]
    assert inserts[0].offset.pos < inserts[0].pos  # the transaction's start


def test_restart_from_any_offset_resumes_with_the_next_row(server: Any) -> None:
    cdc, db, start = server
    cdc.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
                "UPDATE t SET a = 'x'", "DELETE FROM t WHERE id = 2", database=db)  # fmt: skip
    everything = [c for c in read_all(reader(cdc, start)) if isinstance(c, RowChange)]
    assert len(everything) == 7
    for i, change in enumerate(everything):
        resumed = [c for c in read_all(reader(cdc, change.offset)) if isinstance(c, RowChange)]
        assert [(c.op, c.before, c.after) for c in resumed] == [
            (c.op, c.before, c.after) for c in everything[i + 1 :]
        ], f"after change {i}"
        stored = BinlogOffset.load(change.offset.to_dict())
        assert stored == change.offset


def test_polls_resume_where_the_last_one_stopped(server: Any) -> None:
    cdc, db, start = server
    r = reader(cdc, start)
    try:
        cdc.execute("INSERT INTO t VALUES (1, 'a')", database=db)
        first = rows(r.poll(), db)
        assert r.poll() == []
        cdc.execute("INSERT INTO t VALUES (2, 'b')", database=db)
        second = rows(r.poll(), db)
    finally:
        r.close()
    assert (first, second) == ([("c", None, {"id": 1, "a": "a"})],
                               [("c", None, {"id": 2, "a": "b"})])  # fmt: skip


def test_schema_changes_between_events(server: Any) -> None:
    cdc, db, start = server
    cdc.execute(
        "INSERT INTO t VALUES (1, 'a')",
        "ALTER TABLE t ADD COLUMN n INT NULL",
        "INSERT INTO t VALUES (2, 'b', 7)",
        "ALTER TABLE t DROP COLUMN a",
        "UPDATE t SET n = 8 WHERE id = 2",
        database=db,
    )
    changes = read_all(reader(cdc, start))
    # each row read with the columns its event was written with
    assert rows(changes, db) == [
        ("c", None, {"id": 1, "a": "a"}),
        ("c", None, {"id": 2, "a": "b", "n": 7}),
        ("u", {"id": 2, "n": 7}, {"id": 2, "n": 8}),
    ]
    ddl = [c.ddl for c in changes if isinstance(c, SchemaChange) and c.ddl.startswith("ALTER")]
    assert ddl == ["ALTER TABLE t ADD COLUMN n INT NULL", "ALTER TABLE t DROP COLUMN a"]


def test_table_filter(server: Any) -> None:
    cdc, db, start = server
    cdc.execute("CREATE TABLE u (id INT PRIMARY KEY)", "INSERT INTO u VALUES (1)",
                "INSERT INTO t VALUES (1, 'a')", database=db)  # fmt: skip
    changes = read_all(reader(cdc, start, tables=frozenset({f"{db}.t"})))
    assert [(c.table, c.op) for c in changes if isinstance(c, RowChange)] == [("t", "c")]


def test_binlog_checks(cdc_mariadb: ThrowawayMariaDb) -> None:
    conn = cdc_mariadb.connect()
    try:
        assert binlog_problems(conn) == []
    finally:
        conn.close()
    # the machine's shared MariaDB runs without a binlog (only read here, never changed)
    shared = pymysql.connect(host="127.0.0.1", port=3306, user="root")
    try:
        problems = binlog_problems(shared)
    finally:
        shared.close()
    assert len(problems) == 1 and "log_bin=OFF" in problems[0]
