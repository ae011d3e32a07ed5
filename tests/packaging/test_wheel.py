"""The wheel as a user installs it: built from a copy of the project, installed by pip into a
fresh virtualenv (no editable install, no source tree on the path, run from a directory of
its own), then Kafka's quickstart run from it.

One virtualenv serves both installs, in order, to spend pyspark's ~450 MB install once:
first the wheel alone (the core: the quickstart runs, the plugins are listed, and the JDBC
connector's validation names its missing extra), then ``pip install '<wheel>[all]'`` over it
(every extra's connector imports, and the quickstart runs again). 1-2.5 minutes on two cores
with a warm pip cache, most of it pip and the two Spark start-ups; a cold cache first builds
pyspark's wheel from its ~450 MB sdist.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    edit_properties,
    kill_leftovers,
    session_members,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

ROOT = Path(__file__).resolve().parents[2]
PIP_TIMEOUT_S = 900.0
# Variables that would point the installed worker (or Spark's Python workers) back at the
# development environment and its source tree.
LEAKY_ENV = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "VIRTUAL_ENV",
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "SPARK_HOME",
)
EXTRA_MODULES = (
    "sparkcat.connectors.jdbc",
    "sparkcat.connectors.storage",
    "sparkcat.connectors.debezium.postgres",
    "sparkcat.connectors.debezium.mysql",
    "sparkcat.converters.avro",
    "sparkcat.converters.json_schema",
    "sparkcat.converters.protobuf",
)
JDBC_SOURCE = "io.confluent.connect.jdbc.JdbcSourceConnector"
MISSING_JDBC = "JdbcSourceConnector needs the 'jdbc' extra: pip install 'sparkcat[jdbc]'"


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=PIP_TIMEOUT_S
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Venv:
    path: Path
    home: Path  # a directory outside the source tree to run commands from

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
        env["PATH"] = f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def pip_install(self, requirement: str) -> None:
        run([self.python, "-m", "pip", "install", "-q", requirement], self.home, self.env())

    def python_c(self, code: str) -> str:
        return run([self.python, "-c", code], self.home, self.env())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel`` of a copy of the project (the build leaves nothing in the checkout)."""
    work = tmp_path_factory.mktemp("build")
    source = work / "sparkcat"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
        work)  # fmt: skip
    (built,) = dist.glob("sparkcat-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh virtualenv with the wheel alone installed (the core)."""
    home = tmp_path_factory.mktemp("user")
    created = Venv(home / "venv", home)
    run([sys.executable, "-m", "venv", str(created.path)], home)
    created.pip_install(str(wheel))
    return created


@contextmanager
def quickstart(venv: Venv, workdir: Path) -> Iterator[httpx.Client]:
    """``sparkcat standalone`` with the shipped quickstart configs, run from ``workdir``;
    yields a REST client once the first records are in ``test.sink.txt``, then stops the
    worker with SIGTERM and checks it exits cleanly."""
    workdir.mkdir()
    port = free_port()
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties",
        workdir / "connect-standalone.properties",
        {
            "offset.storage.file.filename": str(workdir / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{port}",
        },
    )
    connectors = [
        shutil.copy2(CONFIG_DIR / name, workdir / name)
        for name in ("connect-file-source.properties", "connect-file-sink.properties")
    ]
    (workdir / "test.txt").write_text("foo\nbar\n")
    log_path = workdir / "worker.log"
    command = [str(venv.path / "bin" / "sparkcat"), "standalone", str(worker_props), *connectors]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, cwd=workdir, env=venv.env(), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True)  # fmt: skip

    def log_tail() -> str:
        return "\n".join(log_path.read_text(errors="replace").splitlines()[-40:])

    def arrived() -> bool:
        assert proc.poll() is None, f"the worker exited ({proc.returncode}):\n{log_tail()}"
        return lines_of(workdir / "test.sink.txt") == ["foo", "bar"]

    try:
        wait_for(arrived, START_TIMEOUT_S, "the quickstart's records in test.sink.txt", 0.1)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as client:
            yield client
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(STOP_TIMEOUT_S) == 0, log_tail()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        kill_leftovers(session_members(proc.pid))


def validate_jdbc_source(client: httpx.Client) -> httpx.Response:
    config = {"connector.class": JDBC_SOURCE, "name": "jdbc", "topic.prefix": "t-"}
    return client.put("/connector-plugins/JdbcSourceConnector/config/validate", json=config)


def test_the_core_install_runs_the_quickstart_and_names_missing_extras(
    venv: Venv, tmp_path: Path
) -> None:
    location = venv.python_c("import sparkcat; print(sparkcat.__file__)").strip()
    assert Path(location).is_relative_to(venv.path), location  # the wheel, not the source tree
    missing = venv.python_c(
        "import importlib.util as u; print([m for m in ('sqlalchemy', 'psycopg2', 'fsspec', "
        "'fastavro', 'google.protobuf') if u.find_spec(m.split('.')[0])])"
    )
    assert missing.strip() == "[]"  # the core is lean: no extra came along

    with quickstart(venv, tmp_path / "core") as client:
        plugins = client.get("/connector-plugins")
        assert plugins.status_code == 200
        assert JDBC_SOURCE in {p["class"] for p in plugins.json()}
        refused = validate_jdbc_source(client)
        assert refused.status_code == 500, refused.text
        assert refused.json()["message"] == MISSING_JDBC


def test_the_all_extras_install_runs_the_quickstart(
    venv: Venv, wheel: Path, tmp_path: Path
) -> None:
    venv.pip_install(f"{wheel}[all]")
    venv.python_c("import " + ", ".join(EXTRA_MODULES))

    with quickstart(venv, tmp_path / "all") as client:
        validated = validate_jdbc_source(client)
        assert validated.status_code == 200, validated.text
        assert MISSING_JDBC not in validated.text
