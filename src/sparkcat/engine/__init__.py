"""The Spark data plane: the only package that imports pyspark.

:class:`SparkEngine` runs each connector as one Structured Streaming query whose tasks are
leases (:mod:`sparkcat.runtime.tasks.lease`) executed on Spark executors.
"""

from sparkcat.engine.spark_engine import SparkEngine

__all__ = ["SparkEngine"]
