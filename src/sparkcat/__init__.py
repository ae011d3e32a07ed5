"""sparkcat: Kafka Connect re-built in Python, with its data pipeline on Apache Spark.

The plugin API that connectors, converters and transforms are written against is
:mod:`sparkcat.api`; everything else is the framework that runs them.
"""

__version__ = "0.1.0"
