"""Source -> Kafka (JsonConverter with schemas) -> sink, through the framework's leases."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Database, Leases, unique

pytestmark = pytest.mark.broker


def copy_table(db: Database, leases: Leases, rows: int, *, batch: str = "1000") -> str:
    """Copy an all-types table of ``rows`` rows to a new table; returns the target's name."""
    source, name = unique("src"), unique("conn")
    prefix = unique("jdbc") + "-"
    db.create_all_types(source)
    db.insert_all_types(source, 1, rows)
    source_config = {
        "connection.url": db.jdbc_url, "mode": "incrementing",
        "incrementing.column.name": "id", "table.whitelist": source, "tables": _fqn(db, source),
        "topic.prefix": prefix, "batch.max.rows": batch, "poll.interval.ms": "100",
    }  # fmt: skip
    copied = 0
    for _ in range(50):
        # The lease ends once it polled the rest (not at max_ms): the next one checks that no
        # row is served twice.
        result = leases.source(name, source_config, max_records=rows - copied)
        assert result.trace is None, result.trace
        copied += result.records
        if copied >= rows:
            break
    assert copied == rows
    again = leases.source(name, source_config, max_ms=1000)
    assert again.trace is None and again.records == 0
    target = unique("dst")
    sink_config = {
        "connection.url": db.jdbc_url, "auto.create": "true", "insert.mode": "upsert",
        "pk.mode": "record_value", "pk.fields": "id", "table.name.format": target,
        "batch.size": "3000",
    }  # fmt: skip
    written = 0
    for _ in range(50):
        result = leases.sink(
            name + "-sink", [prefix + source], sink_config, max_records=rows - written
        )
        assert result.trace is None, result.trace
        written += result.records
        if written >= rows:
            break
    assert written == rows
    return f"{source}|{target}"


def _fqn(db: Database, table: str) -> str:
    from .conftest import DB_NAME

    if db.kind == "postgresql":
        return f"{DB_NAME}.public.{table}"
    if db.kind == "mariadb":
        return f"{DB_NAME}.{table}"
    return table


def assert_equal_tables(db: Database, pair: str) -> None:
    source, target = pair.split("|")
    src = db.rows(f"SELECT * FROM {db.quote(source)} ORDER BY id")
    dst_cols = _column_names(db, source)
    dst = db.rows(
        f"SELECT {', '.join(map(db.quote, dst_cols))} FROM {db.quote(target)} ORDER BY id"
    )
    assert len(src) == len(dst)
    for a, b in zip(src, dst, strict=True):
        assert _norm(a) == _norm(b)
    db.drop(source, target)


def _column_names(db: Database, table: str) -> list[str]:
    import sqlalchemy as sa

    with db.engine.connect() as conn:
        return [c["name"] for c in sa.inspect(conn).get_columns(table)]


def _norm(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def test_round_trip_every_type(db: Database, leases: Leases) -> None:
    pair = copy_table(db, leases, 3000)
    assert_equal_tables(db, pair)


@pytest.mark.slow
def test_round_trip_100k_rows(db: Database, leases: Leases) -> None:
    pair = copy_table(db, leases, 100_000, batch="5000")
    assert_equal_tables(db, pair)
