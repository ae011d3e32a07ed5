"""The ``sparkcat`` CLI as a subprocess, driven over REST: the worker of the end-to-end
tests, the Spark-cluster tests and the packaging test.

:class:`WorkerProcess` starts the CLI in its own session (so ``kill -9`` of its process
group is what a user's ``kill -9 -<pgid>`` does), knows its REST address, and can tell which
processes it started (the Spark JVM, Spark's Python workers, the embedded broker) so tests
can check that none survive a shutdown. Config files are the shipped ``config/`` files,
copied and edited key by key (comments kept), as a user edits them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from tests.support import waiting

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "config"
PLUGINS_DIR = ROOT / "tests" / "integration" / "plugins"
SPARKCAT = Path(sys.executable).parent / "sparkcat"
# Spark's start-up takes 15-30 s on 2 idle cores; much longer while other JVMs compete.
START_TIMEOUT_S = 240.0
STOP_TIMEOUT_S = 90.0
# Writes wait for a rebalance under way (as Kafka's herder queues them): allow for one.
WRITE_TIMEOUT_S = 90.0
JOINED = re.compile(r"Joined group generation (\d+) as (leader|follower)")


def edit_properties(source: Path, target: Path, changes: Mapping[str, str | None]) -> Path:
    """Copy a ``.properties`` file, setting (or, with ``None``, removing) keys in place.

    A key that is only present commented out (``#key=value``) is set on that line; keys not
    in the file at all are appended. Other lines, comments included, are kept.
    """
    pending = dict(changes)
    out = []
    for line in source.read_text(encoding="utf-8").splitlines():
        key = line.lstrip("#").split("=", 1)[0].strip() if "=" in line else None
        if key in pending and (not line.startswith("#") or pending[key] is not None):
            value = pending.pop(key)
            if value is not None:
                out.append(f"{key}={value}")
            continue
        out.append(line)
    out.extend(f"{k}={v}" for k, v in pending.items() if v is not None)
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


def write_properties(path: Path, props: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def wait_for(
    condition: Callable[[], Any],
    timeout: float,
    what: str,
    interval: float = 0.05,
    worker: WorkerProcess | None = None,
) -> Any:
    """:func:`tests.support.waiting.wait_for` at the e2e tests' pace: polling a worker's REST
    API on loopback is cheap, so 20 Hz; with ``worker``, the wait ends when that process
    exits."""
    return waiting.wait_for(condition, timeout, what, interval=interval, worker=worker)


def spark_test(fn: Callable[..., None]) -> Callable[..., None]:
    """Marks a test that starts a worker: it needs Spark and the broker, and is slow."""
    marked: Callable[..., None] = pytest.mark.slow(pytest.mark.spark(pytest.mark.broker(fn)))
    return marked


# -- processes ---------------------------------------------------------------------------


class Proc(NamedTuple):
    """One process, identified by pid and start time (pids are reused)."""

    pid: int
    started: int
    cmdline: str

    def alive(self) -> bool:
        stat = _stat(self.pid)
        # A zombie has exited: only its parent has not reaped it yet.
        return stat is not None and stat[2] != "Z" and int(stat[21]) == self.started


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat fields, the command name (field 2) collapsed to one token."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    return [head.split(" (", 1)[0], "comm", *rest.split()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _all_stats() -> dict[int, list[str]]:
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                stats[int(entry)] = stat
    return stats


def process_tree(root: int) -> list[Proc]:
    """``root`` and all its descendants, whatever session or process group they moved to."""
    stats = _all_stats()
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(int(stat[3]), []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in stats and stats[pid][2] != "Z":
            found.append(Proc(pid, int(stats[pid][21]), _cmdline(pid)))
        todo.extend(children.get(pid, []))
    return found


def session_members(sid: int) -> list[Proc]:
    """Live processes of session ``sid`` (Spark's workers move to their own process group
    but stay in the session)."""
    return [
        Proc(pid, int(stat[21]), _cmdline(pid))
        for pid, stat in _all_stats().items()
        if int(stat[5]) == sid and stat[2] != "Z"
    ]


def kill_leftovers(procs: list[Proc]) -> None:
    """SIGKILL processes this test started that are still alive (identified by start time)."""
    for proc in procs:
        if proc.alive():
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# -- the worker --------------------------------------------------------------------------


class WorkerProcess:
    """``sparkcat standalone WORKER CONNECTOR...`` in its own session, log in ``log_path``."""

    def __init__(self, worker_props: Path, connectors: list[Path], log_path: Path) -> None:
        self.worker_props = worker_props
        self.connectors = connectors
        self.log_path = log_path
        self.url = self._listener(worker_props)
        self.proc: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self.seen: dict[tuple[int, int], Proc] = {}
        # generous: a DELETE waits for the query to stop, which a loaded CI machine can stretch
        self.client = httpx.Client(base_url=self.url, timeout=60.0)

    @staticmethod
    def _listener(worker_props: Path) -> str:
        for line in worker_props.read_text(encoding="utf-8").splitlines():
            if line.startswith("listeners="):
                return line.split("=", 1)[1].split(",")[0].strip().rstrip("/")
        raise AssertionError(f"{worker_props} sets no listeners")

    def start(self) -> WorkerProcess:
        with self.log_path.open("ab") as log:
            log.write(f"\n===== start {time.strftime('%H:%M:%S')} =====\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "standalone", str(self.worker_props), *map(str, self.connectors)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.returncode = None
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def exited(self) -> bool:
        if self.proc is None:
            return True
        if self.returncode is None:
            self.returncode = self.proc.poll()
        return self.returncode is not None

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def remember_processes(self) -> list[Proc]:
        """Note every process the worker runs now (call while it runs: orphans lose the link)."""
        for proc in process_tree(self.pid):
            self.seen[(proc.pid, proc.started)] = proc
        return list(self.seen.values())

    # REST ---------------------------------------------------------------------------------

    def get(self, path: str) -> Any:
        response = self.client.get(path)
        response.raise_for_status()
        return response.json()

    def status(self, name: str) -> dict[str, Any] | None:
        try:
            response = self.client.get(f"/connectors/{name}/status")
        except httpx.TransportError:
            return None  # REST is not up yet
        return response.json() if response.status_code == 200 else None

    def spark_starting(self) -> bool:
        """REST is up but the worker is not ready yet (GET /health 503 while Spark starts)."""
        try:
            return self.client.get("/health").status_code == 503
        except httpx.TransportError:
            return False

    def task_states(self, name: str) -> list[str]:
        status = self.status(name)
        return [t["state"] for t in status["tasks"]] if status else []

    def wait_running(self, *names: str, timeout: float = START_TIMEOUT_S) -> None:
        """Wait until every named connector and all its tasks are RUNNING."""

        def running() -> bool:
            for name in names:
                status = self.status(name)
                if status is None or status["connector"]["state"] != "RUNNING":
                    return False
                states = [t["state"] for t in status["tasks"]]
                if not states or any(s != "RUNNING" for s in states):
                    return False
            self.remember_processes()
            return True

        wait_for(running, timeout, f"{', '.join(names)} to be RUNNING", 0.25, self)

    # stopping -----------------------------------------------------------------------------

    def terminate(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM the worker (what Ctrl-C / ``kill`` do) and wait for its exit code."""
        assert self.proc is not None
        self.remember_processes()
        self.proc.send_signal(signal.SIGTERM)
        self.returncode = self.proc.wait(timeout)
        return self.returncode

    def kill_group(self) -> None:
        """``kill -9 -<pgid>``: SIGKILL the worker's whole process group at once."""
        assert self.proc is not None
        self.remember_processes()
        os.killpg(self.pid, signal.SIGKILL)
        self.returncode = self.proc.wait(30)

    def survivors(self, timeout: float) -> list[Proc]:
        """Processes of this worker still alive after ``timeout`` s (none is the goal)."""
        deadline = time.monotonic() + timeout
        while True:
            alive = {p for p in self.seen.values() if p.alive()}
            alive.update(session_members(self.pid))
            if not alive or time.monotonic() >= deadline:
                return sorted(alive)
            time.sleep(0.2)

    def cleanup(self) -> None:
        """Teardown: whatever state the test left the worker in, nothing keeps running."""
        if self.proc is not None and not self.exited():
            self.remember_processes()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait(30)
        if self.proc is not None:
            kill_leftovers(list(self.seen.values()) + session_members(self.pid))
        self.client.close()


class DistributedWorker(WorkerProcess):
    """``sparkcat distributed WORKER.properties``."""

    def start(self) -> DistributedWorker:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "distributed", str(self.worker_props)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
        self.returncode = None
        return self

    @property
    def worker_id(self) -> str:
        return self.url.removeprefix("http://")

    def role(self) -> str | None:
        """``leader``/``follower`` after this worker's latest rebalance, from its log."""
        found = JOINED.findall(self.log_text())
        return found[-1][1] if found else None

    def joined(self) -> bool:
        """Whether this worker joined the group since it last started (a restarted worker's
        statuses from before its restart still name it until it rejoins and reports again)."""
        text = self.log_text()
        return JOINED.search(text, max(text.rfind("Connect member "), 0)) is not None

    def post(self, path: str, body: Any) -> Any:
        return self.client.post(path, json=body, timeout=WRITE_TIMEOUT_S)


class Driver(WorkerProcess):
    """``sparkcat standalone`` as the driver of a Spark application on a cluster: run from its
    own directory, with its own TMPDIR (the cluster tests hide both from the executors), with
    shortcuts for the REST calls those tests make."""

    def __init__(self, props: Path, log_path: Path, cwd: Path) -> None:
        super().__init__(props, [], log_path)
        self.cwd = cwd

    def start(self) -> Driver:
        env = dict(os.environ, TMPDIR=str(self.cwd / "tmp"))
        (self.cwd / "tmp").mkdir(exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "standalone", str(self.worker_props)],
                cwd=self.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,
            )  # fmt: skip
        return self

    def status_code(self, path: str) -> int:
        try:
            return self.client.get(path).status_code
        except httpx.TransportError:
            return 0  # not up yet

    def put(self, path: str, body: Any = None) -> None:
        self.client.put(path, json=body).raise_for_status()

    def create(self, name: str, config: dict[str, str]) -> None:
        response = self.client.put(f"/connectors/{name}/config", json=config)
        assert response.status_code in (200, 201), response.text

    def delete(self, name: str) -> None:
        self.client.delete(f"/connectors/{name}").raise_for_status()


def read_offsets_file(path: Path) -> dict[tuple[str, str], dict[str, Any] | None]:
    """The standalone offsets file as ``{(connector, partition JSON): offset}``."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    result = {}
    for key, value in data.items():
        connector, partition = json.loads(key)
        result[(connector, json.dumps(partition, sort_keys=True))] = (
            None if value is None else json.loads(value)
        )
    return result
