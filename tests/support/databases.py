"""The test databases on the machine's PostgreSQL server, created on first use.

Two pytest-xdist workers may ask for the same database at once: PostgreSQL has no
``CREATE DATABASE IF NOT EXISTS``, and the loser of that race gets a duplicate-name error
(or a unique violation on ``pg_database``), which here means the database exists.
"""

from __future__ import annotations

import sqlalchemy as sa

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def ensure_postgres_database(name: str) -> None:
    """Create database ``name`` on the local PostgreSQL server unless it exists."""
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            query = "SELECT 1 FROM pg_database WHERE datname = %s"
            if conn.exec_driver_sql(query, (name,)).scalar():
                return
            try:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
            except (sa.exc.ProgrammingError, sa.exc.IntegrityError):
                if not conn.exec_driver_sql(query, (name,)).scalar():
                    raise
    finally:
        admin.dispose()
