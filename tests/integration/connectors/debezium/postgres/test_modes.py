"""PostgresConnector's snapshot modes, publication modes, an interrupted snapshot, and the
streamed events beyond plain c/u/d: key changes, truncates, unchanged TOASTed values."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.cdc_servers import PostgresServer

from sparkcat.connectors.debezium.postgres import snapshot

from .conftest import Leases, connector_config, read_topic

pytestmark = pytest.mark.broker

TABLE = "CREATE TABLE public.items (id INT PRIMARY KEY, label TEXT NOT NULL)"


def ops(leases: Leases, config: dict[str, str], expected: int) -> list[tuple[Any, Any]]:
    topic = f"{config['topic.prefix']}.public.items"
    return [
        (k and k["payload"]["id"], v and v["payload"]["op"])
        for k, v in read_topic(leases.servers, topic, expected, timeout_s=5.0)
    ]


def insert(server: PostgresServer, dbname: str, *ids: int) -> None:
    values = ", ".join(f"({i}, 'l{i}')" for i in ids)
    server.execute(f"INSERT INTO items VALUES {values}", dbname=dbname)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("initial", [(1, "r"), (2, "c")]),
        ("initial_only", [(1, "r")]),
        ("no_data", [(2, "c")]),
        ("never", [(2, "c")]),
        ("when_needed", [(1, "r"), (2, "c")]),
    ],
)
def test_snapshot_modes(
    cdc_postgres: PostgresServer, database: str, leases: Leases, mode: str, expected: Any
) -> None:
    cdc_postgres.execute(TABLE, dbname=database)
    insert(cdc_postgres, database, 1)
    config = connector_config(cdc_postgres, database, **{"snapshot.mode": mode})
    leases.run(config, max_ms=500)
    insert(cdc_postgres, database, 2)
    leases.run(config, max_ms=800)
    assert ops(leases, config, len(expected)) == expected


def test_snapshot_mode_always_snapshots_once_per_connector_start(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    from sparkcat.connectors.debezium.postgres.source_task import fingerprint

    cdc_postgres.execute(TABLE, dbname=database)
    insert(cdc_postgres, database, 1)
    config = connector_config(cdc_postgres, database, **{"snapshot.mode": "always"})
    # What PostgresConnector.start writes into the task config: the offset at its start.
    started = {**config, "snapshot.epoch": fingerprint(None)}
    leases.run(started, max_ms=500)
    insert(cdc_postgres, database, 2)
    leases.run(started, max_ms=800)  # same connector start: no second snapshot
    restarted = {**config, "snapshot.epoch": fingerprint(leases.offsets[0][1])}
    leases.run(restarted, max_ms=800)
    assert ops(leases, config, 5) == [(1, "r"), (2, "c"), (1, "r"), (2, "r")]


def test_interrupted_snapshot_restarts_from_scratch(
    cdc_postgres: PostgresServer, database: str, leases: Leases, monkeypatch: Any
) -> None:
    cdc_postgres.execute(TABLE, dbname=database)
    insert(cdc_postgres, database, *range(1, 301))
    config = connector_config(cdc_postgres, database, **{"max.batch.size": "50"})
    # Nothing waits for the next lease: as if it ran in another process.
    monkeypatch.setattr(snapshot, "PARK_SECONDS", 0.0)
    leases.run(config, max_records=100)
    assert leases.offsets[0][1]["snapshot_completed"] is False
    insert(cdc_postgres, database, 301)
    leases.run(config)
    events = ops(leases, config, 100 + 301)
    assert [i for i, _ in events[100:]] == list(range(1, 302))
    assert {op for _, op in events} == {"r"}
    assert leases.offsets[0][1]["snapshot_completed"] is True


@pytest.mark.parametrize("mode", ["filtered", "disabled"])
def test_publication_modes(
    cdc_postgres: PostgresServer, database: str, leases: Leases, mode: str
) -> None:
    cdc_postgres.execute(TABLE + "; CREATE TABLE other (id INT PRIMARY KEY)", dbname=database)
    config = connector_config(cdc_postgres, database, **{
        "publication.autocreate.mode": mode, "table.include.list": "public.items",
        "publication.name": "pub_" + config_suffix(database)})  # fmt: skip
    if mode == "disabled":
        with pytest.raises(AssertionError, match="does not exist"):
            leases.run(config, max_ms=300)
        cdc_postgres.execute(f"CREATE PUBLICATION {config['publication.name']} FOR TABLE items",
                             dbname=database)  # fmt: skip
        leases.run(config, max_ms=300)
    else:
        leases.run(config, max_ms=300)
        published = cdc_postgres.execute(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s",
            (config["publication.name"],), dbname=database)  # fmt: skip
        assert published == [("public", "items")]


def config_suffix(database: str) -> str:
    return database.rsplit("_", 1)[-1]


def test_key_change_truncate_and_unchanged_toast(
    cdc_postgres: PostgresServer, database: str, leases: Leases
) -> None:
    cdc_postgres.execute("CREATE TABLE items (id INT PRIMARY KEY, label TEXT NOT NULL, "
                         "big TEXT)", dbname=database)  # fmt: skip
    config = connector_config(cdc_postgres, database, **{
        "snapshot.mode": "no_data", "skipped.operations": "none"})  # fmt: skip
    leases.run(config, max_ms=300)
    # 32 kB of hex digits compress to far more than 2 kB: stored out of line (TOASTed).
    cdc_postgres.execute(
        "INSERT INTO items SELECT 1, 'a', string_agg(md5(g::text), '') "
        "FROM generate_series(1, 1000) g", dbname=database)  # fmt: skip
    ((big,),) = cdc_postgres.execute("SELECT big FROM items", dbname=database)
    cdc_postgres.execute(
        "UPDATE items SET label = 'b' WHERE id = 1; UPDATE items SET id = 2 WHERE id = 1; "
        "TRUNCATE items", dbname=database)  # fmt: skip
    leases.run(config)
    topic = f"{config['topic.prefix']}.public.items"
    events = read_topic(leases.servers, topic, 6)
    shape = [(k and k["payload"]["id"], v and v["payload"]["op"]) for k, v in events]
    assert shape == [(1, "c"), (1, "u"), (1, "d"), (1, None), (2, "c"), (None, "t")]
    assert events[1][1]["payload"]["after"]["big"] == "__debezium_unavailable_value"
    assert events[0][1]["payload"]["after"]["big"] == big


def test_slot_drop_on_stop(cdc_postgres: PostgresServer, database: str, leases: Leases) -> None:
    from sparkcat.connectors.debezium.postgres import PostgresConnector

    cdc_postgres.execute(TABLE, dbname=database)
    config = connector_config(cdc_postgres, database, **{"slot.drop.on.stop": "true"})
    leases.run(config, max_ms=300)
    slots = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s"
    assert cdc_postgres.execute(slots, (config["slot.name"],))[0][0] == 1
    connector = PostgresConnector()
    connector.start(config)
    connector.stop()
    assert cdc_postgres.execute(slots, (config["slot.name"],))[0][0] == 0
