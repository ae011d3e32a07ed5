"""Object-storage sinks with Confluent S3 sink semantics (S3 via s3fs, or local files).

Written against :mod:`sparkcat.api` only, as a third-party connector would be.
"""

from sparkcat.connectors.storage.sink_connector import FileSystemSinkConnector, S3SinkConnector
from sparkcat.connectors.storage.sink_task import FileSystemSinkTask, S3SinkTask

__all__ = ["FileSystemSinkConnector", "FileSystemSinkTask", "S3SinkConnector", "S3SinkTask"]
