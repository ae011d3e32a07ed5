"""Spark settings of a worker session: the shipped log4j2 and FAIR pool files, the log file."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sparkcat.engine.session import (
    DAEMON_MODULE,
    FAIR_POOLS_FILE,
    LOG4J2_FILE,
    POOL,
    spark_log_file,
    spark_settings,
)


def test_defaults_configure_the_shared_fair_pool_from_the_shipped_file() -> None:
    settings = spark_settings({})
    assert settings["spark.scheduler.mode"] == "FAIR"
    pools = ET.parse(settings["spark.scheduler.allocation.file"]).getroot()
    assert [p.get("name") for p in pools.iter("pool")] == [POOL]
    assert Path(settings["spark.scheduler.allocation.file"]) == FAIR_POOLS_FILE


def test_spark_logs_at_error_unless_the_worker_asks_for_more() -> None:
    assert spark_settings({})["spark.log.level"] == "ERROR"
    assert "-Dconnect.spark.log.level=ERROR" in spark_settings({})["spark.driver.extraJavaOptions"]
    settings = spark_settings({"spark.log.level": "info"})
    assert settings["spark.log.level"] == "info"
    assert "-Dconnect.spark.log.level=INFO" in settings["spark.driver.extraJavaOptions"]


def test_the_shipped_log4j2_file_is_passed_before_the_users_java_options() -> None:
    assert LOG4J2_FILE.is_file()
    options = spark_settings({"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=x"})
    words = options["spark.driver.extraJavaOptions"].split()
    assert words[0] == f"-Dlog4j2.configurationFile={LOG4J2_FILE.as_uri()}"
    assert words[-1] == "-Dlog4j2.configurationFile=x"  # the JVM keeps the last: the user's
    # Spark refuses -Dspark* in Java options; none of ours may look like one.
    assert not any(
        w.startswith("-Dspark") for w in spark_settings({})["spark.driver.extraJavaOptions"].split()
    )


def test_spark_log_file_is_under_log_dir_else_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert spark_log_file({"LOG_DIR": str(tmp_path / "d")}) == tmp_path / "d" / "spark.log"
    monkeypatch.chdir(tmp_path)
    assert spark_log_file({}) == tmp_path / "logs" / "spark.log"
    assert (tmp_path / "logs" / "spark.log").exists()


def test_an_unwritable_log_dir_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.chdir(tmp_path)
    assert spark_log_file({"LOG_DIR": str(blocker / "sub")}) == tmp_path / "logs" / "spark.log"


def test_the_driver_runs_c1_only_with_the_serial_gc_unless_the_user_says_otherwise() -> None:
    words = spark_settings({})["spark.driver.extraJavaOptions"].split()
    assert "-XX:TieredStopAtLevel=1" in words and "-XX:+UseSerialGC" in words
    user = "-XX:TieredStopAtLevel=4 -XX:-UseSerialGC"
    words = spark_settings({"spark.driver.extraJavaOptions": user})[
        "spark.driver.extraJavaOptions"
    ].split()
    assert words[-2:] == user.split()  # after ours: the JVM keeps the last of each flag


def test_local_executors_use_sparkcats_python_daemon_unless_the_worker_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert spark_settings({})["spark.python.daemon.module"] == DAEMON_MODULE
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    assert spark_settings({})["spark.python.daemon.module"] == DAEMON_MODULE
    cluster = {"spark.master": "local-cluster[2,1,1024]"}
    assert spark_settings(cluster)["spark.python.daemon.module"] == DAEMON_MODULE
    own = {"spark.python.daemon.module": "mydaemon"}
    assert spark_settings(own)["spark.python.daemon.module"] == "mydaemon"
    # executors elsewhere run their own interpreter, where sparkcat may not be installed
    assert "spark.python.daemon.module" not in spark_settings({"spark.master": "spark://m:7077"})


def test_executors_on_another_interpreter_keep_sparks_daemon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """That interpreter may lack sparkcat (the shipped zip reaches tasks, not the daemon)."""
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/other/bin/python")
    assert "spark.python.daemon.module" not in spark_settings({})
    monkeypatch.delenv("PYSPARK_PYTHON")
    other = {"spark.pyspark.python": "/opt/other/bin/python"}
    assert "spark.python.daemon.module" not in spark_settings(other)
