"""What a MySQL/MariaDB server must offer a binlog reader, checked on a DB-API connection."""

from __future__ import annotations

from typing import Any

from sparkcat.connectors.debezium.mysql.offsets import BinlogOffset


def _variables(conn: Any, *names: str) -> dict[str, str]:
    with conn.cursor() as cur:
        cur.execute(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ", ".join(["%s"] * len(names)) + ")",
            names,
        )
        return {str(name).lower(): str(value) for name, value in cur.fetchall()}


def binlog_problems(conn: Any) -> list[str]:
    """Why the server cannot be streamed from, one message each (empty when it can): the
    binlog must be on, ``binlog_format=ROW``, ``binlog_row_image=FULL`` (or ``NOBLOB``) and
    ``binlog_row_metadata=FULL`` (column names in the table maps)."""
    found = _variables(conn, "log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata")
    if found.get("log_bin", "OFF").upper() not in ("ON", "1"):
        return [
            "The database server does not write a binlog (log_bin=OFF), which is required for "
            "this connector to work properly. Start the server with --log-bin and "
            "binlog_format=ROW and restart the connector."
        ]
    problems = []
    if found.get("binlog_format", "").upper() != "ROW":
        problems.append(
            "The database server is not configured to use a ROW binlog_format, which is "
            "required for this connector to work properly. Change the database configuration "
            "to use a binlog_format=ROW and restart the connector."
        )
    if found.get("binlog_row_image", "").upper() not in ("FULL", "NOBLOB"):
        problems.append(
            "The database server is not configured to use a FULL binlog_row_image, which is "
            "required for this connector to work properly. Change the database configuration "
            "to use a binlog_row_image=FULL|NOBLOB and restart the connector."
        )
    if found.get("binlog_row_metadata", "").upper() != "FULL":
        problems.append(
            "The database server does not write column names into the binlog "
            f"(binlog_row_metadata={found.get('binlog_row_metadata', 'unsupported')}); this "
            "connector reads them from there. Set binlog_row_metadata=FULL (MySQL 8.0.14+, "
            "MariaDB 10.5+)."
        )
    return problems


def is_mariadb(conn: Any) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        return "mariadb" in str(cur.fetchone()[0]).lower()


def current_position(conn: Any) -> BinlogOffset:
    """The end of the binlog now (``SHOW MASTER STATUS``), with the server's GTID position."""
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
        if row is None:
            raise ValueError("the server writes no binlog (SHOW MASTER STATUS is empty)")
        gtids = row[4] if len(row) > 4 and row[4] else None
        if gtids is None and is_mariadb(conn):
            cur.execute("SELECT @@gtid_binlog_pos")
            gtids = cur.fetchone()[0] or None
    return BinlogOffset(str(row[0]), int(row[1]), gtids=gtids)


__all__ = ["binlog_problems", "current_position", "is_mariadb"]
