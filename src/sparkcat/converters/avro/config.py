"""AvroConverter's configuration: the shared Schema Registry keys plus Confluent's
``AvroDataConfig`` keys that change the mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.converters.schema_registry.config import (
    SerdeConfig,
    define_schemas_cache,
    new_serde_config_def,
)

ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"
CONNECT_META_DATA_CONFIG = "connect.meta.data"


def _config_def() -> ConfigDef:
    definition = new_serde_config_def()
    definition.define(
        ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Enable enhanced schema support to preserve package information and Enums.",
    )
    definition.define(
        CONNECT_META_DATA_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Allow the Connect converter to add its metadata to the output schema.",
    )
    return define_schemas_cache(definition)


CONFIG_DEF = _config_def()


class AvroConverterConfig(SerdeConfig):
    """Parsed AvroConverter configs; raises :class:`~sparkcat.api.errors.ConfigError`."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(CONFIG_DEF, props)
        self.enhanced_schema_support: bool = self.get_boolean(ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG)
        self.connect_meta_data: bool = self.get_boolean(CONNECT_META_DATA_CONFIG)
