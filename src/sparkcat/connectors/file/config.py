"""Config keys of the FileStream connectors (Kafka's ``org.apache.kafka.connect.file``)."""

from __future__ import annotations

from sparkcat import __version__
from sparkcat.api.config import ConfigDef, ConfigType, Importance, NonEmptyString

VERSION = __version__
"""Reported by ``version()`` of all four FileStream classes."""

FILE_CONFIG = "file"
"""Source: the file to read (unset or empty: standard input). Sink: the file to append to
(unset or empty: standard output)."""

TOPIC_CONFIG = "topic"
"""Source: the single topic to write to."""

TASK_BATCH_SIZE_CONFIG = "batch.size"
"""Source: the most records one ``poll()`` returns."""

DEFAULT_TASK_BATCH_SIZE = 2000

FILENAME_FIELD = "filename"
"""Key of the source partition: ``{"filename": <file>}``."""

POSITION_FIELD = "position"
"""Key of the source offset: ``{"position": <byte position after the line>}``."""

SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to publish data to",
    )
    .define(
        TASK_BATCH_SIZE_CONFIG,
        ConfigType.INT,
        DEFAULT_TASK_BATCH_SIZE,
        importance=Importance.LOW,
        documentation=(
            "The maximum number of records the source task can read from the file each time "
            "it is polled"
        ),
    )
)

SINK_CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    ConfigType.STRING,
    None,
    importance=Importance.HIGH,
    documentation="Destination filename. If not specified, the standard output will be used",
)

__all__ = [
    "DEFAULT_TASK_BATCH_SIZE",
    "FILENAME_FIELD",
    "FILE_CONFIG",
    "POSITION_FIELD",
    "SINK_CONFIG_DEF",
    "SOURCE_CONFIG_DEF",
    "TASK_BATCH_SIZE_CONFIG",
    "TOPIC_CONFIG",
    "VERSION",
]
