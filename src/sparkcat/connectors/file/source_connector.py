"""FileStreamSourceConnector (Kafka's ``org.apache.kafka.connect.file``, alias
``FileStreamSource``): copies the lines of one file, or standard input, to one topic."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.config import AbstractConfig, ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.api.source import ExactlyOnceSupport, SourceConnector
from sparkcat.connectors.file.config import (
    FILE_CONFIG,
    FILENAME_FIELD,
    POSITION_FIELD,
    SOURCE_CONFIG_DEF,
    TOPIC_CONFIG,
    VERSION,
)
from sparkcat.connectors.file.source_task import FileStreamSourceTask

log = logging.getLogger(__name__)

_SINGLE_TOPIC = "FileStreamSourceConnector should only have a single topic when used as a source."


class FileStreamSourceConnector(SourceConnector):
    """Reads ``file`` (standard input when unset) line by line into ``topic``; always one
    task, whatever ``tasks.max`` says, since one reader per file makes sense."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_CONFIG_DEF, props)
        if "," in config.get_string(TOPIC_CONFIG):
            raise ConfigError(_SINGLE_TOPIC)
        self._props = dict(props)
        filename = config.get(FILE_CONFIG) or "standard input"
        log.info("Starting file source connector reading from %s", filename)

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        """Nothing to release: the connector has no background work."""

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        for value in result:
            if value.name == TOPIC_CONFIG and "," in (value.value or ""):
                value.add_error_message(_SINGLE_TOPIC)
        return result

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport:
        # Exactly-once needs offsets, which stdin does not have.
        filename = AbstractConfig(SOURCE_CONFIG_DEF, config).get(FILE_CONFIG)
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Check the offsets have Kafka's FileStream shape; the task checks the position
        against the file when it opens it."""
        if not AbstractConfig(SOURCE_CONFIG_DEF, config).get(FILE_CONFIG):
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is "
                "unspecified. This is because stdin is used for input and offsets are not "
                "tracked."
            )
        for partition, offset in offsets:
            if offset is None:
                # Tombstones are always allowed, so stale partitions can be cleaned up.
                continue
            _check_offset(partition, offset)
        return True


def _check_offset(partition: Mapping[str, Any] | None, offset: Mapping[str, Any]) -> None:
    if POSITION_FIELD not in offset:
        raise ConnectError(
            f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
        )
    position = offset[POSITION_FIELD]
    if not isinstance(position, int) or isinstance(position, bool):
        raise ConnectError(
            f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
        )
    if position < 0:
        raise ConnectError(
            f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
        )
    if partition is None:
        raise ConnectError("Partition objects cannot be null")
    if FILENAME_FIELD not in partition:
        raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")


__all__ = ["FileStreamSourceConnector"]
