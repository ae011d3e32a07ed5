"""The machine's PostgreSQL and MariaDB servers as Spark's JDBC data source reaches them, for
the Spark-native connectors' tests: one database, ``DB_NAME``, on each, created on first use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from tests.support.databases import ensure_postgres_database
from tests.support.jdbc_jars import (
    MARIADB_JAR,
    POSTGRES_JAR,
    mariadb_jar,
    missing_message,
    postgres_jar,
)

DB_NAME = "sparkcat_native_test"


@dataclass
class JdbcDatabase:
    """A database of this machine's PostgreSQL or MariaDB server, as Spark's JDBC data
    source reaches it (``spark.option.*`` keys) and as the test reads it (SQLAlchemy)."""

    kind: str
    engine: sa.Engine
    options: dict[str, str]

    def config(self, table: str) -> dict[str, str]:
        """A Spark-native connector's keys for ``table`` of this database."""
        keys = {f"spark.option.{k}": v for k, v in self.options.items()}
        return {"spark.format": "jdbc", "spark.option.dbtable": table, **keys}

    def execute(self, sql: str, params: Any = None) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql(sql, params)

    def rows(self, sql: str) -> set[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return {tuple(r) for r in conn.exec_driver_sql(sql)}


def jdbc_database(kind: str) -> JdbcDatabase:
    """Database DB_NAME of the machine's ``postgresql`` or ``mariadb`` server (created when
    missing); fails the test naming the package when the driver jar is missing."""
    jar = postgres_jar() if kind == "postgresql" else mariadb_jar()
    if jar is None:
        pytest.fail(missing_message(POSTGRES_JAR if kind == "postgresql" else MARIADB_JAR))
    if kind == "postgresql":
        ensure_postgres_database(DB_NAME)
        engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}")
        url = f"jdbc:postgresql://127.0.0.1:5432/{DB_NAME}"
        return JdbcDatabase(kind, engine, {"url": url, "user": "postgres",
                                           "driver": "org.postgresql.Driver"})  # fmt: skip
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/")
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE IF NOT EXISTS {DB_NAME}")
    admin.dispose()
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:3306/{DB_NAME}")
    # jdbc:mysql: is what selects Spark's MySQL dialect (backtick quoting); MariaDB
    # Connector/J 2.x takes that scheme (docs/spark-connectors.md).
    url = f"jdbc:mysql://127.0.0.1:3306/{DB_NAME}"
    return JdbcDatabase(kind, engine, {"url": url, "user": "root",
                                       "driver": "org.mariadb.jdbc.Driver"})  # fmt: skip
