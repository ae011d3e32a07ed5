"""JsonSchemaConverter's configuration: the shared Schema Registry keys plus Confluent's
``JsonSchemaDataConfig`` keys that change the mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from sparkcat.converters.schema_registry.config import (
    SerdeConfig,
    define_schemas_cache,
    new_serde_config_def,
)

OBJECT_ADDITIONAL_PROPERTIES_CONFIG = "object.additional.properties"
USE_OPTIONAL_FOR_NON_REQUIRED_CONFIG = "use.optional.for.nonrequired"
DECIMAL_FORMAT_CONFIG = "decimal.format"


def _config_def() -> ConfigDef:
    definition = new_serde_config_def()
    definition.define(
        OBJECT_ADDITIONAL_PROPERTIES_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation="Whether to allow additional properties for object schemas.",
    )
    definition.define(
        USE_OPTIONAL_FOR_NON_REQUIRED_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether to set non-required properties to be optional.",
    )
    definition.define(
        DECIMAL_FORMAT_CONFIG,
        ConfigType.STRING,
        "BASE64",
        CaseInsensitiveValidString.in_("BASE64", "NUMERIC"),
        Importance.LOW,
        "Controls which format this converter will serialize decimals in: BASE64 or NUMERIC.",
    )
    return define_schemas_cache(definition)


CONFIG_DEF = _config_def()


class JsonSchemaConverterConfig(SerdeConfig):
    """Parsed JsonSchemaConverter configs; raises :class:`~sparkcat.api.errors.ConfigError`."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(CONFIG_DEF, props)
        self.allow_additional_properties: bool = self.get_boolean(
            OBJECT_ADDITIONAL_PROPERTIES_CONFIG
        )
        self.optional_for_nonrequired: bool = self.get_boolean(USE_OPTIONAL_FOR_NON_REQUIRED_CONFIG)
        self.decimal_numeric: bool = self.get_string(DECIMAL_FORMAT_CONFIG).upper() == "NUMERIC"
