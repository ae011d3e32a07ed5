"""Schema changes: rows written before and after an ALTER TABLE that happened while the
connector was stopped are read with their own columns (the schema history topic), and the DDL
is sent as Debezium's schema change event."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.cdc_mariadb import ThrowawayMariaDb
from tests.support.cdc_servers import read_topic

from .conftest import Leases, connector_config, unique

pytestmark = pytest.mark.broker


def fields(envelope: dict[str, Any]) -> list[str]:
    after = next(f for f in envelope["schema"]["fields"] if f["field"] == "after")
    return [f["field"] for f in after["fields"]]


def history_config(server: ThrowawayMariaDb, database: str, leases: Leases) -> dict[str, str]:
    return connector_config(server, database, **{
        "schema.history.internal.kafka.topic": unique("history"),
        "schema.history.internal.kafka.bootstrap.servers": leases.servers})  # fmt: skip


def test_rows_across_an_alter_table_made_while_stopped_keep_their_columns(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT)",
                        "INSERT INTO t VALUES (1, 'one', 10)", database=database)  # fmt: skip
    config = history_config(cdc_mariadb, database, leases)
    prefix = config["topic.prefix"]
    leases.run(config)  # the snapshot
    # The connector is stopped: a row, the DDL, a row.
    cdc_mariadb.execute("INSERT INTO t VALUES (2, 'two', 20)",
                        "ALTER TABLE t ADD COLUMN c INT, DROP COLUMN b, RENAME COLUMN a TO a2",
                        "INSERT INTO t VALUES (3, 'three', 30)",
                        "UPDATE t SET a2 = 'TWO' WHERE id = 2", database=database)  # fmt: skip
    leases.run(config)
    values = [v for _, v in read_topic(leases.servers, f"{prefix}.{database}.t", 4)]
    assert [v["payload"]["op"] for v in values] == ["r", "c", "c", "u"]
    assert [fields(v) for v in values] == [["id", "a", "b"], ["id", "a", "b"],
                                          ["id", "a2", "c"], ["id", "a2", "c"]]  # fmt: skip
    assert values[1]["payload"]["after"] == {"id": 2, "a": "two", "b": 20}
    assert values[2]["payload"]["after"] == {"id": 3, "a2": "three", "c": 30}
    assert values[3]["payload"]["before"] == {"id": 2, "a2": "two", "c": None}

    (key, change), = read_topic(leases.servers, prefix, 1)  # fmt: skip
    assert key["schema"]["name"] == "io.debezium.connector.mariadb.SchemaChangeKey"
    assert key["payload"] == {"databaseName": database}
    assert change["schema"]["name"] == "io.debezium.connector.mariadb.SchemaChangeValue"
    payload = change["payload"]
    assert payload["ddl"].startswith("ALTER TABLE t ADD COLUMN c INT")
    assert (payload["databaseName"], payload["schemaName"]) == (database, None)
    assert (payload["source"]["db"], payload["source"]["table"]) == (database, "t")
    (table_change,) = payload["tableChanges"]
    assert (table_change["type"], table_change["id"]) == ("ALTER", f'"{database}"."t"')
    table = table_change["table"]
    assert table["primaryKeyColumnNames"] == ["id"]
    columns = [(c["name"], c["typeName"], c["optional"], c["position"]) for c in table["columns"]]
    assert columns == [("id", "INT", False, 1), ("a2", "VARCHAR", True, 2), ("c", "INT", True, 3)]


def test_a_restart_behind_a_seen_ddl_reads_the_rows_with_the_columns_of_their_time(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)",
                        "INSERT INTO t VALUES (0, 0)", database=database)  # fmt: skip
    config = history_config(cdc_mariadb, database, leases)
    config["include.schema.changes"] = "false"
    leases.run(config)  # the snapshot
    start = leases.offsets
    cdc_mariadb.execute("INSERT INTO t VALUES (1, 1)", "ALTER TABLE t DROP COLUMN a",
                        "INSERT INTO t VALUES (2)", database=database)  # fmt: skip
    leases.run(config)  # sees the DDL and records it
    # Both DDLs below happen before the rewound task reads the first one again: the history,
    # not the server, gives the table as of each position.
    cdc_mariadb.execute("ALTER TABLE t ADD COLUMN z INT", database=database)
    leases.offsets = start
    leases.run(config)
    topic = f"{config['topic.prefix']}.{database}.t"
    values = [v for _, v in read_topic(leases.servers, topic, 5)]
    assert [(v["payload"]["after"], fields(v)) for v in values] == [
        ({"id": 0, "a": 0}, ["id", "a"]), ({"id": 1, "a": 1}, ["id", "a"]), ({"id": 2}, ["id"]),
        ({"id": 1, "a": 1}, ["id", "a"]), ({"id": 2}, ["id"])]  # fmt: skip
    assert read_topic(leases.servers, config["topic.prefix"], 0) == []
