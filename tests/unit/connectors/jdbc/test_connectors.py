"""The connectors' config checks and task splitting, on an in-process SQLite database."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from sparkcat.api.errors import ConnectError
from sparkcat.connectors.jdbc import JdbcSinkConnector, JdbcSourceConnector, JdbcSourceTask


def errors(result: object, key: str) -> list[str]:
    return next(v.error_messages for v in result if v.name == key)  # type: ignore[attr-defined]


@pytest.fixture
def url(tmp_path: Path) -> str:
    path = tmp_path / "db.sqlite"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        for name in ("a", "b", "c", "skipped"):
            conn.exec_driver_sql(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, v TEXT)")
    engine.dispose()
    return f"jdbc:sqlite:{path}"


def test_source_cross_key_rules_land_on_their_keys(url: str) -> None:
    base = {"connection.url": url, "topic.prefix": "p-", "mode": "bulk"}
    both = JdbcSourceConnector().validate({**base, "query": "SELECT 1", "table.whitelist": "a"})
    assert errors(both, "query") == ["query may not be combined with whole-table copying settings."]
    lists = JdbcSourceConnector().validate({**base, "table.whitelist": "a", "table.blacklist": "b"})
    assert errors(lists, "table.blacklist")
    no_mode = JdbcSourceConnector().validate({**base, "mode": ""})
    assert errors(no_mode, "mode")
    bad_mode = JdbcSourceConnector().validate({**base, "mode": "sometimes"})
    assert errors(bad_mode, "mode")
    assert not any(v.error_messages for v in JdbcSourceConnector().validate(base))


def test_tables_are_grouped_over_tasks(url: str) -> None:
    connector = JdbcSourceConnector()
    connector.start({"connection.url": url, "topic.prefix": "p-", "mode": "bulk",
                     "table.blacklist": "skipped", "table.poll.interval.ms": "60000"})  # fmt: skip
    try:
        assert [c["tables"] for c in connector.task_configs(2)] == ["a,b", "c"]
        assert [c["tables"] for c in connector.task_configs(10)] == ["a", "b", "c"]
    finally:
        connector.stop()


def test_include_list_is_a_regular_expression(url: str) -> None:
    connector = JdbcSourceConnector()
    connector.start({"connection.url": url, "topic.prefix": "p-", "mode": "bulk",
                     "table.include.list": "[ab]"})  # fmt: skip
    try:
        assert [c["tables"] for c in connector.task_configs(1)] == ["a,b"]
    finally:
        connector.stop()


def test_start_rejects_what_validate_rejects(url: str) -> None:
    with pytest.raises(ConnectError, match="may not be combined"):
        JdbcSourceConnector().start({"connection.url": url, "topic.prefix": "p-",
                                     "mode": "bulk", "query": "SELECT 1",
                                     "table.whitelist": "a"})  # fmt: skip


def test_sink_rules(url: str) -> None:
    base = {"connection.url": url, "topics": "t"}
    deletes = JdbcSinkConnector().validate({**base, "delete.enabled": "true"})
    assert errors(deletes, "pk.mode") == ["Deletes are only supported for pk.mode record_key"]
    upsert = JdbcSinkConnector().validate({**base, "insert.mode": "upsert"})
    assert errors(upsert, "pk.mode")
    bad = JdbcSinkConnector().validate({**base, "insert.mode": "merge"})
    assert errors(bad, "insert.mode")
    assert JdbcSinkConnector().task_configs(3) == [{}, {}, {}]


def test_task_classes() -> None:
    assert JdbcSourceConnector().task_class() is JdbcSourceTask
    assert JdbcSourceConnector().version() == JdbcSinkConnector().version()
