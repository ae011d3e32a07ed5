"""Debezium change events → ExtractNewRecordState → the JDBC sink (``insert.mode=upsert``,
``delete.enabled=true``, ``pk.mode=record_key``): the pipeline that replicates a table. The
events are written by hand in Debezium's shape and serialized by the JsonConverter, as a
Debezium connector on Kafka Connect would write them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from tests.support.cdc_envelopes import Table
from tests.support.databases import ensure_postgres_database

from sparkcat.api.data import SchemaBuilder
from sparkcat.converters.json.converter import JsonConverter

from .conftest import DB_NAME, Leases, unique

pytestmark = pytest.mark.broker

SCHEMA = "sparkcat_unwrap"
INT32 = SchemaBuilder.int32().build()
OPT_STRING = SchemaBuilder.string().optional().build()


@pytest.fixture
def postgres() -> Iterator[sa.Engine]:
    ensure_postgres_database(DB_NAME)
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}")
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    yield engine
    engine.dispose()


def produce(servers: str, table: Table, events: list[tuple[Any, Any]]) -> None:
    """``(key, envelope)`` Structs (``None`` envelope: a tombstone) as JsonConverter bytes."""
    from confluent_kafka import Producer

    keys, values = JsonConverter(), JsonConverter()
    keys.configure({}, is_key=True)
    values.configure({}, is_key=False)
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for key, envelope in events:
        schema = None if envelope is None else envelope.schema
        producer.produce(
            table.topic,
            values.from_connect_data(table.topic, schema, envelope),
            keys.from_connect_data(table.topic, table.key_schema, key),
            0,
        )
    assert producer.flush(10) == 0


def changes(table: Table) -> list[tuple[Any, Any]]:
    """A snapshot of two rows, then inserts, updates and deletes (each delete followed by its
    tombstone, as ``tombstones.on.delete=true`` writes it)."""
    rows = {i: {"id": i, "name": f"row {i}"} for i in range(1, 7)}
    out: list[tuple[Any, Any]] = []
    lsn = 1000

    def emit(op: str, before: Any, after: Any) -> None:
        nonlocal lsn
        lsn += 8
        key, value = table.event(op, before, after, lsn)
        out.append((key, value))
        if op == "d":
            out.append((key, None))

    emit("r", None, rows[1])
    emit("r", None, rows[2])
    for i in (3, 4, 5, 6):
        emit("c", None, rows[i])
    emit("u", rows[2], {"id": 2, "name": "row 2 renamed"})
    emit("d", rows[3], None)
    emit("u", rows[4], {"id": 4, "name": None})
    emit("d", rows[5], None)
    emit("c", None, {"id": 5, "name": "row 5 again"})
    emit("d", rows[1], None)
    emit("u", {"id": 4, "name": None}, {"id": 4, "name": "row 4 last"})
    return out


def test_unwrapped_changes_replicate_the_table(postgres: sa.Engine, leases: Leases) -> None:
    table = Table.of(unique("dbserver"), "public", "customers", {"id": INT32, "name": OPT_STRING})
    target = unique("customers")
    events = changes(table)
    produce(leases.servers, table, events)
    config = {
        "connection.url": f"jdbc:postgresql://127.0.0.1:5432/{DB_NAME}?user=postgres",
        "table.name.format": f"{SCHEMA}.{target}",
        "insert.mode": "upsert", "delete.enabled": "true", "pk.mode": "record_key",
        "auto.create": "true",
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.add.fields": "op,source.lsn",
    }  # fmt: skip
    try:
        result = leases.sink(unique("sink"), [table.topic], config)
        assert result.trace is None, result.trace
        # the SMT drops the three tombstones; the deletes reach the sink as null values
        assert (result.polled, result.records) == (len(events), len(events) - 3)
        with postgres.connect() as conn:
            rows = conn.exec_driver_sql(
                f'SELECT id, name, "__op", "__source_lsn" FROM {SCHEMA}."{target}" ORDER BY id'
            ).all()
        assert [tuple(r) for r in rows] == [
            (2, "row 2 renamed", "u", 1056),
            (4, "row 4 last", "u", 1104),
            (5, "row 5 again", "c", 1088),
            (6, "row 6", "c", 1048),
        ]
    finally:
        with postgres.begin() as conn:
            conn.exec_driver_sql(f'DROP TABLE IF EXISTS {SCHEMA}."{target}"')
