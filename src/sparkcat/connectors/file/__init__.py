"""The FileStream connectors, Kafka's ``org.apache.kafka.connect.file`` quickstart plugins.

Written against :mod:`sparkcat.api` only, as a third-party connector would be.
"""

from sparkcat.connectors.file.sink_connector import FileStreamSinkConnector
from sparkcat.connectors.file.sink_task import FileStreamSinkTask
from sparkcat.connectors.file.source_connector import FileStreamSourceConnector
from sparkcat.connectors.file.source_task import FileStreamSourceTask

__all__ = [
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]
