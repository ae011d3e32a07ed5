"""The quickstart's terminal output is sparkcat's own lines only (issue 13, "a quiet first run").

A user runs the shipped configs from a fresh directory, sees the first records copied, stops the
worker with SIGTERM (what Ctrl-C and ``kill`` do). Everything the worker printed on standard
output and error must then be one of sparkcat's own lines:

- a log record: ``[YYYY-MM-DD HH:MM:SS,mmm] INFO <message> (<logger>)`` whose logger is
  ``sparkcat`` or below it — INFO only: a clean run has nothing to warn about;
- a progress line: ``[sparkcat] <name>: <n> records copied (<STATE>) | ...``.

No Spark/log4j line, no JVM warning, no Python warning, no stack trace (which would be lines
of their own). Spark's output goes to ``./logs/spark.log``, which one INFO line names.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    START_TIMEOUT_S,
    WorkerProcess,
    edit_properties,
    wait_for,
)

LOG_RECORD = re.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO \S.* \(sparkcat(\.[a-z_][a-z0-9_]*)*\)"
)
PROGRESS = re.compile(
    r"\[sparkcat\] [\w.-]+: [\d,]+ records copied \([A-Z]+\)"
    r"( \| [\w.-]+: [\d,]+ records copied \([A-Z]+\))*"
)
HARNESS_LINE = re.compile(r"===== start \d\d:\d\d:\d\d =====")  # WorkerProcess writes it


def is_sparkcat_line(line: str) -> bool:
    return any(p.fullmatch(line) for p in (LOG_RECORD, PROGRESS, HARNESS_LINE)) or not line


@pytest.mark.parametrize(
    ("line", "ours"),
    [
        ("[2026-11-23 21:23:37,527] INFO Created connector local-file-source (sparkcat)", True),
        (
            "[2026-11-23 21:23:37,671] INFO Spark's own log: /x/spark.log (sparkcat.engine)",
            True,
        ),
        ("[sparkcat] a: 1,000 records copied (RUNNING) | b: 0 records copied (PAUSED)", True),
        ("[2026-11-23 21:23:37,527] WARN Could not read (sparkcat)", False),
        ("[2026-11-23 21:23:37,527] INFO Started server process (uvicorn.error)", False),
        ("WARNING: Using incubator modules: jdk.incubator.vector", False),
        ("26/11/23 21:10:07 WARN NativeCodeLoader: Unable to load native-hadoop library", False),
        ("  require_minimum_pandas_version()", False),
        ("\tat java.base/java.lang.Thread.run(Thread.java:840)", False),
    ],
)
def test_the_line_classifier(line: str, ours: bool) -> None:
    assert is_sparkcat_line(line) is ours


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_quickstart_prints_only_sparkcats_own_lines_and_spark_logs_to_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the worker's working directory: a user's fresh clone
    monkeypatch.delenv("LOG_DIR", raising=False)
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties",
        tmp_path / "connect-standalone.properties",
        {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{free_port()}",
        },
    )
    connectors = [CONFIG_DIR / "connect-file-source.properties"]
    connectors.append(CONFIG_DIR / "connect-file-sink.properties")
    (tmp_path / "test.txt").write_text("foo\nbar\n")  # relative paths, as in the configs
    worker = WorkerProcess(worker_props, connectors, tmp_path / "terminal.out")
    try:
        started = time.monotonic()
        worker.start()
        wait_for(
            lambda: lines_of(tmp_path / "test.sink.txt") == ["foo", "bar"],
            START_TIMEOUT_S,
            "the first records in test.sink.txt",
            0.05,
            worker,
        )
        print(f"first records {time.monotonic() - started:.1f} s after start")
        worker.wait_running("local-file-source", "local-file-sink")
        assert worker.terminate() == 0, worker.log_tail()
    finally:
        worker.cleanup()

    lines = worker.log_text().splitlines()
    foreign = [line for line in lines if not is_sparkcat_line(line)]
    assert foreign == [], "\n".join(foreign)
    spark_log = tmp_path / "logs" / "spark.log"
    named = [line for line in lines if "Spark's own log: " in line]
    assert len(named) == 1 and str(spark_log) in named[0], named
    assert spark_log.stat().st_size > 0  # Spark did say things: there, not on the terminal
    assert any("sparkcat is shutting down" in line for line in lines)
