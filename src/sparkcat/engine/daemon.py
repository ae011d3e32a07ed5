"""Spark's Python daemon with what a lease imports imported once, before it forks workers.

Spark starts one daemon per worker module (``python -m <spark.python.daemon.module> <worker
module>``) and forks a Python worker from it per concurrent task. A task host then imports
confluent-kafka and sparkcat's lease modules, and a Spark-native connector's worker pandas,
pyarrow and numpy (Spark's Arrow path): ~0.8 s in each of them, and ~100 MB PSS each with 10
connectors running. Imported in the daemon instead, those pages are shared copy-on-write by every
worker it forks (``gc.freeze`` keeps the collector from writing to them; ~53 MB PSS each),
and a new worker starts with its imports done (bench/RESULTS.md, Footprint).

Used for local masters only (:func:`sparkcat.engine.session.spark_settings`): there the
executors run this interpreter, so sparkcat is importable. Only the task workers' daemon
(``pyspark.worker``) preloads; the planner daemons stay as Spark starts them.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import warnings

# What a lease worker imports (a failing one is left to the worker, which then imports it
# itself as it would without this daemon).
PRELOAD = (
    "pyspark.worker",
    "pandas",
    "pyarrow",
    "pyspark.sql.pandas.serializers",
    "pyspark.sql.worker.plan_data_source_read",
    "confluent_kafka",
    "orjson",
    "sparkcat.engine.task_hosts",
    "sparkcat.runtime.tasks.host",
    "sparkcat.engine.shipping",
    "sparkcat.runtime.tasks.lease",
    "sparkcat.runtime.tasks.worker_source_task",
    "sparkcat.runtime.tasks.worker_sink_task",
    "sparkcat.runtime.isolation.plugins",
    "sparkcat.runtime.config_provider",
)
TASK_WORKER = "pyspark.worker"


def preload() -> list[str]:
    """Import :data:`PRELOAD`; the names that could not be imported."""
    # numpy's OpenBLAS starts a thread pool at import; forked workers do no BLAS work, and a
    # daemon should fork with as few threads as possible.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except Exception:
                failed.append(name)
    gc.collect()
    gc.freeze()
    return failed


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] == TASK_WORKER:
        failed = preload()
        if failed:
            print(f"sparkcat daemon: not preloaded: {', '.join(failed)}", file=sys.stderr)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
