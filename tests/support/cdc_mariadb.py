"""A throwaway MariaDB server with a ROW binlog, for the MySQL/MariaDB change-data-capture tests.

The machine's shared MariaDB runs without a binlog and must not be reconfigured, so the
``cdc_mariadb`` session fixture starts a server of its own from the installed binaries:
``mariadb-install-db`` into a temporary directory, then ``mariadbd`` with ``--log-bin
--binlog-format=ROW --binlog-row-image=FULL --server-id=1`` on a free loopback port, its socket,
pid file, binlogs and error log all in that directory. Both run with ``--no-defaults``, so no
option file of the machine (``/etc/mysql``) is read. Run as root, the server runs as the
``mysql`` OS user. The server is stopped and the directory removed at the end of the session.

A missing binary, or a server that does not come up, fails the tests that use the fixture
(with the server's error log), never skips them.

Tests connect as user ``sparkcat`` (password ``sparkcat``, every privilege including
``REPLICATION SLAVE``/``REPLICATION CLIENT``) at ``127.0.0.1:<port>``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pytest
from tests.support.ports import free_port

USER = "sparkcat"
PASSWORD = "sparkcat"
SERVER_ID = 1
_START_TIMEOUT_S = 90.0
# Debian installs mariadbd in /usr/sbin, which a non-root PATH often lacks.
SEARCH_DIRS = ("/usr/sbin", "/usr/bin")


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name) or next(
            (str(Path(d) / name) for d in SEARCH_DIRS if (Path(d) / name).exists()), None
        )
        if found:
            return found
    raise RuntimeError(
        f"none of {', '.join(names)} is installed: the CDC tests need MariaDB's server binaries "
        "(Debian/Ubuntu package mariadb-server)"
    )


@dataclass
class ThrowawayMariaDb:
    """One server: :meth:`start` it, use :attr:`port`/:meth:`connect`, then :meth:`stop`."""

    base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sparkcat-mariadb-")))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def datadir(self) -> Path:
        return self.base / "data"

    @property
    def tmpdir(self) -> Path:
        return self.base / "tmp"

    @property
    def socket(self) -> Path:
        return self.base / "mariadb.sock"

    @property
    def error_log(self) -> Path:
        return self.base / "error.log"

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def _os_user(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            mysql = pwd.getpwnam("mysql")
        except KeyError:
            return ["--user=root"]
        for path in (self.base, *self.base.rglob("*")):
            os.chown(path, mysql.pw_uid, mysql.pw_gid)
        return ["--user=mysql"]

    def start(self) -> ThrowawayMariaDb:
        install = _binary("mariadb-install-db", "mysql_install_db")
        server = _binary("mariadbd", "mysqld")
        self.datadir.mkdir(parents=True)
        # Its own temporary directory: two servers bootstrapping at once (two test lanes) in
        # the default /tmp removed each other's temporary tables and the install failed.
        self.tmpdir.mkdir(parents=True)
        user = self._os_user()
        done = subprocess.run(
            [install, "--no-defaults", f"--datadir={self.datadir}", *user,
             "--auth-root-authentication-method=normal", "--skip-test-db",
             f"--tmpdir={self.tmpdir}"],
            capture_output=True, timeout=180, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {done.stderr.decode()[-2000:]}")
        user = self._os_user()  # again: for the files install-db wrote
        self.process = subprocess.Popen(
            [server, "--no-defaults", f"--datadir={self.datadir}", *user,
             f"--socket={self.socket}", f"--pid-file={self.base / 'mariadbd.pid'}",
             f"--port={self.port}", "--bind-address=127.0.0.1", f"--tmpdir={self.tmpdir}",
             f"--log-error={self.error_log}", f"--log-bin={self.base / 'binlog'}",
             "--binlog-format=ROW", "--binlog-row-image=FULL", f"--server-id={SERVER_ID}",
             "--binlog-annotate-row-events=ON", "--binlog-row-metadata=FULL",
             "--innodb-buffer-pool-size=32M",
             "--innodb-log-file-size=16M", "--skip-name-resolve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._wait_ready()
        self._create_user()
        return self

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mariadbd exited ({self.process.returncode}):\n{self.log()}")
            # Connecting earlier would leak the failed attempts' sockets (pymysql keeps them).
            if "ready for connections" in self.log():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"mariadbd did not accept connections in {_START_TIMEOUT_S} s")

    def _create_user(self) -> None:
        conn = pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'")
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%' WITH GRANT OPTION")
        finally:
            conn.close()

    def log(self) -> str:
        try:
            return self.error_log.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no error log)"

    def connect(self, database: str | None = None, **kwargs: Any) -> pymysql.Connection[Any]:
        """A pymysql connection as the test user (autocommit unless told otherwise)."""
        kwargs.setdefault("autocommit", True)
        return pymysql.connect(host=self.host, port=self.port, user=USER, password=PASSWORD,
                               database=database, **kwargs)  # fmt: skip

    def execute(self, *statements: str, database: str | None = None) -> None:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            conn.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="session")
def cdc_mariadb() -> Iterator[ThrowawayMariaDb]:
    """The session's throwaway MariaDB with a ROW binlog (see the module docstring)."""
    server = ThrowawayMariaDb()
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    try:
        yield server
    finally:
        server.stop()
