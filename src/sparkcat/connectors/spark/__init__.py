"""Spark-native connectors: any Spark data source as a Connect sink or source.

Written against :mod:`sparkcat.api` only, as a third-party connector would be; the engine
does the copying with Spark's readers and writers (``docs/spark-connectors.md``).
"""

from sparkcat.connectors.spark.connectors import SparkSinkConnector, SparkSourceConnector
from sparkcat.connectors.spark.tasks import SparkSinkTask, SparkSourceTask

__all__ = ["SparkSinkConnector", "SparkSinkTask", "SparkSourceConnector", "SparkSourceTask"]
