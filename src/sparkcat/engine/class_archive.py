"""A class-data-sharing archive of the driver JVM's classes: a Spark session in ~3.3 s, not ~6.

Before a session is ready the driver JVM loads and verifies ~12,000 classes from their jars,
most of its start on two cores. A JVM started with ``-XX:ArchiveClassesAtExit`` writes the
classes it loaded to an archive when it exits (Java's dynamic CDS, JDK 13 and later); a JVM
started with ``-XX:SharedArchiveFile`` maps them from there instead (bench/RESULTS.md,
Start-up). :func:`make_archive` (``sparkcat jvm-archive``, run by ``make setup``) starts a
session, runs a DataFrame job and a Python job (as task hosts and Spark-native connectors
do) and exits, so that the archive holds what a worker loads first; :func:`java_options`
hands the archive to every later driver JVM.

An archive only fits the JVM binary, the Spark home and the class path it was made with, so
one is kept per combination (:func:`archive_path`) in the user's cache directory. A JVM that
cannot use an archive says so in Spark's log and loads its classes as usual.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import pyspark

log = logging.getLogger(__name__)

USE = "-XX:SharedArchiveFile="
DUMP = "-XX:ArchiveClassesAtExit="
# Options by which the user already decides about class data sharing.
USER_SHARING = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
DRIVER_CLASS_PATH = "spark.driver.extraClassPath"
# A JVM writing its archive at exit takes ~12 s on two cores after the session stops.
DUMP_TIMEOUT_S = 300.0


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/sparkcat``, else ``~/.cache/sparkcat``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkcat"


def java_binary(environ: Mapping[str, str] | None = None) -> Path | None:
    """The ``java`` that Spark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    env = os.environ if environ is None else environ
    if env.get("JAVA_HOME"):
        candidate: str | None = str(Path(env["JAVA_HOME"], "bin", "java"))
    else:
        candidate = shutil.which("java", path=env.get("PATH"))
    if candidate is None or not os.path.isfile(candidate):
        return None
    return Path(candidate).resolve()


def archive_path(
    settings: Mapping[str, str], spark_home: str, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Where the archive for these Spark settings and this Spark home is kept; None without a
    ``java`` to key it by."""
    java = java_binary(environ)
    if java is None:
        return None
    stat = java.stat()
    key = "\0".join(
        (
            str(java),
            str(stat.st_size),
            str(stat.st_mtime_ns),
            str(Path(spark_home).resolve()),
            pyspark.__version__,
            settings.get(DRIVER_CLASS_PATH, ""),
        )
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir(environ) / f"spark-driver-{digest}.jsa"


def user_decides(settings: Mapping[str, str]) -> bool:
    """Whether the user's driver options already say something about class data sharing."""
    options = settings.get(DRIVER_OPTIONS, "")
    return any(flag in options for flag in USER_SHARING)


def java_options(settings: Mapping[str, str], spark_home: str) -> list[str]:
    """The driver JVM's option that maps the archive, when there is one for these settings."""
    if user_decides(settings):
        return []
    path = archive_path(settings, spark_home)
    if path is None or not path.is_file():
        log.info(
            "Spark's driver JVM starts without a class archive: `sparkcat jvm-archive` makes "
            "one (a Spark session then starts in about half the time)"
        )
        return []
    return [f"{USE}{path}"]


def with_options(settings: Mapping[str, str], options: list[str]) -> dict[str, str]:
    """``settings`` with ``options`` appended to the driver's Java options."""
    out = dict(settings)
    if options:
        out[DRIVER_OPTIONS] = " ".join([out.get(DRIVER_OPTIONS, ""), *options]).strip()
    return out


def archive_for(worker_config: Mapping[str, str]) -> Path | None:
    """Where the archive for a worker config's Spark settings is kept (as its driver JVM
    would start: :func:`sparkcat.engine.session.launch_spark_home`)."""
    from sparkcat.engine import session

    settings = session.spark_settings(worker_config)
    return archive_path(settings, session.launch_spark_home(settings))


def make_archive(worker_config: Mapping[str, str]) -> tuple[Path, float]:
    """Make the archive for ``worker_config``'s Spark settings in this (fresh) process; its
    path and the seconds it took. Raises OSError (or Spark's error) when none was written."""
    from sparkcat.engine import session

    started = time.monotonic()
    if user_decides(session.spark_settings(worker_config)):
        raise OSError(f"{DRIVER_OPTIONS} already sets class data sharing; no archive made")
    path = archive_for(worker_config)
    if path is None:
        raise OSError("no java found (set JAVA_HOME or put java on PATH)")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    logs = Path(tempfile.mkdtemp(prefix="sparkcat-jvm-archive-"))
    config = with_options(worker_config, [f"{DUMP}{partial}"])
    try:
        _run_and_exit(config, logs)
        if not partial.is_file() or partial.stat().st_size == 0:
            raise OSError(f"the JVM wrote no class archive (its log: {logs / 'spark.log'})")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    shutil.rmtree(logs, ignore_errors=True)
    return path, time.monotonic() - started


def _run_and_exit(config: Mapping[str, str], logs: Path) -> None:
    """Start a session, run a DataFrame job and a Python job, then let the JVM exit on its own
    (it writes the archive as it exits; a killed JVM writes none)."""
    from pyspark import SparkContext

    from sparkcat.engine.session import build_session

    os.environ["LOG_DIR"] = str(logs)  # the dump's thousands of CDS lines stay out of the way
    spark = build_session(config)
    try:
        spark.range(100).selectExpr("sum(id)").collect()  # Spark SQL, as native connectors
        # ... and a Python job, as the task hosts are.
        spark.sparkContext.parallelize(range(4), 2).map(lambda x: x + 1).collect()
    finally:
        spark.stop()
        gateway = SparkContext._gateway
        proc = gateway.proc  # type: ignore[union-attr]
        gateway.shutdown()  # type: ignore[union-attr]
        proc.stdin.close()  # the JVM exits when the Python side closes its standard input
        proc.wait(DUMP_TIMEOUT_S)
