"""Two processes with one ``app_id`` form one Connect cluster: this test process (on the
session's SparkSession) and a child process with its own (``member.py``). Connectors added
in one are visible in both and spread over both; after ``kill -9`` of the child, its tasks
resume here from the committed offsets and no line is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.support.embedded import app_config, create_topics, new_app_id
from tests.support.files import lines_of
from tests.support.waiting import wait_for

import sparkcat

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

MEMBER = Path(__file__).with_name("member.py")
START_TIMEOUT_S = 180.0
TIMEOUT_S = 120.0


class Member:
    """The child process."""

    def __init__(self, app_id: str, config: dict[str, str], directory: Path) -> None:
        self.log = directory / "member.log"
        env = {**os.environ, "LOG_DIR": str(directory)}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(MEMBER), app_id, json.dumps(config)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                start_new_session=True,
            )  # fmt: skip

    def line(self, prefix: str) -> str | None:
        for line in lines_of(self.log):
            if line.startswith(prefix):
                return line
        assert self.proc.poll() is None, f"the member exited:\n{self.log.read_text()[-3000:]}"
        return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)


def _workers(connect: Any, names: list[str]) -> set[str] | None:
    """The workers running the connectors and tasks of ``names``, once all are RUNNING."""
    found: set[str] = set()
    for name in names:
        try:
            status = connect.connector(name).status()
        except Exception:
            return None
        states = [status["connector"], *status["tasks"]]
        if not status["tasks"] or any(s["state"] != "RUNNING" for s in states):
            return None
        found.update(s["worker_id"] for s in states)
    return found


def test_two_processes_share_one_app_id(spark: Any, kafka_broker: Any, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    app_id = new_app_id("pair")
    config = app_config(servers)
    suffix = uuid.uuid4().hex[:8]
    topics = [f"a-{suffix}", f"b-{suffix}"]
    create_topics(servers, *topics)
    inputs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for source, path in zip("ab", inputs, strict=True):
        path.write_text("".join(f"{source}{i}\n" for i in range(100)))
    out = tmp_path / "out.txt"
    member_config = {**config, "spark.master": "local[6,2]", "spark.driver.memory": "512m"}
    member = Member(app_id, member_config, tmp_path)
    try:
        joined = wait_for(
            lambda: member.line("JOINED"), START_TIMEOUT_S, "the member to join", interval=0.2
        )
        member_id, member_url = joined.split()[1:3]
        with sparkcat.Connect(app_id, config, spark=spark) as connect:
            names = ["source-a", "source-b", "sink"]
            for name, path, topic in zip(names[:2], inputs, topics, strict=True):
                connect.add_connector(name, {"connector.class": "FileStreamSource",
                                             "file": str(path), "topic": topic})  # fmt: skip
            connect.add_connector(
                "sink",
                {"connector.class": "FileStreamSink", "file": str(out), "topics": ",".join(topics)},
            )
            # Visible in the other process too.
            with urllib.request.urlopen(f"{member_url.rstrip('/')}/connectors", timeout=30) as r:
                assert sorted(json.loads(r.read())) == sorted(names)
            wait_for(
                lambda: member.line("SPARK READY"),
                START_TIMEOUT_S,
                "the member's Spark",
                interval=0.2,
            )
            workers = wait_for(
                lambda: (w := _workers(connect, names)) and len(w) == 2 and w,
                TIMEOUT_S, "connectors and tasks RUNNING on both members", interval=0.2
            )  # fmt: skip
            assert workers == {connect.worker_id, member_id}
            expected = {f"{s}{i}" for s in "ab" for i in range(100)}
            wait_for(
                lambda: set(lines_of(out)) >= expected, TIMEOUT_S, "the first lines", interval=0.2
            )

            member.kill()
            for source, path in zip("ab", inputs, strict=True):
                with path.open("a") as f:
                    f.write("".join(f"{source}{i}\n" for i in range(100, 200)))
            wait_for(lambda: _workers(connect, names) == {connect.worker_id}, TIMEOUT_S,
                     "every task RUNNING in this process", interval=0.2)  # fmt: skip
            expected = {f"{s}{i}" for s in "ab" for i in range(200)}
            wait_for(lambda: set(lines_of(out)) >= expected, TIMEOUT_S, "every line", interval=0.2)
            assert set(lines_of(out)) == expected
    finally:
        member.kill()
