"""Throwaway database servers for change-data-capture tests.

The machine's shared PostgreSQL runs with ``wal_level=replica`` and must never be
reconfigured, so CDC tests start their own server from the installed binaries: ``initdb`` in
a temp dir, ``wal_level=logical``, a free port, its socket in the temp dir, run as the
``postgres`` OS user (PostgreSQL refuses to run as root). Missing binaries fail the tests.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.ports import free_port

PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
OS_USER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server: superuser ``postgres`` without password on 127.0.0.1."""

    host: str
    port: int
    user: str
    data_dir: Path

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.host} port={self.port} user={self.user} dbname={dbname}"

    def connect(self, dbname: str = "postgres", autocommit: bool = True) -> Any:
        import psycopg2

        conn = psycopg2.connect(self.dsn(dbname))
        conn.autocommit = autocommit
        return conn

    def execute(self, sql: str, params: Any = None, dbname: str = "postgres") -> list[Any]:
        conn = self.connect(dbname)
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql, params)
                return list(cursor.fetchall()) if cursor.description else []
        finally:
            conn.close()

    def create_database(self, name: str) -> None:
        self.execute(f'CREATE DATABASE "{name}"')


def _bin_dir() -> Path:
    for directory in PG_BIN_DIRS:
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin:"
        " the CDC tests need them (apt-get install postgresql)"
    )


def _as_postgres(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    if os.geteuid() == 0:
        args = ["runuser", "-u", OS_USER, "--", *args]
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


@contextmanager
def throwaway_postgres() -> Iterator[PostgresServer]:
    """Start a server with ``wal_level=logical``; stop it and delete its files at the end."""
    bin_dir = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="sparkcat-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        entry = pwd.getpwnam(OS_USER)
        for path in (root, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = free_port()
    _as_postgres([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                  "-E", "UTF8", "--no-sync"])  # fmt: skip
    settings = {
        "listen_addresses": "'127.0.0.1'",
        "port": str(port),
        "unix_socket_directories": f"'{sockets}'",
        "wal_level": "logical",
        "max_replication_slots": "20",
        "max_wal_senders": "20",
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "shared_buffers": "32MB",
    }
    with (data / "postgresql.conf").open("a") as conf:
        conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
    log = root / "server.log"
    try:
        _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w",
                      "-t", "60", "start"])  # fmt: skip
        server = PostgresServer("127.0.0.1", port, "postgres", data)
        _wait_ready(server)
        yield server
    finally:
        try:
            _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                          "stop"])  # fmt: skip
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(server: PostgresServer, timeout_s: float = 30.0) -> None:
    import psycopg2

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            server.execute("SELECT 1")
            return
        except psycopg2.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="session")
def cdc_postgres() -> Iterator[PostgresServer]:
    """The session's throwaway PostgreSQL with ``wal_level=logical`` (started on first use)."""
    with throwaway_postgres() as server:
        yield server


def read_topic(servers: str, topic: str, expected: int, timeout_s: float = 20.0) -> list[Any]:
    """``(key, value)`` JSON envelopes of partition 0 of ``topic`` (``None`` for a null),
    read until ``expected`` arrived and everything the partition held when the call began
    was read, then whatever else follows at once.

    The high watermark makes ``expected=0`` ("nothing was written") mean something: without
    it, the first empty fetch (before the consumer had even joined the partition) ended the
    read, and a topic holding records read as empty.
    """
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "unused",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50})  # fmt: skip
    found: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        try:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout_s)
        except KafkaException:  # no such topic (yet): nothing to wait for
            high = 0
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        position = 0
        while time.monotonic() < deadline:
            messages = [m for m in consumer.consume(1000, 0.3) if m.error() is None]
            found += [(_json(m.key()), _json(m.value())) for m in messages]
            if messages:
                position = (messages[-1].offset() or 0) + 1
            if len(found) >= expected and position >= high and not messages:
                break
    finally:
        consumer.close()
    return found


def _json(data: bytes | None) -> Any:
    import orjson

    return None if data is None else orjson.loads(data)


__all__ = ["PostgresServer", "cdc_postgres", "read_topic", "throwaway_postgres"]
