"""The JDBC connectors' leases against hand-written loops, measured in one run.

    python bench/bench_jdbc.py [--rows N] [--db postgresql|mariadb|sqlite] [--no-append]

Source: a table of N rows (id, int, numeric, text, timestamp, double) -> Kafka with
JsonConverter (``schemas.enable=true``), by JdbcSourceTask leases
(:func:`sparkcat.runtime.tasks.lease.run_lease`, ``mode=incrementing``, ``batch.max.rows=5000``)
and by a hand-written loop (server-side cursor ``fetchmany(5000)`` -> build the same JSON
envelope with orjson -> ``produce``). Sink: that topic -> a new table, by JdbcSinkTask leases
(``insert.mode=insert``) and by a hand-written loop (``consume`` -> ``orjson.loads`` ->
``executemany`` per 5000 rows). Same librdkafka settings, embedded broker, same database.

Prints rows/s and lease/hand-written ratios; appends them to ``bench/RESULTS.md`` (section
``## JDBC``) unless ``--no-append``.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import platform
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka import clients
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

JSON = "org.apache.kafka.connect.json.JsonConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## JDBC"
DB = "sparkcat_jdbc_bench"
BATCH = 5000
EPOCH = datetime.datetime(1970, 1, 1)


def database(kind: str, tmp: str) -> tuple[sa.Engine, str, str]:
    """Engine, JDBC URL and fully qualified prefix of the bench database."""
    if kind == "postgresql":
        admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                                 isolation_level="AUTOCOMMIT")  # fmt: skip
        with admin.connect() as conn:
            if not conn.exec_driver_sql("SELECT 1 FROM pg_database WHERE datname=%s",
                                        (DB,)).scalar():  # fmt: skip
                conn.exec_driver_sql(f"CREATE DATABASE {DB}")
        admin.dispose()
        engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB}")
        return engine, f"jdbc:postgresql://127.0.0.1:5432/{DB}?user=postgres", f"{DB}.public."
    if kind == "mariadb":
        admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/")
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
        admin.dispose()
        engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:3306/{DB}")
        return engine, f"jdbc:mariadb://127.0.0.1:3306/{DB}?user=root", f"{DB}."
    path = Path(tmp) / "bench.db"
    return sa.create_engine(f"sqlite:///{path}"), f"jdbc:sqlite:{path}", ""


def fill(engine: sa.Engine, kind: str, table: str, n: int, with_decimal: bool) -> None:
    ts = {"postgresql": "TIMESTAMP(3)", "mariadb": "DATETIME(3)", "sqlite": "DATETIME"}[kind]
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        conn.exec_driver_sql(f"CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY, "
                             f"n INTEGER, amount {amount_type(with_decimal)}, label VARCHAR(100), "
                             f"at {ts}, "
                             "ratio DOUBLE PRECISION)")  # fmt: skip
        mark = "?" if kind == "sqlite" else "%s"
        sql = f"INSERT INTO {table} VALUES ({', '.join([mark] * 6)})"
        base = datetime.datetime(2024, 1, 1)
        for start in range(0, n, 20_000):
            rows = [(i, i * 7, str(decimal.Decimal(i).scaleb(-2)) if with_decimal else i * 3,
                     f"label number {i:09d}",
                     str(base + datetime.timedelta(seconds=i)), i / 3)
                    for i in range(start + 1, min(n, start + 20_000) + 1)]  # fmt: skip
            conn.exec_driver_sql(sql, rows)


def amount_type(with_decimal: bool) -> str:
    """DECIMAL makes JsonConverter take its exact-number decode path; BIGINT does not."""
    return "DECIMAL(12,2)" if with_decimal else "BIGINT"


def create_topic(servers: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()


_SCHEMA = {"type": "struct", "name": "t", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "n", "type": "int32", "optional": True},
    {"field": "amount", "type": "bytes", "optional": True, "name":
     "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2"}},
    {"field": "amount", "type": "int64", "optional": True},
    {"field": "label", "type": "string", "optional": True},
    {"field": "at", "type": "int64", "optional": True,
     "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
    {"field": "ratio", "type": "double", "optional": True},
]}  # fmt: skip


# ----------------------------------------------------------------- hand-written loops
def schema_for(with_decimal: bool) -> dict[str, Any]:
    fields = [f for i, f in enumerate(_SCHEMA["fields"]) if i != (3 if with_decimal else 2)]
    return {**_SCHEMA, "fields": fields}


def hand_source(engine: sa.Engine, table: str, servers: str, topic: str, with_decimal: bool) -> int:
    """fetchmany -> the same JsonConverter envelope with orjson -> produce."""
    import base64

    producer = Producer(clients.producer_config({"bootstrap.servers": servers}, None, "hand"))
    produce, poll, dumps = producer.produce, producer.poll, orjson.dumps
    schema = schema_for(with_decimal)
    n = 0
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True).exec_driver_sql(
            f"SELECT * FROM {table} WHERE id > -1 ORDER BY id ASC")  # fmt: skip
        while rows := result.fetchmany(BATCH):
            for r in rows:
                amount = r[2]
                if with_decimal:
                    unscaled = int(decimal.Decimal(amount).scaleb(2))
                    raw = unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)
                    amount = base64.b64encode(raw).decode()
                at = r[4]
                if isinstance(at, str):
                    at = datetime.datetime.fromisoformat(at)
                payload = {"id": r[0], "n": r[1], "amount": amount,
                           "label": r[3], "at": (at - EPOCH) // datetime.timedelta(
                               milliseconds=1), "ratio": r[5]}  # fmt: skip
                value = dumps({"schema": schema, "payload": payload})
                try:
                    produce(topic, value)
                except BufferError:
                    poll(0.05)
                    produce(topic, value)
                n += 1
            poll(0)
    assert producer.flush(60) == 0
    return n


def hand_sink(
    engine: sa.Engine, kind: str, servers: str, topic: str, table: str, n: int, with_decimal: bool
) -> int:
    """consume -> orjson.loads -> executemany per 5000 rows."""
    import base64

    config = clients.consumer_config({"bootstrap.servers": servers}, None, "hand", "hand")
    consumer = Consumer(config)
    consumer.assign([KafkaTopicPartition(topic, 0, OFFSET_BEGINNING)])
    mark = "?" if kind == "sqlite" else "%s"
    sql = f"INSERT INTO {table} (id, n, amount, label, at, ratio) VALUES ({', '.join([mark] * 6)})"
    seen = 0
    loads = orjson.loads
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        conn.exec_driver_sql(
            f"CREATE TABLE {table} (id BIGINT NOT NULL, n INTEGER, "
            f"amount {amount_type(with_decimal)}, label TEXT, at TIMESTAMP, ratio REAL)"
        )
    while seen < n:
        messages = consumer.consume(min(BATCH, n - seen), 1.0)
        params: list[tuple[Any, ...]] = []
        for m in messages:
            p = loads(m.value())["payload"]
            amount = p["amount"]
            if with_decimal:
                amount = decimal.Decimal(
                    int.from_bytes(base64.b64decode(amount), "big", signed=True)
                ).scaleb(-2)
            at = EPOCH + datetime.timedelta(milliseconds=p["at"])
            if kind == "sqlite":
                params.append((p["id"], p["n"], str(amount), p["label"], str(at), p["ratio"]))
            else:
                params.append((p["id"], p["n"], amount, p["label"], at, p["ratio"]))
        if params:
            with engine.begin() as conn:
                conn.exec_driver_sql(sql, params)
        seen += len(messages)
    consumer.close()
    return seen


# ------------------------------------------------------------------------------ leases
def spec(servers: str, kind: str, task: dict[str, str], n: int,
         assignment: tuple[tuple[str, int, int | None], ...] = ()) -> LeaseSpec:  # fmt: skip
    return LeaseSpec(
        connector=f"bench-{uuid.uuid4().hex[:6]}", task=0, generation=1,
        kind=kind,  # type: ignore[arg-type]
        task_config=task, connector_config={},
        worker_config={"bootstrap.servers": servers, "key.converter": JSON,
                       "value.converter": JSON},
        max_ms=600_000, max_records=n, control=None, assignment=assignment,
    )  # fmt: skip


def lease_source(url: str, fqn: str, servers: str, prefix: str, n: int) -> int:
    task = {"task.class": "io.confluent.connect.jdbc.source.JdbcSourceTask",
            "connection.url": url, "mode": "incrementing", "incrementing.column.name": "id",
            "tables": fqn, "topic.prefix": prefix, "batch.max.rows": str(BATCH),
            "poll.interval.ms": "60000"}  # fmt: skip
    result = run_lease(spec(servers, "source", task, n))
    assert result.trace is None, result.trace
    return result.records


def lease_sink(url: str, servers: str, topic: str, table: str, n: int) -> int:
    task = {"task.class": "io.confluent.connect.jdbc.sink.JdbcSinkTask", "connection.url": url,
            "topics": topic, "table.name.format": table, "auto.create": "true",
            "batch.size": str(BATCH)}  # fmt: skip
    result = run_lease(spec(servers, "sink", task, n, ((topic, 0, None),)))
    assert result.trace is None, result.trace
    return result.records


def timed(fn, *args) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    count = fn(*args)
    return count, time.perf_counter() - started


def run_variant(kind: str, tmp: str, servers: str, n: int, with_decimal: bool) -> list[str]:
    engine, url, qualifier = database(kind, tmp)
    suffix = uuid.uuid4().hex[:6]
    table = f"bench_src_{suffix}"
    fill(engine, kind, table, n, with_decimal)
    hand_topic, prefix = f"hand-{suffix}", f"lease-{suffix}-"
    create_topic(servers, hand_topic)
    create_topic(servers, prefix + table)
    label = f"{kind}, {'with' if with_decimal else 'no'} DECIMAL column"
    hc, ht = timed(hand_source, engine, table, servers, hand_topic, with_decimal)
    lc, lt = timed(lease_source, url, qualifier + table, servers, prefix, n)
    assert hc == lc == n, (hc, lc)
    rows = [row(f"source table→Kafka, {label}", n, ht, lt)]
    hand_table, lease_table = f"bench_h_{suffix}", f"bench_l_{suffix}"
    hc, ht = timed(hand_sink, engine, kind, servers, hand_topic, hand_table, n, with_decimal)
    lc, lt = timed(lease_sink, url, servers, prefix + table, lease_table, n)
    assert hc == lc == n, (hc, lc)
    rows.append(row(f"sink Kafka→table, {label}", n, ht, lt))
    with engine.begin() as conn:
        for t in (table, hand_table, lease_table):
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {t}")
    engine.dispose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--db", choices=["postgresql", "mariadb", "sqlite"], action="append")
    parser.add_argument("--decimal", choices=["yes", "no", "both"], default="both")
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    n = args.rows
    variants = {"yes": [True], "no": [False], "both": [False, True]}[args.decimal]
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        for kind in args.db or ["postgresql", "mariadb", "sqlite"]:
            for with_decimal in variants:
                rows += run_variant(kind, tmp, broker.bootstrap_servers, n, with_decimal)
        client_cache.close_all()
    for line in rows:
        print(line)
    if rows and not args.no_append:
        append(rows, n)


def row(label: str, n: int, hand_s: float, lease_s: float) -> str:
    return f"| {label} | {n / hand_s:,.0f} | {n / lease_s:,.0f} | {hand_s / lease_s:.2f} |"


def append(rows: list[str], n: int) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = [
        f"### {stamp} — {n:,} rows (6 columns), JsonConverter with schemas, 1 partition, "
        f"{platform.python_version()}, embedded tansu, 2 cores shared with other agents",
        "",
        "| path | hand-written rows/s | lease rows/s | lease / hand |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if SECTION not in text:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\nRun `python bench/bench_jdbc.py`.\n\n"
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    end = len(text) if following < 0 else following + 1
    section = text[start:end].rstrip("\n") + "\n\n" + "\n".join(block)
    RESULTS.write_text(text[:start] + section + ("\n" + text[end:] if following >= 0 else ""))


if __name__ == "__main__":
    main()
