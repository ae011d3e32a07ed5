"""A real Spark standalone cluster on loopback, started from the pyspark distribution.

One ``org.apache.spark.deploy.master.Master`` and N ``...deploy.worker.Worker`` JVMs, each
worker with its own ``SPARK_WORKER_DIR``/``SPARK_LOCAL_DIRS`` and working directory. Workers
(and so their executors and Spark's Python workers) run in their own mount and PID namespaces
(``unshare --mount --pid --fork --mount-proc``) in which the ``hidden`` directories are
covered by empty, mode-000 tmpfs mounts: the driver's directory, sparkcat's sources (the
editable install's path and this checkout). Executors therefore share nothing with the driver
but the network: sparkcat and plugins reach them only as Spark ships them. Their
``PYTHONPATH`` is cleared too. Used by the cluster tests and ``bench/bench_cluster.py``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pyspark
from tests.support.ports import free_port

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
_HIDE_THEN_EXEC = (
    'IFS=:; for d in $SPARKCAT_HIDE; do mount -t tmpfs -o size=1m,mode=0 none "$d" || exit 97; '
    'done; unset IFS; exec "$@"'
)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry))
    return found


def unfinished_tasks(executor_log: Path) -> int:
    """Tasks an executor's log shows started and not (yet) ended."""
    text = executor_log.read_text(errors="replace")
    ended = ("Finished task", "Executor killed task", "Exception in task")
    return text.count("Executor: Running task") - sum(text.count(f"Executor: {e}") for e in ended)


def descendants(pid: int) -> list[int]:
    todo, found = [pid], []
    while todo:
        current = todo.pop()
        kids = _children(current)
        found.extend(kids)
        todo.extend(kids)
    return found


class SparkCluster:
    """Master + workers of ``cores`` cores each; :meth:`stop` leaves no process behind."""

    def __init__(self, root: Path, hidden: list[Path], workers: int = 2, cores: int = 1) -> None:
        self.root = root
        self.hidden = [str(p) for p in hidden]
        self.cores = cores
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYSPARK"))}
        env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", **extra)
        env["SPARK_DAEMON_MEMORY"] = "256m"
        return env

    def start(self, timeout_s: float = 120.0, wait: bool = True) -> SparkCluster:
        """Start the master, then (once it listens) the workers; with ``wait``, until every
        worker registered. Without, a driver can start meanwhile: the app registers with the
        master and gets executors as the workers come."""
        self.start_master(timeout_s)
        for index in range(len(self.workers)):
            self.start_worker(index)
        if wait:
            self.wait_workers(len(self.workers), timeout_s)
        return self

    def start_master(self, timeout_s: float) -> None:
        """Spawn the master and wait until its port accepts connections: a worker that finds
        no master retries registering only after 5-15 s (Spark's fuzzed initial interval)."""
        log_dir = self.root / "master"
        log_dir.mkdir(parents=True, exist_ok=True)
        with (log_dir / "master.log").open("ab") as log:
            self.master = self._spawn(
                [str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(self.port), "--webui-port", str(self.ui_port)],
                log_dir, self._env({}), log)  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.master.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the Spark master did not start: {self.logs()}") from None
                time.sleep(0.1)

    def start_worker(self, index: int) -> None:
        home = self.root / f"worker{index}"
        for sub in ("work", "local"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        env = self._env(
            {
                "SPARK_WORKER_DIR": str(home / "work"),
                "SPARK_LOCAL_DIRS": str(home / "local"),
                "SPARKCAT_HIDE": ":".join(self.hidden),
            }
        )
        with (home / "worker.log").open("ab") as log:
            self.workers[index] = self._spawn(
                ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation",
                 "private", "--", "sh", "-c", _HIDE_THEN_EXEC, "sh",
                 str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", self.url,
                 "--host", "127.0.0.1", "--cores", str(self.cores), "--memory", "1g",
                 "--webui-port", str(free_port()), "--work-dir", str(home / "work")],
                home, env, log)  # fmt: skip

    @staticmethod
    def _spawn(
        args: list[str], cwd: Path, env: dict[str, str], log: Any
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.state()["workers"] if w["state"] == "ALIVE")
        except OSError:
            return 0

    def wait_workers(self, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.alive_workers() < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} Spark workers did not register: {self.logs()}")
            time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(
            f"== {p}\n" + p.read_text(errors="replace")[-3000:] for p in self.root.rglob("*.log")
        )

    def worker_jvm(self, index: int) -> int:
        """The host pid of worker ``index``'s JVM (inside its namespace it is pid 1's child)."""
        proc = self.workers[index]
        assert proc is not None
        for pid in descendants(proc.pid):
            if "deploy.worker.Worker" in _cmdline(pid) and "java" in _cmdline(pid):
                return pid
        raise AssertionError(f"worker {index} has no JVM")

    def executors(self, index: int | None = None) -> list[int]:
        """Host pids of the executor JVMs (of worker ``index``, or of all)."""
        indexes = range(len(self.workers)) if index is None else [index]
        found = []
        for i in indexes:
            proc = self.workers[i]
            if proc is None or proc.poll() is not None:
                continue
            found.extend(p for p in descendants(proc.pid) if EXECUTOR_CLASS in _cmdline(p))
        return found

    def executor_logs(self, index: int) -> list[Path]:
        """The stderr logs of worker ``index``'s live executors."""
        found = []
        for pid in self.executors(index):
            args = _cmdline(pid).split()
            executor_id = args[args.index("--executor-id") + 1]
            work = self.root / f"worker{index}" / "work"
            found.extend(work.glob(f"app-*/{executor_id}/stderr"))
        return found

    def running_tasks(self, index: int) -> int:
        """Tasks worker ``index``'s live executors are running now, from their own logs."""
        return sum(unfinished_tasks(log) for log in self.executor_logs(index))

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index``'s JVM (its namespace ends, and its executors with it)."""
        os.kill(self.worker_jvm(index), signal.SIGKILL)
        proc = self.workers[index]
        assert proc is not None
        proc.wait(30)

    def stop(self) -> None:
        for proc in [*self.workers, self.master]:
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
