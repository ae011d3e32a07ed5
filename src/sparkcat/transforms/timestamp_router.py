"""TimestampRouter: rewrite the topic from the topic and the record timestamp
(Kafka's ``TimestampRouter``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms._base import SimpleTransformation
from sparkcat.transforms._date_format import java_date_format

TOPIC_FORMAT_CONFIG = "topic.format"
TIMESTAMP_FORMAT_CONFIG = "timestamp.format"
OVERVIEW_DOC = (
    "Update the record's topic field as a function of the original topic value and the record "
    "timestamp.<p/>This is mainly useful for sink connectors, since the topic field is often "
    "used to determine the equivalent entity name in the destination system(e.g. database table "
    "or search index name)."
)
CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_FORMAT_CONFIG,
        ConfigType.STRING,
        "${topic}-${timestamp}",
        importance=Importance.HIGH,
        documentation="Format string which can contain <code>${topic}</code> and "
        "<code>${timestamp}</code> as placeholders for the topic and timestamp, respectively.",
    )
    .define(
        TIMESTAMP_FORMAT_CONFIG,
        ConfigType.STRING,
        "yyyyMMdd",
        importance=Importance.HIGH,
        documentation="Format string for the timestamp that is compatible with "
        "<code>java.text.SimpleDateFormat</code>.",
    )
)


class TimestampRouter(SimpleTransformation):
    """Topic becomes ``topic.format`` with ``${topic}`` and ``${timestamp}`` (the record
    timestamp in UTC, formatted with ``timestamp.format``) substituted. See
    :mod:`sparkcat.transforms._date_format` for the supported pattern letters."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._topic_format: str = parsed[TOPIC_FORMAT_CONFIG]
        pattern = parsed[TIMESTAMP_FORMAT_CONFIG]
        try:
            self._format = java_date_format(pattern)
        except ValueError as e:
            raise ConfigError(TIMESTAMP_FORMAT_CONFIG, pattern, str(e)) from e

    def apply(self, record: Any) -> Any:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataError(f"Timestamp missing on record: {record}")
        formatted = self._format.format(timestamp)
        # Same order as Kafka: ${timestamp} in the substituted topic is replaced as well.
        topic = self._topic_format.replace("${topic}", record.topic).replace(
            "${timestamp}", formatted
        )
        return record.new_record(
            topic,
            record.kafka_partition,
            record.key_schema,
            record.key,
            record.value_schema,
            record.value,
            record.timestamp,
        )


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "TimestampRouter"]
