"""The Spark data plane: the only package that imports pyspark.

:class:`SparkEngine` runs each connector as one Structured Streaming query whose tasks are
leases (:mod:`sparkcat.runtime.tasks.lease`) executed on Spark executors.

``SparkEngine`` is imported on first use (PEP 562): every Python process Spark starts for a
query (data-source lookup, creation, read planning, the streaming source runner, executors'
workers) imports this package to unpickle sparkcat's data sources, and the whole engine
(the Spark-native data plane, pyarrow) would cost each of them ~0.5 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkcat.engine.spark_engine import SparkEngine

__all__ = ["SparkEngine"]


def __getattr__(name: str) -> Any:
    if name == "SparkEngine":
        from sparkcat.engine.spark_engine import SparkEngine

        return SparkEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
