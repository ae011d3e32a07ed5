"""Sink behaviour over leases: auto.evolve, a missing table, unwritable records and the DLQ,
deletes, and the validate endpoint's connection check."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.connectors.jdbc import JdbcSinkConnector, JdbcSourceConnector

from .conftest import Database, Leases, produce_json, read_values, struct_schema, unique

pytestmark = pytest.mark.broker

V1 = struct_schema("rec", {"id": "int64", "a": "string"})
V2 = struct_schema("rec", {"id": "int64", "a": "string", "b": "int32"}, optional=("b",))


def sink_config(db: Database, table: str, **extra: str) -> dict[str, str]:
    return {"connection.url": db.jdbc_url, "table.name.format": table, "pk.mode": "record_value",
            "pk.fields": "id", "insert.mode": "upsert", **extra}  # fmt: skip


def test_auto_evolve_adds_a_column_for_a_new_optional_field(db: Database, leases: Leases) -> None:
    topic, table, name = unique("evolve"), unique("evolved"), unique("sink")
    produce_json(leases.servers, topic, [
        (None, {"schema": V1, "payload": {"id": 1, "a": "x"}}),
        (None, {"schema": V2, "payload": {"id": 2, "a": "y", "b": 7}}),
    ])  # fmt: skip
    config = sink_config(db, table, **{"auto.create": "true", "auto.evolve": "true"})
    result = leases.sink(name, [topic], config)
    assert result.trace is None, result.trace
    assert result.records == 2
    assert db.rows(f"SELECT id, a, b FROM {db.quote(table)} ORDER BY id") == [
        (1, "x", None), (2, "y", 7)]  # fmt: skip
    db.drop(table)


def test_without_auto_evolve_a_new_field_fails_the_task(db: Database, leases: Leases) -> None:
    topic, table = unique("noevolve"), unique("fixed")
    produce_json(leases.servers, topic, [(None, {"schema": V2, "payload": {"id": 1, "a": "x"}})])
    db.drop(table)
    db.execute(f"CREATE TABLE {db.quote(table)} (id BIGINT PRIMARY KEY, a VARCHAR(10))")
    result = leases.sink(unique("sink"), [topic], sink_config(db, table))
    assert result.trace is not None
    assert "is missing fields (['b']) and auto-evolution is disabled" in result.trace
    db.drop(table)


def test_missing_table_without_auto_create_fails_naming_the_table(
    db: Database, leases: Leases
) -> None:
    topic, table = unique("missing"), unique("nosuch")
    produce_json(leases.servers, topic, [(None, {"schema": V1, "payload": {"id": 1, "a": "x"}})])
    result = leases.sink(unique("sink"), [topic], sink_config(db, table))
    assert result.trace is not None
    assert table in result.trace
    assert "is missing and auto-creation is disabled" in result.trace
    assert result.records == 0


def test_unwritable_record_goes_to_the_dead_letter_queue(db: Database, leases: Leases) -> None:
    topic, table, dlq = unique("bad"), unique("strict"), unique("dlq")
    optional_a = struct_schema("rec", {"id": "int64", "a": "string"}, optional=("a",))
    produce_json(leases.servers, topic, [
        (None, {"schema": optional_a, "payload": {"id": 1, "a": "ok"}}),
        (None, {"schema": optional_a, "payload": {"id": 2, "a": None}}),  # violates NOT NULL
        (None, {"schema": optional_a, "payload": {"id": 3, "a": "ok too"}}),
    ])  # fmt: skip
    db.drop(table)
    db.execute(f"CREATE TABLE {db.quote(table)} (id BIGINT PRIMARY KEY, a VARCHAR(20) NOT NULL)")
    config = sink_config(db, table, **{
        "max.retries": "0", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
    })  # fmt: skip
    result = leases.sink(unique("sink"), [topic], config)
    assert result.trace is None, result.trace
    assert db.rows(f"SELECT id, a FROM {db.quote(table)} ORDER BY id") == [(1, "ok"), (3, "ok too")]
    dead = read_values(leases.servers, dlq, 1)
    assert [d["id"] for d in dead] == [2]
    db.drop(table)


def test_unwritable_record_without_tolerance_fails_after_retries(
    db: Database, leases: Leases
) -> None:
    topic, table = unique("bad"), unique("strict")
    optional_a = struct_schema("rec", {"id": "int64", "a": "string"}, optional=("a",))
    produce_json(leases.servers, topic, [(None, {"schema": optional_a, "payload": {"id": 1}})])
    db.drop(table)
    db.execute(f"CREATE TABLE {db.quote(table)} (id BIGINT PRIMARY KEY, a VARCHAR(20) NOT NULL)")
    config = sink_config(db, table, **{"max.retries": "1", "retry.backoff.ms": "100"})
    result = leases.sink(unique("sink"), [topic], config)
    assert result.trace is not None and "Write of 1 records failed" in result.trace
    db.drop(table)


def test_tombstones_delete_and_updates_upsert(db: Database, leases: Leases) -> None:
    topic, table = unique("cdc"), unique("mirror")
    key = {"type": "struct", "optional": False, "fields": [
        {"field": "id", "type": "int64", "optional": False}]}  # fmt: skip
    produce_json(leases.servers, topic, [
        ({"schema": key, "payload": {"id": 1}}, {"schema": V1, "payload": {"id": 1, "a": "a"}}),
        ({"schema": key, "payload": {"id": 2}}, {"schema": V1, "payload": {"id": 2, "a": "b"}}),
        ({"schema": key, "payload": {"id": 1}}, {"schema": V1, "payload": {"id": 1, "a": "c"}}),
        ({"schema": key, "payload": {"id": 2}}, None),
    ])  # fmt: skip
    config = {"connection.url": db.jdbc_url, "table.name.format": table, "pk.mode": "record_key",
              "insert.mode": "upsert", "delete.enabled": "true", "auto.create": "true"}  # fmt: skip
    result = leases.sink(unique("sink"), [topic], config)
    assert result.trace is None, result.trace
    assert db.rows(f"SELECT id, a FROM {db.quote(table)} ORDER BY id") == [(1, "c")]
    db.drop(table)


def errors_of(config: Any, key: str) -> list[str]:
    return next(v.error_messages for v in config if v.name == key)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("jdbc:postgresql://127.0.0.1:1/x?user=postgres", "Could not connect"),
        ("jdbc:postgresql://127.0.0.1:5432/no_such_database_x?user=postgres", "no_such_database_x"),
        ("jdbc:mariadb://127.0.0.1:3306/test?user=root&password=wrong", "Access denied"),
    ],
)
def test_validate_reports_connection_problems_on_connection_url(url: str, expected: str) -> None:
    source = JdbcSourceConnector().validate(
        {"connection.url": url, "mode": "bulk", "topic.prefix": "p-"}
    )
    assert any(expected in e for e in errors_of(source, "connection.url"))
    assert "wrong" not in " ".join(errors_of(source, "connection.url"))
    sink = JdbcSinkConnector().validate({"connection.url": url, "topics": "t"})
    assert any(expected in e for e in errors_of(sink, "connection.url"))


def test_validate_accepts_a_reachable_database(db: Database) -> None:
    result = JdbcSourceConnector().validate(
        {"connection.url": db.jdbc_url, "mode": "bulk", "topic.prefix": "p-"}
    )
    assert all(not v.error_messages for v in result)
