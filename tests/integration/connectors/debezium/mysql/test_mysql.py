"""MariaDbConnector/MySqlConnector against the session's throwaway MariaDB (ROW binlog), its task
run in source leases to the broker: the snapshot and the streamed changes as Debezium writes
them, decimals in both modes, restarts from committed offsets, snapshot modes, validation."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from tests.support.cdc_mariadb import SERVER_ID, ThrowawayMariaDb

from sparkcat.connectors.debezium.mysql import MariaDbConnector, MySqlConnector

from .conftest import Leases, connector_config, read_topic

pytestmark = pytest.mark.broker

TABLE = ("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, "
         "price DECIMAL(10,2), seen DATETIME(3), born DATE, kind ENUM('a','b'), "
         "flags SET('x','y','z'), at TIMESTAMP(6) NULL, wake TIME)")  # fmt: skip
ROW_1 = "(1, 'ann', 1.50, '2024-01-02 03:04:05.123', '2000-02-29', 'b', 'z,x', " \
        "'2024-05-06 07:08:09.123456', '10:11:12')"  # fmt: skip


def payloads(messages: list[Any]) -> list[Any]:
    return [(k and k["payload"], v and v["payload"]) for k, v in messages]


def test_snapshot_then_changes_are_debezium_events(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute(TABLE, f"INSERT INTO customers VALUES {ROW_1}",
                        "INSERT INTO customers (id, name) VALUES (2, 'bob')",
                        database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database)
    prefix = config["topic.prefix"]
    topic = f"{prefix}.{database}.customers"
    leases.run(config)
    cdc_mariadb.execute("INSERT INTO customers (id, name, price) VALUES (3, 'cy', 2)",
                        "UPDATE customers SET name = 'ann2' WHERE id = 1",
                        "DELETE FROM customers WHERE id = 2", database=database)  # fmt: skip
    leases.run(config)
    messages = read_topic(leases.servers, topic, 6)
    events = payloads(messages)
    assert [(k["id"], v and v["op"]) for k, v in events] == [
        (1, "r"), (2, "r"), (3, "c"), (1, "u"), (2, "d"), (2, None)]  # fmt: skip
    key, value = messages[0]
    assert key["schema"] == {
        "type": "struct",
        "optional": False,
        "name": f"{topic}.Key",
        "fields": [{"type": "int32", "optional": False, "field": "id"}],
    }
    assert value["schema"]["name"] == f"{topic}.Envelope"
    assert [f["field"] for f in value["schema"]["fields"]] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]  # fmt: skip
    row = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
    assert (row["price"]["name"], row["price"]["parameters"]) == (
        "org.apache.kafka.connect.data.Decimal",
        {"scale": "2", "connect.decimal.precision": "10"})  # fmt: skip
    assert row["seen"]["name"] == "io.debezium.time.Timestamp"
    assert row["born"]["name"] == "io.debezium.time.Date"
    assert row["at"]["name"] == "io.debezium.time.ZonedTimestamp"
    assert row["wake"]["name"] == "io.debezium.time.MicroTime"
    assert (row["kind"]["name"], row["kind"]["parameters"]) == (
        "io.debezium.data.Enum",
        {"allowed": "a,b"},
    )
    assert row["flags"]["name"] == "io.debezium.data.EnumSet"
    first = events[0][1]
    assert first["after"] == {
        "id": 1, "name": "ann", "price": "AJY=",  # 150, scale 2
        "seen": 1704164645123, "born": 11016, "kind": "b", "flags": "x,z",
        "at": "2024-05-06T07:08:09.123456Z", "wake": 36672000000}  # fmt: skip
    source = first["source"]
    assert source["snapshot"] == "first" and events[1][1]["source"]["snapshot"] == "last"
    assert {k: source[k] for k in ("version", "connector", "name", "db", "table", "server_id",
                                   "gtid", "row", "thread", "query", "sequence")} == {
        "version": "3.1.3.Final", "connector": "mariadb", "name": prefix, "db": database,
        "table": "customers", "server_id": 0, "gtid": None, "row": 0, "thread": None,
        "query": None, "sequence": None}  # fmt: skip
    assert source["file"].startswith("binlog.") and source["pos"] > 0
    create, update, delete = events[2][1], events[3][1], events[4][1]
    assert create["source"]["snapshot"] == "false" and create["source"]["server_id"] == SERVER_ID
    assert create["source"]["gtid"].startswith(f"0-{SERVER_ID}-")
    assert create["source"]["ts_ms"] % 1000 == 0
    # MariaDB opens transactions with a GTID event, which names no thread.
    assert create["source"]["thread"] is None
    assert create["source"]["pos"] > source["pos"]
    assert create["after"]["price"] == "AMg="  # 2.00
    assert update["before"]["name"] == "ann" and update["after"]["name"] == "ann2"
    assert delete["before"]["name"] == "bob" and delete["after"] is None
    assert messages[5][1] is None  # the tombstone
    (partition, offset), = leases.offsets  # fmt: skip
    assert partition == {"server": prefix}
    assert {"file", "pos", "gtids", "server_id", "ts_sec"} <= set(offset)
    assert "snapshot" not in offset


@pytest.mark.parametrize("mode, expected", [("precise", "AJY="), ("string", "1.50"),
                                             ("double", 1.5)])  # fmt: skip
def test_decimal_handling_modes(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases, mode: str, expected: Any
) -> None:
    cdc_mariadb.execute(TABLE, f"INSERT INTO customers VALUES {ROW_1}", database=database)
    config = connector_config(cdc_mariadb, database, **{"decimal.handling.mode": mode})
    leases.run(config)
    cdc_mariadb.execute("UPDATE customers SET price = 1.50, name = 'x'", database=database)
    leases.run(config)
    topic = f"{config['topic.prefix']}.{database}.customers"
    messages = read_topic(leases.servers, topic, 2)
    assert [v["payload"]["after"]["price"] for _, v in messages] == [expected, expected]
    schema = messages[0][1]["schema"]["fields"][1]["fields"][2]
    assert schema["type"] == {"precise": "bytes", "string": "string", "double": "double"}[mode]


def test_restart_resumes_without_loss_or_repeat(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                        "INSERT INTO t VALUES (-1, 0), (-2, 0), (-3, 0)",
                        database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database, **{"max.batch.size": "2"})
    # Leases of one or two records: the snapshot spans leases, streams stop mid-transaction.
    for _ in range(3):
        leases.run(config, max_records=1)
    expected = {-1, -2, -3}
    for round_ in range(4):
        cdc_mariadb.execute(f"INSERT INTO t VALUES ({round_ * 10}, 1), ({round_ * 10 + 1}, 1)",
                            f"INSERT INTO t VALUES ({round_ * 10 + 2}, 1)",
                            database=database)  # fmt: skip
        expected |= {round_ * 10, round_ * 10 + 1, round_ * 10 + 2}
        leases.run(config, max_records=2)
    for _ in range(3):
        leases.run(config, max_ms=2000)  # drains what the short leases left
    topic = f"{config['topic.prefix']}.{database}.t"
    events = payloads(read_topic(leases.servers, topic, len(expected)))
    ids = [k["id"] for k, _ in events]
    assert sorted(set(ids)) == sorted(expected)
    assert len(ids) == len(set(ids)), f"a change was sent twice: {ids}"
    assert [v["op"] for _, v in events].count("r") == 3


def test_snapshot_modes(cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases) -> None:
    def ops(mode: str) -> list[Any]:
        table = f"t_{mode}"
        cdc_mariadb.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY)",
                            f"INSERT INTO {table} VALUES (1)", database=database)  # fmt: skip
        config = connector_config(cdc_mariadb, database, **{
            "snapshot.mode": mode, "table.include.list": f"{database}\\.{table}"})  # fmt: skip
        runner = Leases(leases.servers)
        connector = MariaDbConnector()
        connector.initialize(_EmptyContext())  # type: ignore[arg-type]
        connector.start(config)
        (task_config,) = connector.task_configs(1)
        runner.run(task_config, max_ms=3000)
        cdc_mariadb.execute(f"INSERT INTO {table} VALUES (2)", database=database)
        runner.run(task_config, max_ms=5000)
        topic = f"{config['topic.prefix']}.{database}.{table}"
        return [(k["payload"]["id"], v["payload"]["op"])
                for k, v in read_topic(leases.servers, topic, 1, 5)]  # fmt: skip

    assert ops("initial") == [(1, "r"), (2, "c")]
    assert ops("initial_only") == [(1, "r")]
    assert ops("no_data") == [(2, "c")]
    assert ops("schema_only") == [(2, "c")]
    # never: the binlog from its start, so the table's first insert is streamed too
    assert ops("never") == [(1, "c"), (2, "c")]


def test_skipped_operations_tombstones_and_filters(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE a (id INT PRIMARY KEY, secret VARCHAR(9), n INT)",
                        "CREATE TABLE b (id INT PRIMARY KEY)", database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database, **{
        "snapshot.mode": "no_data", "skipped.operations": "u", "tombstones.on.delete": "false",
        "table.include.list": f"{database}\\.a", "column.exclude.list": f"{database}\\.a\\.secret",
        "message.key.columns": f"{database}.a:n"})  # fmt: skip
    connector = MariaDbConnector()
    connector.initialize(_EmptyContext())  # type: ignore[arg-type]
    connector.start(config)
    (task_config,) = connector.task_configs(1)
    leases.run(task_config, max_ms=300)
    cdc_mariadb.execute("INSERT INTO a VALUES (1, 's', 7)", "INSERT INTO b VALUES (1)",
                        "UPDATE a SET n = 7 WHERE id = 1", "DELETE FROM a",
                        database=database)  # fmt: skip
    leases.run(task_config)
    events = payloads(read_topic(leases.servers, f"{config['topic.prefix']}.{database}.a", 2))
    assert [(k, v["op"]) for k, v in events] == [({"n": 7}, "c"), ({"n": 7}, "d")]
    assert events[0][1]["after"] == {"id": 1, "n": 7}
    # TRUNCATE is an op=t event once skipped.operations leaves t out
    truncating = {**task_config, "skipped.operations": "none"}
    leases.run(truncating, max_ms=300)
    cdc_mariadb.execute("INSERT INTO a VALUES (2, 's', 8)", "TRUNCATE TABLE a", database=database)
    leases.run(truncating)
    ops = [(k, v and v["payload"]["op"]) for k, v in read_topic(
        leases.servers, f"{config['topic.prefix']}.{database}.a", 4)]  # fmt: skip
    assert ops[2:] == [({"payload": {"n": 8}, "schema": ops[2][0]["schema"]}, "c"), (None, "t")]
    assert read_topic(leases.servers, f"{config['topic.prefix']}.{database}.b", 0, 2) == []


class _EmptyContext:
    def offset_storage_reader(self) -> Any:
        from sparkcat.runtime.tasks.task_context import LeaseOffsetStorageReader

        return LeaseOffsetStorageReader(())


def test_validation_names_the_problem(cdc_mariadb: ThrowawayMariaDb, database: str) -> None:
    def errors(config: dict[str, str]) -> dict[str, list[str]]:
        result = MySqlConnector().validate(config)
        return {v.name: v.error_messages for v in result if v.error_messages}

    config = connector_config(cdc_mariadb, database)
    assert errors(config) == {}
    missing = {k: v for k, v in config.items() if k not in ("topic.prefix", "database.server.id")}
    assert set(errors(missing)) == {"topic.prefix", "database.server.id"}
    # The machine's shared MariaDB writes no binlog; it is only read here.
    shared = {**config, "database.port": "3306", "database.user": "root", "database.password": ""}
    (message,) = errors(shared)["database.hostname"]
    assert "binlog" in message and "log_bin=OFF" in message
    both = {**config, "table.include.list": "a", "table.exclude.list": "b"}
    assert list(errors(both)) == ["table.exclude.list"]


def test_interrupted_snapshot_restarts_from_scratch(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY)",
                        "INSERT INTO t VALUES (1), (2), (3), (4)", database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database, **{"max.batch.size": "1"})
    leases.run(config, max_records=1)
    (_, offset), = leases.offsets  # fmt: skip
    assert offset["snapshot"] is True
    # The next lease runs where the open snapshot transaction is not (here: reached under
    # another host name), so the snapshot starts again and includes a row written since.
    cdc_mariadb.execute("INSERT INTO t VALUES (5)", database=database)
    elsewhere = {**config, "database.hostname": "localhost"}
    leases.run(elsewhere)
    cdc_mariadb.execute("INSERT INTO t VALUES (6)", database=database)
    leases.run(elsewhere)
    events = payloads(read_topic(leases.servers, f"{config['topic.prefix']}.{database}.t", 7))
    assert [(k["id"], v["op"], v["source"]["snapshot"]) for k, v in events] == [
        (1, "r", "first"),
        (1, "r", "first"), (2, "r", "true"), (3, "r", "true"), (4, "r", "true"),
        (5, "r", "last"), (6, "c", "false"),
    ]  # fmt: skip
    assert "snapshot" not in leases.offsets[0][1]


@pytest.mark.parametrize("locking", ["minimal", "none"])
def test_snapshot_is_consistent_with_the_binlog_under_a_writer(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases, locking: str
) -> None:
    """``minimal`` reads the position under a global read lock; ``none`` takes MariaDB's
    position of the snapshot itself: either way every row is in the snapshot or streamed,
    once."""
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=database)
    cdc_mariadb.execute("INSERT INTO t VALUES " + ", ".join(f"({i})" for i in range(500)),
                        database=database)  # fmt: skip
    stop, written = threading.Event(), list(range(500))

    def write() -> None:
        conn = cdc_mariadb.connect(database)
        try:
            n = 10_000
            while not stop.is_set():
                with conn.cursor() as cur:
                    cur.execute(f"INSERT INTO t VALUES ({n})")
                written.append(n)
                n += 1
        finally:
            conn.close()

    writer = threading.Thread(target=write, daemon=True)
    config = connector_config(cdc_mariadb, database, **{
        "max.batch.size": "50", "snapshot.fetch.size": "40", "snapshot.locking.mode": locking,
    })  # fmt: skip
    writer.start()
    try:
        for _ in range(4):
            leases.run(config, max_records=150)
    finally:
        stop.set()
        writer.join(10)
    for _ in range(3):
        leases.run(config, max_ms=2000)
    events = payloads(read_topic(leases.servers, f"{config['topic.prefix']}.{database}.t",
                                 len(written)))  # fmt: skip
    ids = [k["id"] for k, _ in events]
    assert len(written) > 520, "the writer hardly ran"
    assert sorted(ids) == sorted(written), "a row was lost or sent twice"
    ops = [v["op"] for _, v in events]
    assert ops.count("r") >= 500 and ops.count("c") > 0


def test_heartbeats_carry_the_position_past_filtered_changes(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE quiet (id INT PRIMARY KEY)",
                        "CREATE TABLE busy (id INT PRIMARY KEY)", database=database)  # fmt: skip
    config = connector_config(cdc_mariadb, database, **{
        "heartbeat.interval.ms": "100", "table.include.list": f"{database}\\.quiet"})  # fmt: skip
    leases.run(config, max_ms=1000)
    (_, first), = leases.offsets  # fmt: skip
    cdc_mariadb.execute(*(f"INSERT INTO busy VALUES ({i})" for i in range(20)),
                        database=database)  # fmt: skip
    leases.run(config, max_ms=1000)
    (_, second), = leases.offsets  # fmt: skip
    assert (second["file"], second["pos"]) > (first["file"], first["pos"])
    prefix = config["topic.prefix"]
    beats = read_topic(leases.servers, f"__debezium-heartbeat.{prefix}", 1)
    key, value = beats[0]
    assert key["payload"] == {"serverName": prefix}
    assert key["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
    assert value["schema"]["name"] == "io.debezium.connector.common.Heartbeat"
    assert read_topic(leases.servers, f"{prefix}.{database}.busy", 0, 2) == []


def test_mysql_connector_reads_a_mariadb_server_as_mysql(
    cdc_mariadb: ThrowawayMariaDb, database: str, kafka_broker: Any
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)",
                        database=database)  # fmt: skip
    task = "io.debezium.connector.mysql.MySqlConnectorTask"
    leases = Leases(kafka_broker.bootstrap_servers, task)
    config = connector_config(cdc_mariadb, database, **{"connector.class": "MySql"})
    leases.run(config)
    cdc_mariadb.execute("INSERT INTO t VALUES (2)", database=database)
    leases.run(config)
    messages = read_topic(leases.servers, f"{config['topic.prefix']}.{database}.t", 2)
    assert messages[0][1]["schema"]["fields"][2]["name"] == "io.debezium.connector.mysql.Source"
    assert [(v["payload"]["op"], v["payload"]["source"]["connector"]) for _, v in messages] == [
        ("r", "mysql"), ("c", "mysql")]  # fmt: skip
    assert leases.offsets[0][1]["gtids"].startswith("0-")


def test_always_and_when_needed_snapshot_again(
    cdc_mariadb: ThrowawayMariaDb, database: str, leases: Leases
) -> None:
    cdc_mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)",
                        database=database)  # fmt: skip

    def start(config: dict[str, str]) -> dict[str, str]:
        from sparkcat.runtime.tasks.task_context import LeaseOffsetStorageReader

        class Context:
            def offset_storage_reader(self) -> Any:
                return LeaseOffsetStorageReader(leases.offsets)

        connector = MariaDbConnector()
        connector.initialize(Context())  # type: ignore[arg-type]
        connector.start(config)
        return connector.task_configs(1)[0]

    always = connector_config(cdc_mariadb, database, **{"snapshot.mode": "always"})
    topic = f"{always['topic.prefix']}.{database}.t"
    for _ in range(2):  # two connector starts, two leases each: one snapshot per start
        task_config = start(always)
        leases.run(task_config)
        leases.run(task_config, max_ms=1000)
    assert [v["payload"]["op"] for _, v in read_topic(leases.servers, topic, 2)] == ["r", "r"]
    # when_needed: the committed binlog file is gone from the server
    leases.offsets = ((leases.offsets[0][0], {"file": "binlog.999999", "pos": 4}),)
    leases.run(start({**always, "snapshot.mode": "when_needed"}))
    assert [v["payload"]["op"] for _, v in read_topic(leases.servers, topic, 3)] == ["r"] * 3
