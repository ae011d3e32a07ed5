"""The worker's SparkSession: built once per worker process from the worker config.

Every ``spark.*`` key of the worker config is handed to Spark untouched; sparkcat only fills in
defaults that suit a Connect worker (see :data:`DEFAULTS`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

POOL = "sparkcat"

# Why each default:
# - spark.master: a lease holds a task slot for its whole duration and mostly waits on I/O, so
#   local mode gets more slots than cores (ARCHITECTURE §3); ",2" allows one retry of a task
#   whose Python worker crashed (spark.task.maxFailures is ignored in plain local[N]).
# - FAIR scheduling with one shared pool: one heavy connector does not set the pace of the
#   others, and a shared pool avoids the name tie-break starvation of per-query pools.
# - the UI and the console progress bar are off: the UI costs memory and a port per worker
#   (set spark.ui.enabled=true to get it); the bar would garble the worker's progress lines.
DEFAULTS: dict[str, str] = {
    "spark.master": "local[16,2]",
    "spark.app.name": "sparkcat",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.scheduler.mode": "FAIR",
    "spark.sql.shuffle.partitions": "1",
    "spark.python.worker.faulthandler.enabled": "true",
    "spark.sql.streaming.stopTimeout": "30s",
    "spark.sql.adaptive.enabled": "false",
}


def spark_settings(worker_config: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings for a worker: sparkcat's defaults overridden by the ``spark.*`` keys."""
    settings = dict(DEFAULTS)
    settings.update({k: v for k, v in worker_config.items() if k.startswith("spark.")})
    return settings


def build_session(worker_config: Mapping[str, str]) -> SparkSession:
    """Create (or join) the process's SparkSession for this worker."""
    # Spark's Python workers must run this interpreter, else they "fail to connect back".
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder
    for key, value in spark_settings(worker_config).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(worker_config.get("spark.log.level", "WARN"))
    log.info("Spark %s session ready (master %s)", session.version, session.sparkContext.master)
    return session
