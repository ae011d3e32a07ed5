"""JsonConverter's configuration (Kafka's ``JsonConverterConfig``)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    Width,
)
from sparkcat.api.converter import CONVERTER_TYPE_CONFIG, ConverterType
from sparkcat.converters._config import new_converter_config_def

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_ENABLE_DEFAULT = True
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
SCHEMAS_CACHE_SIZE_DEFAULT = 1000
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DEFAULT = True


class DecimalFormat(enum.Enum):
    """How Decimal values are written: base64 of the unscaled bytes, or a JSON number."""

    BASE64 = "BASE64"
    NUMERIC = "NUMERIC"


DECIMAL_FORMAT_DEFAULT = DecimalFormat.BASE64.value


def _config_def() -> ConfigDef:
    definition = new_converter_config_def()
    definition.define(
        SCHEMAS_ENABLE_CONFIG,
        ConfigType.BOOLEAN,
        SCHEMAS_ENABLE_DEFAULT,
        importance=Importance.HIGH,
        documentation="Include schemas within each of the serialized values and keys.",
        group="Schemas",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Enable Schemas",
    )
    definition.define(
        SCHEMAS_CACHE_SIZE_CONFIG,
        ConfigType.INT,
        SCHEMAS_CACHE_SIZE_DEFAULT,
        importance=Importance.HIGH,
        documentation="The maximum number of schemas that can be cached in this converter "
        "instance.",
        group="Schemas",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Schema Cache Size",
    )
    definition.define(
        DECIMAL_FORMAT_CONFIG,
        ConfigType.STRING,
        DECIMAL_FORMAT_DEFAULT,
        CaseInsensitiveValidString.in_(*(f.value for f in DecimalFormat)),
        Importance.LOW,
        "Controls which format this converter will serialize decimals in. This value is case "
        "insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
        "Serialization",
        0,
        Width.MEDIUM,
        "Decimal Format",
    )
    definition.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        REPLACE_NULL_WITH_DEFAULT_DEFAULT,
        importance=Importance.LOW,
        documentation="Whether to replace fields that have a default value and that are null "
        "to the default value. When set to true, the default value is used, otherwise null is "
        "used.",
        group="Serialization",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Replace null with default",
    )
    return definition


CONFIG_DEF = _config_def()


class JsonConverterConfig(AbstractConfig):
    """Parsed JsonConverter configs; raises :class:`~sparkcat.api.errors.ConfigError`."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(CONFIG_DEF, props)
        self.schemas_enabled: bool = self.get_boolean(SCHEMAS_ENABLE_CONFIG)
        self.schema_cache_size: int = self.get_int(SCHEMAS_CACHE_SIZE_CONFIG)
        self.decimal_format = DecimalFormat(self.get_string(DECIMAL_FORMAT_CONFIG).upper())
        self.replace_null_with_default: bool = self.get_boolean(REPLACE_NULL_WITH_DEFAULT_CONFIG)
        self.type = ConverterType(self.get_string(CONVERTER_TYPE_CONFIG))

    @staticmethod
    def config_def() -> ConfigDef:
        """The ConfigDef of JsonConverter (shared; do not modify)."""
        return CONFIG_DEF
