"""The config keys every Schema Registry converter shares (Confluent's
``AbstractKafkaSchemaSerDeConfig``, the subset a Connect converter uses)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import (
    AbstractConfig,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    ValidString,
)
from sparkcat.api.converter import CONVERTER_TYPE_CONFIG, ConverterType
from sparkcat.api.errors import ConfigError
from sparkcat.converters._config import new_converter_config_def
from sparkcat.converters.schema_registry import subject

SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url"
BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG = "basic.auth.credentials.source"
USER_INFO_CONFIG = "basic.auth.user.info"
SCHEMA_REGISTRY_USER_INFO_CONFIG = "schema.registry.basic.auth.user.info"
AUTO_REGISTER_SCHEMAS_CONFIG = "auto.register.schemas"
USE_LATEST_VERSION_CONFIG = "use.latest.version"
LATEST_COMPATIBILITY_STRICT_CONFIG = "latest.compatibility.strict"
KEY_SUBJECT_NAME_STRATEGY_CONFIG = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY_CONFIG = "value.subject.name.strategy"
MAX_SCHEMAS_PER_SUBJECT_CONFIG = "max.schemas.per.subject"
NORMALIZE_SCHEMAS_CONFIG = "normalize.schemas"
# In each of Confluent's AvroDataConfig, ProtobufDataConfig and JsonSchemaDataConfig alike.
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.config"
SCHEMAS_CACHE_SIZE_DEFAULT = 1000

CREDENTIALS_SOURCES = ("URL", "USER_INFO", "SASL_INHERIT")


def _check_strategy(name: str, value: Any) -> None:
    subject.strategy(str(value))


def new_serde_config_def() -> ConfigDef:
    """A fresh ConfigDef with ``converter.type`` and the shared Schema Registry keys."""
    definition = new_converter_config_def()
    definition.define(
        SCHEMA_REGISTRY_URL_CONFIG,
        ConfigType.LIST,
        ConfigDef.NO_DEFAULT_VALUE,
        importance=Importance.HIGH,
        documentation="Comma-separated list of URLs for Schema Registry instances that can be "
        "used to register or look up schemas.",
    )
    definition.define(
        BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG,
        ConfigType.STRING,
        "URL",
        ValidString.in_(*CREDENTIALS_SOURCES),
        Importance.MEDIUM,
        "Where the Basic Auth credentials come from: URL (user:password@ in "
        "schema.registry.url) or USER_INFO (basic.auth.user.info).",
    )
    for key in (USER_INFO_CONFIG, SCHEMA_REGISTRY_USER_INFO_CONFIG):
        definition.define(
            key,
            ConfigType.PASSWORD,
            "",
            importance=Importance.MEDIUM,
            documentation="Basic Auth user info, user:password, used with "
            "basic.auth.credentials.source=USER_INFO.",
        )
    for key, default, doc in (
        (AUTO_REGISTER_SCHEMAS_CONFIG, True, "Register the schema of each new record schema."),
        (USE_LATEST_VERSION_CONFIG, False, "Write with the subject's latest schema version."),
        (
            LATEST_COMPATIBILITY_STRICT_CONFIG,
            True,
            "With use.latest.version: require the latest version to be backward compatible "
            "with the record's schema.",
        ),
        (NORMALIZE_SCHEMAS_CONFIG, False, "Ask the registry to normalize schemas."),
    ):
        definition.define(
            key, ConfigType.BOOLEAN, default, importance=Importance.MEDIUM, documentation=doc
        )
    for key in (KEY_SUBJECT_NAME_STRATEGY_CONFIG, VALUE_SUBJECT_NAME_STRATEGY_CONFIG):
        definition.define(
            key,
            ConfigType.STRING,
            subject.TOPIC_NAME_STRATEGY,
            LambdaValidator.with_(_check_strategy, "a subject name strategy class"),
            Importance.MEDIUM,
            "How subject names are derived: TopicNameStrategy, RecordNameStrategy or "
            "TopicRecordNameStrategy (Confluent's class names).",
        )
    definition.define(
        MAX_SCHEMAS_PER_SUBJECT_CONFIG,
        ConfigType.INT,
        1000,
        importance=Importance.LOW,
        documentation="Maximum number of schemas cached by the registry client.",
    )
    return definition


def define_schemas_cache(definition: ConfigDef) -> ConfigDef:
    """``definition`` with ``schemas.cache.config``, which each converter defines after its
    own mapping keys (where Confluent's data configs have it)."""
    return definition.define(
        SCHEMAS_CACHE_SIZE_CONFIG,
        ConfigType.INT,
        SCHEMAS_CACHE_SIZE_DEFAULT,
        importance=Importance.LOW,
        documentation="Size of the converted schemas cache.",
    )


class SerdeConfig(AbstractConfig):
    """Parsed shared keys; raises :class:`~sparkcat.api.errors.ConfigError`. ``definition``
    holds them (:func:`new_serde_config_def`) and ``schemas.cache.config``
    (:func:`define_schemas_cache`)."""

    def __init__(self, definition: ConfigDef, props: Mapping[str, Any]) -> None:
        super().__init__(definition, props)
        self.urls: tuple[str, ...] = tuple(self.get_list(SCHEMA_REGISTRY_URL_CONFIG))
        if not self.urls:
            raise ConfigError(f'Missing required configuration "{SCHEMA_REGISTRY_URL_CONFIG}"')
        self.credentials_source: str = self.get_string(BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG)
        user_info = self.get_password(USER_INFO_CONFIG).value
        if not user_info:
            user_info = self.get_password(SCHEMA_REGISTRY_USER_INFO_CONFIG).value
        self.user_info: str = user_info or ""
        if self.credentials_source == "SASL_INHERIT":
            raise ConfigError(
                "basic.auth.credentials.source=SASL_INHERIT is not supported by sparkcat; "
                "use USER_INFO"
            )
        if self.credentials_source == "USER_INFO" and ":" not in self.user_info:
            raise ConfigError(f"{USER_INFO_CONFIG} must be user:password with USER_INFO")
        self.auto_register: bool = self.get_boolean(AUTO_REGISTER_SCHEMAS_CONFIG)
        self.use_latest_version: bool = self.get_boolean(USE_LATEST_VERSION_CONFIG)
        self.latest_compatibility_strict: bool = self.get_boolean(
            LATEST_COMPATIBILITY_STRICT_CONFIG
        )
        self.normalize: bool = self.get_boolean(NORMALIZE_SCHEMAS_CONFIG)
        self.is_key = ConverterType(self.get_string(CONVERTER_TYPE_CONFIG)) is ConverterType.KEY
        key = (
            KEY_SUBJECT_NAME_STRATEGY_CONFIG if self.is_key else VALUE_SUBJECT_NAME_STRATEGY_CONFIG
        )
        self.subject_strategy_name: str = self.get_string(key)
        self.subject_strategy = subject.strategy(self.subject_strategy_name)
        self.max_schemas_per_subject: int = self.get_int(MAX_SCHEMAS_PER_SUBJECT_CONFIG)
        self.schemas_cache_size: int = self.get_int(SCHEMAS_CACHE_SIZE_CONFIG)

    def client_conf(self) -> dict[str, Any]:
        """The configuration of confluent-kafka's ``SchemaRegistryClient``."""
        conf: dict[str, Any] = {
            "url": ",".join(self.urls),
            "cache.capacity": self.max_schemas_per_subject,
            # A converter fails its task (and the framework retries) rather than waiting long.
            "max.retries": 2,
            "retries.wait.ms": 200,
            "retries.max.wait.ms": 2000,
            "timeout": 30,
        }
        if self.credentials_source == "USER_INFO":
            conf["basic.auth.user.info"] = self.user_info
        return conf
