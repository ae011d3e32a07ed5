"""ProtobufConverter's configuration: the shared Schema Registry keys plus Confluent's
``ProtobufDataConfig`` keys that change the mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.converters.schema_registry.config import (
    SerdeConfig,
    define_schemas_cache,
    new_serde_config_def,
)

ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG = "enhanced.protobuf.schema.support"
GENERATE_INDEX_FOR_UNIONS_CONFIG = "generate.index.for.unions"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
INT_FOR_ENUMS_CONFIG = "int.for.enums"
OPTIONAL_FOR_NULLABLES_CONFIG = "optional.for.nullables"
WRAPPER_FOR_NULLABLES_CONFIG = "wrapper.for.nullables"
WRAPPER_FOR_RAW_PRIMITIVES_CONFIG = "wrapper.for.raw.primitives"
GENERATE_STRUCT_FOR_NULLS_CONFIG = "generate.struct.for.nulls"

_FLAGS = (
    (ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG, False, "Enable enhanced schema support to "
     "preserve package information (full message and enum names)."),
    (GENERATE_INDEX_FOR_UNIONS_CONFIG, True, "Whether to suffix union (oneof) field names "
     "with an underscore and the oneof's index."),
    (SCRUB_INVALID_NAMES_CONFIG, False, "Whether to scrub names that are invalid in "
     "Protobuf."),
    (INT_FOR_ENUMS_CONFIG, False, "Whether to represent enums as integers."),
    (OPTIONAL_FOR_NULLABLES_CONFIG, False, "Whether nullable fields should be specified "
     "with an optional label."),
    (WRAPPER_FOR_NULLABLES_CONFIG, False, "Whether nullable fields should use primitive "
     "wrapper messages."),
    (WRAPPER_FOR_RAW_PRIMITIVES_CONFIG, True, "Whether a wrapper message should be "
     "interpreted as a raw primitive at root level."),
    (GENERATE_STRUCT_FOR_NULLS_CONFIG, False, "Whether to generate a default struct for "
     "null messages."),
)  # fmt: skip


def _config_def() -> ConfigDef:
    definition = new_serde_config_def()
    for key, default, doc in _FLAGS:
        definition.define(
            key, ConfigType.BOOLEAN, default, importance=Importance.MEDIUM, documentation=doc
        )
    return define_schemas_cache(definition)


CONFIG_DEF = _config_def()


class ProtobufConverterConfig(SerdeConfig):
    """Parsed ProtobufConverter configs; raises :class:`~sparkcat.api.errors.ConfigError`."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(CONFIG_DEF, props)
        self.enhanced_schema_support: bool = self.get_boolean(
            ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG
        )
        self.generate_index_for_unions: bool = self.get_boolean(GENERATE_INDEX_FOR_UNIONS_CONFIG)
        self.scrub_invalid_names: bool = self.get_boolean(SCRUB_INVALID_NAMES_CONFIG)
        self.int_for_enums: bool = self.get_boolean(INT_FOR_ENUMS_CONFIG)
        self.optional_for_nullables: bool = self.get_boolean(OPTIONAL_FOR_NULLABLES_CONFIG)
        self.wrapper_for_nullables: bool = self.get_boolean(WRAPPER_FOR_NULLABLES_CONFIG)
        self.wrapper_for_raw_primitives: bool = self.get_boolean(WRAPPER_FOR_RAW_PRIMITIVES_CONFIG)
        self.generate_struct_for_nulls: bool = self.get_boolean(GENERATE_STRUCT_FOR_NULLS_CONFIG)
