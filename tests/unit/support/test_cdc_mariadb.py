from __future__ import annotations

from pathlib import Path

import pytest
import tests.support.cdc_mariadb as cdc_mariadb_module
from tests.support.cdc_mariadb import SERVER_ID, ThrowawayMariaDb


def test_the_throwaway_server_writes_a_full_row_binlog(cdc_mariadb: ThrowawayMariaDb) -> None:
    conn = cdc_mariadb.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@server_id, @@port"
            )
            assert cur.fetchone() == (1, "ROW", "FULL", SERVER_ID, cdc_mariadb.port)
            cur.execute("CREATE DATABASE proof")
            cur.execute("CREATE TABLE proof.t (id INT PRIMARY KEY)")
            cur.execute("INSERT INTO proof.t VALUES (1)")
            cur.execute("SHOW BINARY LOGS")
            logs = [row[0] for row in cur.fetchall()]
            cur.execute(f"SHOW BINLOG EVENTS IN '{logs[-1]}'")
            kinds = [row[2] for row in cur.fetchall()]
            cur.execute("DROP DATABASE proof")
    finally:
        conn.close()
    assert logs and all(name.startswith("binlog.") for name in logs)
    assert "Table_map" in kinds and "Write_rows_v1" in kinds
    # the server's files stay in its own directory, not the machine's
    assert cdc_mariadb.socket.exists() and cdc_mariadb.socket.parent == cdc_mariadb.base


def test_a_missing_binary_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(cdc_mariadb_module, "SEARCH_DIRS", (str(tmp_path),))
    with pytest.raises(RuntimeError, match="need MariaDB's server binaries"):
        ThrowawayMariaDb(base=tmp_path).start()
