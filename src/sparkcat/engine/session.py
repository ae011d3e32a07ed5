"""The worker's SparkSession: built once per worker process from the worker config.

Every ``spark.*`` key of the worker config is handed to Spark untouched; sparkcat only fills in
defaults that suit a Connect worker (see :data:`DEFAULTS` and :func:`spark_settings`).

Spark's own output (log4j, the JVM's warnings, Python workers' standard error, stack traces
while stopping) goes to one file, :func:`spark_log_file`, never to the worker's terminal: the
JVM is started with its standard output and error redirected there, with the log4j2
configuration shipped beside this module (Spark at ERROR unless ``spark.log.level`` says
otherwise).

Start-up: the driver and spark-submit's launcher JVM run with :data:`JVM_OPTIONS`. Nothing is
warmed up in the background: a job that started Spark's Python daemon and a worker with the
lease modules imported made the quickstart's first record come later on two cores, not sooner
(bench/RESULTS.md, Start-up), since it competes with the first query's own Python processes.
Where Spark's Python processes run this interpreter they import its installed pyspark, not
Spark's zip of it (:mod:`sparkcat.engine.spark_home`).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from sparkcat.engine.class_archive import java_options, with_options
from sparkcat.engine.spark_home import pip_spark_home, spark_home_for_launch

log = logging.getLogger(__name__)

POOL = "sparkcat"
DAEMON_MODULE = "sparkcat.engine.daemon"
_HERE = Path(__file__).resolve().parent
LOG4J2_FILE = _HERE / "log4j2.properties"
FAIR_POOLS_FILE = _HERE / "fairscheduler.xml"
SPARK_LOG_NAME = "spark.log"
DEFAULT_SPARK_LOG_LEVEL = "ERROR"

# Why each default:
# - spark.master: task hosts hold their slots for the worker's life (engine.task_hosts) and
#   Spark-native connectors need slots of their own, so local mode gets more slots than
#   cores; ",2" allows one retry of a task whose Python worker crashed
#   (spark.task.maxFailures is ignored in plain local[N]).
# - FAIR scheduling with one shared pool, declared in the shipped pool file: one heavy
#   connector does not set the pace of the others, and a shared pool avoids the name
#   tie-break starvation of per-query pools.
# - the UI and the console progress bar are off: the UI costs memory and a port per worker
#   (set spark.ui.enabled=true to get it); the bar would garble the worker's progress lines.
DEFAULTS: dict[str, str] = {
    "spark.master": "local[16,2]",
    "spark.app.name": "sparkcat",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.scheduler.mode": "FAIR",
    "spark.scheduler.allocation.file": str(FAIR_POOLS_FILE),
    "spark.sql.shuffle.partitions": "1",
    "spark.python.worker.faulthandler.enabled": "true",
    "spark.sql.streaming.stopTimeout": "30s",
    "spark.sql.adaptive.enabled": "false",
    "spark.log.level": DEFAULT_SPARK_LOG_LEVEL,
}

# JVM options sparkcat puts in front of the user's spark.driver.extraJavaOptions (later
# options win, so the user's own -D and -XX settings still override these). The driver JVM
# only relays small lease results (Python workers copy the records), so it gains nothing from
# the C2 compiler, which otherwise burns about a core-second per Spark job in the first
# minute; one GC thread suits its small heap on a shared machine (bench/RESULTS.md, Start-up).
JVM_OPTIONS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def _executors_run_this_python(settings: Mapping[str, str]) -> bool:
    """Executors that default to this interpreter (:func:`python_for_executors`) and that
    neither ``spark.pyspark.python`` nor ``PYSPARK_PYTHON`` points elsewhere."""
    if python_for_executors(settings) is None:
        return False
    chosen = settings.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    return not chosen or os.path.abspath(chosen) == os.path.abspath(sys.executable)


# Forced, whatever the worker config says: a speculative copy of a slow lease would run the
# same task twice at once (two producers of one source task, two consumers of one partition).
FORCED: dict[str, str] = {"spark.speculation": "false"}


def spark_settings(worker_config: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings for a worker: sparkcat's defaults overridden by the ``spark.*`` keys,
    with sparkcat's log4j2 configuration and JVM options in front of the user's Java options."""
    settings = dict(DEFAULTS)
    settings.update({k: v for k, v in worker_config.items() if k.startswith("spark.")})
    if _executors_run_this_python(settings):
        # Their Python daemon can be sparkcat's, which imports what leases need once for all
        # the workers it forks (an interpreter without sparkcat could not even start it).
        settings.setdefault("spark.python.daemon.module", DAEMON_MODULE)
    ours = [
        f"-Dlog4j2.configurationFile={LOG4J2_FILE.as_uri()}",
        f"-Dconnect.spark.log.level={settings['spark.log.level'].upper()}",
        *JVM_OPTIONS,
    ]
    # Only the driver's: in local mode executors are threads of the driver JVM, and on a
    # cluster the shipped file is not on the executors' machines (they keep their own setup).
    key = "spark.driver.extraJavaOptions"
    settings[key] = " ".join([*ours, settings.get(key, "")]).strip()
    for key, value in FORCED.items():
        if settings.get(key, value) != value:
            log.warning("%s=%s is ignored: sparkcat sets %s", key, settings[key], value)
    settings.update(FORCED)
    return settings


def spark_log_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where Spark's own output goes: ``$LOG_DIR/spark.log`` (``LOG_DIR`` as in Kafka's
    scripts), else ``./logs/spark.log``, else ``<temp dir>/sparkcat-logs/spark.log`` when the
    working directory is not writable."""
    env = os.environ if environ is None else environ
    candidates = [Path(env["LOG_DIR"])] if env.get("LOG_DIR") else []
    candidates += [Path.cwd() / "logs", Path(tempfile.gettempdir()) / "sparkcat-logs"]
    for directory in candidates:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / SPARK_LOG_NAME
            with path.open("ab"):
                return path
        except OSError:
            continue
    raise OSError(f"no writable directory for Spark's log among {candidates}")


def quiet_python_warnings() -> None:
    """pyspark 4.3 warns in every process that it does not "fully support" pandas 3 (it works
    for what sparkcat uses, and sparkcat passes no pandas data): not the user's concern."""
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )


def python_for_executors(settings: Mapping[str, str]) -> str | None:
    """The ``PYSPARK_PYTHON`` default: this interpreter when executors share this machine
    (``local`` and ``local-cluster`` masters); else none, so Spark uses
    ``spark.pyspark.python`` (e.g. ``./env/bin/python`` of a ``spark.archives`` environment)
    or the executors' own ``python3`` (docs/cluster.md)."""
    return sys.executable if settings.get("spark.master", "").startswith("local") else None


@contextmanager
def _environ(name: str, value: str | None) -> Iterator[None]:
    """``name`` set to ``value`` (when not None) for the duration: only the JVM started
    meanwhile needs it, not this process's later children."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


# Hadoop's local file system, which Spark's default checkpoint manager (FileContext) uses,
# resolves links and sets permissions by running `readlink` and `chmod`: ~4 processes per
# micro-batch and connector, 0.021 of the 0.1 core that 10 idle connectors may cost. The
# FileSystem-based manager renames in Java; sparkcat's checkpoints are local scratch
# (Spark-native connectors' queries), where that rename is atomic (and it is Spark's own choice for
# stores without FileContext, such as S3). The class moved in Spark 4.1.
CHECKPOINT_MANAGER_KEY = "spark.sql.streaming.checkpointFileManagerClass"
CHECKPOINT_MANAGERS = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager",
)


def _checkpoint_manager_without_subprocesses(session: SparkSession) -> None:
    jvm = session.sparkContext._jvm
    assert jvm is not None
    for name in CHECKPOINT_MANAGERS:
        try:
            jvm.java.lang.Class.forName(name)
        except Exception:  # py4j's error for a class this Spark does not have
            continue
        session.conf.set(CHECKPOINT_MANAGER_KEY, name)
        return


def launch_spark_home(settings: Mapping[str, str]) -> str:
    """The ``SPARK_HOME`` the driver JVM starts from: the user's, else (executors running this
    interpreter) pip's pyspark without its zips (:mod:`.spark_home`), else pip's pyspark."""
    if os.environ.get("SPARK_HOME"):
        return os.environ["SPARK_HOME"]
    mirror = spark_home_for_launch() if _executors_run_this_python(settings) else None
    return mirror or str(pip_spark_home())


def build_session(worker_config: Mapping[str, str]) -> SparkSession:
    """Create (or join) the process's SparkSession for this worker."""
    settings = spark_settings(worker_config)
    # Spark's Python workers must run a matching interpreter, else they "fail to connect back";
    # on a cluster this machine's path may not exist on executors (python_for_executors).
    executor_python = python_for_executors(settings)
    if executor_python is not None:
        os.environ.setdefault("PYSPARK_PYTHON", executor_python)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    quiet_python_warnings()
    if _is_local(settings["spark.master"]):
        # Spark binds to the hostname's address and warns when it resolves to loopback; a
        # local master needs nothing but loopback.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # spark-submit first runs a short-lived launcher JVM to build the driver's command line.
    os.environ.setdefault("SPARK_LAUNCHER_OPTS", " ".join(JVM_OPTIONS))
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    launched = False
    if SparkContext._active_spark_context is None and SparkContext._gateway is None:
        log_file = spark_log_file()
        log.info("Spark's own log: %s", log_file)
        home = launch_spark_home(settings)
        conf = SparkConf(loadDefaults=False).setAll(
            list(with_options(settings, java_options(settings, home)).items())
        )
        with log_file.open("ab") as out, _environ("SPARK_HOME", home):
            # The JVM (and every process it starts) writes to the log file, not the terminal.
            # It stays in the worker's process group: a kill -9 of the group ends every
            # process at once, leases included (a JVM of its own outlived it by ~0.7 s).
            popen = {"stdout": out, "stderr": out}
            gateway = launch_gateway(conf, popen_kwargs=popen)  # type: ignore[no-untyped-call]
        SparkContext(conf=conf, gateway=gateway)
        launched = True
    session = SparkSession.builder.config(conf=conf).getOrCreate()
    if launched and CHECKPOINT_MANAGER_KEY not in settings:
        _checkpoint_manager_without_subprocesses(session)
    log.info("Spark %s session ready (master %s)", session.version, session.sparkContext.master)
    return session
