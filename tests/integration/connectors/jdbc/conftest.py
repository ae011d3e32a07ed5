"""Fixtures of the JDBC connector tests: the machine's PostgreSQL and MariaDB (a missing
server fails the tests) and SQLite, each with an all-types table helper."""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from tests.support.databases import ensure_postgres_database

from sparkcat.connectors.jdbc.dialect import dispose_engines
from sparkcat.connectors.jdbc.types import sqlite_timestamp
from sparkcat.runtime.tasks import client_cache

DB_NAME = "sparkcat_jdbc_test"
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
MARIADB_ADMIN = "mysql+pymysql://root@127.0.0.1:3306/"

_ALL_TYPES = {
    "postgresql": """(id BIGSERIAL PRIMARY KEY, c_bool BOOLEAN, c_int16 SMALLINT,
        c_int32 INTEGER, c_int64 BIGINT, c_float32 REAL, c_float64 DOUBLE PRECISION,
        c_decimal NUMERIC(12,3), c_text TEXT, c_varchar VARCHAR(50), c_bytes BYTEA,
        c_date DATE, c_time TIME(3), c_ts TIMESTAMP(3))""",
    "mariadb": """(id BIGINT AUTO_INCREMENT PRIMARY KEY, c_int8 TINYINT, c_int16 SMALLINT,
        c_int32 INT, c_int64 BIGINT, c_float32 FLOAT, c_float64 DOUBLE,
        c_decimal DECIMAL(12,3), c_text TEXT, c_varchar VARCHAR(50), c_bytes BLOB,
        c_date DATE, c_time TIME(3), c_ts DATETIME(3))""",
    "sqlite": """(id INTEGER PRIMARY KEY, c_bool BOOLEAN, c_int16 SMALLINT, c_int32 INTEGER,
        c_int64 BIGINT, c_float64 FLOAT, c_decimal DECIMAL(12,3), c_text TEXT,
        c_varchar VARCHAR(50), c_bytes BLOB, c_date DATE, c_time TIME, c_ts DATETIME)""",
}


@dataclass
class Database:
    """One database under test: its JDBC URL (as a Kafka Connect user writes it), engine."""

    kind: str
    jdbc_url: str
    engine: sa.Engine

    def execute(self, sql: str, params: Any = None) -> None:
        with self.engine.begin() as conn:
            if params is None:
                conn.exec_driver_sql(sql)
            else:
                conn.exec_driver_sql(sql, params)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql)]

    def quote(self, name: str) -> str:
        return f"`{name}`" if self.kind == "mariadb" else f'"{name}"'

    def drop(self, *tables: str) -> None:
        for table in tables:
            self.execute(f"DROP TABLE IF EXISTS {self.quote(table)}")

    @property
    def mark(self) -> str:
        return "?" if self.kind == "sqlite" else "%s"

    def create_all_types(self, table: str) -> None:
        self.drop(table)
        self.execute(f"CREATE TABLE {self.quote(table)} {_ALL_TYPES[self.kind]}")

    def insert_all_types(self, table: str, start: int, count: int) -> None:
        """``count`` rows numbered from ``start``; every 7th row holds NULLs."""
        rows = [self._row(i) for i in range(start, start + count)]
        columns = self._columns()
        marks = ", ".join([self.mark] * len(columns))
        sql = f"INSERT INTO {self.quote(table)} ({', '.join(columns)}) VALUES ({marks})"
        with self.engine.begin() as conn:
            for chunk in range(0, len(rows), 5000):
                conn.exec_driver_sql(sql, rows[chunk : chunk + 5000])

    def _columns(self) -> list[str]:
        names = ["id", "c_int16", "c_int32", "c_int64", "c_float64", "c_decimal", "c_text",
                 "c_varchar", "c_bytes", "c_date", "c_time", "c_ts"]  # fmt: skip
        if self.kind == "mariadb":
            names += ["c_int8", "c_float32"]
        elif self.kind == "postgresql":
            names += ["c_bool", "c_float32"]
        else:
            names += ["c_bool"]
        return names

    def _row(self, i: int) -> tuple[Any, ...]:
        if i % 7 == 3:
            return (i,) + (None,) * (len(self._columns()) - 1)
        ts = datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=i, milliseconds=i % 1000)
        date = datetime.date(2000, 1, 1) + datetime.timedelta(days=i % 9000)
        time = datetime.time(i % 24, i % 60, (i * 7) % 60, (i % 1000) * 1000)
        dec = decimal.Decimal(i * 7 - 500).scaleb(-3)
        values: list[Any] = [i, (i % 30000) - 15000, i * 1000 - 7, i * 1_000_003 - 2**40,
                             i / 8 - 3.25, dec, f"text {i} é€", f"v{i}", bytes([i % 256, 0, 255]),
                             date, time, ts]  # fmt: skip
        if self.kind == "sqlite":
            values[9], values[10], values[11] = date.isoformat(), time.isoformat(), (
                sqlite_timestamp(ts))  # fmt: skip
            values[5] = str(dec)
        if self.kind == "mariadb":
            values += [i % 256 - 128, i / 4 - 1.5]
        elif self.kind == "postgresql":
            values += [i % 2 == 0, i / 4 - 1.5]
        else:
            values += [i % 2]
        return tuple(values)


def _postgres() -> Database:
    ensure_postgres_database(DB_NAME)
    url = f"jdbc:postgresql://127.0.0.1:5432/{DB_NAME}?user=postgres"
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}")
    return Database("postgresql", url, engine)


def _mariadb() -> Database:
    admin = sa.create_engine(MARIADB_ADMIN)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE IF NOT EXISTS {DB_NAME}")
    admin.dispose()
    url = f"jdbc:mariadb://127.0.0.1:3306/{DB_NAME}?user=root"
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:3306/{DB_NAME}")
    return Database("mariadb", url, engine)


def _sqlite(path: Path) -> Database:
    return Database("sqlite", f"jdbc:sqlite:{path}", sa.create_engine(f"sqlite:///{path}"))


@pytest.fixture(params=["postgresql", "mariadb", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """Each database in turn."""
    kind = request.param
    database = (
        _postgres() if kind == "postgresql"
        else _mariadb() if kind == "mariadb"
        else _sqlite(tmp_path / "test.db")
    )  # fmt: skip
    yield database
    database.engine.dispose()
    dispose_engines()


@pytest.fixture(scope="module")
def servers(kafka_broker: Any) -> Iterator[str]:
    yield kafka_broker.bootstrap_servers
    client_cache.close_all()


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


JSON = "org.apache.kafka.connect.json.JsonConverter"
SOURCE_TASK = "io.confluent.connect.jdbc.source.JdbcSourceTask"
SINK_TASK = "io.confluent.connect.jdbc.sink.JdbcSinkTask"


class Leases:
    """Runs source and sink leases of the JDBC tasks against the broker, as executors do."""

    def __init__(self, servers: str) -> None:
        self.servers = servers
        self.offsets: dict[str, tuple[tuple[dict[str, Any], dict[str, Any]], ...]] = {}
        self.sink_positions: dict[str, dict[tuple[str, int], int]] = {}

    def _worker(self) -> dict[str, str]:
        return {"bootstrap.servers": self.servers, "key.converter": JSON, "value.converter": JSON}

    def source(self, name: str, config: dict[str, str], *, max_ms: int = 3000,
               max_records: int = 1_000_000) -> Any:  # fmt: skip
        """One source lease of task 0 that resumes from the offsets of the previous one."""
        from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

        spec = LeaseSpec(
            connector=name, task=0, generation=1, kind="source",
            task_config={"task.class": SOURCE_TASK, **config}, connector_config=dict(config),
            worker_config=self._worker(), max_ms=max_ms, max_records=max_records,
            control=None, source_offsets=self.offsets.get(name, ()),
        )  # fmt: skip
        result = run_lease(spec)
        known = {repr(sorted(p.items())): (p, o) for p, o in self.offsets.get(name, ())}
        for partition, offset in result.source_offsets:
            if offset is not None:
                known[repr(sorted(partition.items()))] = (partition, offset)
        self.offsets[name] = tuple(known.values())
        return result

    def sink(self, name: str, topics: list[str], config: dict[str, str], *,
             max_ms: int = 3000, max_records: int = 1_000_000) -> Any:  # fmt: skip
        """One sink lease over partition 0 of ``topics``, from the last lease's positions."""
        from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

        positions = self.sink_positions.setdefault(name, {})
        spec = LeaseSpec(
            connector=name, task=0, generation=1, kind="sink",
            task_config={"task.class": SINK_TASK, "topics": ",".join(topics), **config},
            connector_config={"topics": ",".join(topics), **config},
            worker_config=self._worker(), max_ms=max_ms, max_records=max_records,
            control=None,
            assignment=tuple((t, 0, positions.get((t, 0))) for t in topics),
        )  # fmt: skip
        result = run_lease(spec)
        for topic, partition, offset in result.sink_offsets:
            positions[(topic, partition)] = offset
        return result


@pytest.fixture
def leases(servers: str) -> Leases:
    return Leases(servers)


def read_values(servers: str, topic: str, expected: int, timeout_s: float = 20.0) -> list[Any]:
    """The JSON payloads of partition 0 of ``topic``: read from the beginning until
    ``expected`` arrived (or ``timeout_s`` passed), then whatever else follows at once, so a
    duplicate still shows. Assigned, no consumer group. (The broker's ListOffsets answer is
    the last batch's base offset + 1, so the watermark cannot say when all have arrived.)"""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "unused",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50,
                         "topic.metadata.refresh.interval.ms": 500})  # fmt: skip
    values: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        while len(values) < expected and time.monotonic() < deadline:
            values += _payloads(consumer.consume(1000, 0.2))
        values += _payloads(consumer.consume(1000, 0.3))
    finally:
        consumer.close()
    return values


def _payloads(messages: list[Any]) -> list[Any]:
    import orjson

    return [orjson.loads(m.value())["payload"] for m in messages if m.error() is None]


def produce_json(servers: str, topic: str, records: list[tuple[Any, Any]]) -> None:
    """Messages whose key and value are JsonConverter envelopes: ``(key, value)`` pairs of
    ``{"schema":..., "payload":...}`` dicts (``None`` for a null)."""
    import orjson
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for key, value in records:
        producer.produce(topic, None if value is None else orjson.dumps(value),
                         None if key is None else orjson.dumps(key), 0)  # fmt: skip
    assert producer.flush(10) == 0


def struct_schema(name: str, fields: dict[str, str], optional: tuple[str, ...] = ()) -> Any:
    return {"type": "struct", "name": name, "optional": False, "fields": [
        {"field": f, "type": t, "optional": f in optional} for f, t in fields.items()]}  # fmt: skip


def fqn(db: Database, table: str) -> str:
    """The table's name in a source task's ``tables`` (Confluent's fully qualified name)."""
    if db.kind == "postgresql":
        return f"{DB_NAME}.public.{table}"
    if db.kind == "mariadb":
        return f"{DB_NAME}.{table}"
    return table
