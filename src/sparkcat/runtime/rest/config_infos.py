"""Validation results as the REST API's ``ConfigInfos`` (Kafka's ``AbstractHerder``
``generateResult``, ``convertConfigKey``, ``convertConfigValue`` and ``prefixedConfigInfos``),
and Kafka's 400 message for a create or update whose validation found errors. Values are
rendered as strings through their key's type, as Kafka's ``ConfigDef.convertToString`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sparkcat.api.config import ConfigKey, ConfigType, ConfigValue
from sparkcat.api.config._types import convert_to_string
from sparkcat.runtime.rest.entities import ConfigInfo, ConfigInfos, ConfigKeyInfo, ConfigValueInfo


def config_key_info(key: ConfigKey, prefix: str = "") -> ConfigKeyInfo:
    required = not key.has_default()
    return ConfigKeyInfo(
        name=prefix + key.name,
        type=key.type.name,
        required=required,
        default_value=None if required else convert_to_string(key.default, key.type),
        importance=key.importance.name,
        documentation=key.documentation,
        group=key.group,
        order=key.order_in_group,
        width=key.width.name,
        display_name=key.display_name,
        dependents=list(key.dependents),
    )


def config_value_info(
    value: ConfigValue, type_: ConfigType | None, name: str | None = None
) -> ConfigValueInfo:
    element_type = ConfigType.STRING if type_ is ConfigType.LIST else type_
    return ConfigValueInfo(
        name=value.name if name is None else name,
        value=convert_to_string(value.value, type_),
        recommended_values=[
            v
            for v in (convert_to_string(r, element_type) for r in value.recommended_values)
            if v is not None
        ],
        errors=list(value.error_messages),
        visible=value.visible,
    )


def generate_result(
    connector_type: str,
    config_keys: Mapping[str, ConfigKey],
    values: Iterable[ConfigValue],
    groups: list[str],
) -> ConfigInfos:
    """Entries for values without a definition first, then one per defined key."""
    configs: list[ConfigInfo] = []
    by_name: dict[str, ConfigValue] = {}
    errors = 0
    for value in values:
        by_name[value.name] = value
        if value.name not in config_keys:
            configs.append(ConfigInfo(None, config_value_info(value, None)))
            errors += len(value.error_messages)
    for name, key in config_keys.items():
        found = by_name.get(name)
        if found is not None:
            errors += len(found.error_messages)
        value_info = None if found is None else config_value_info(found, key.type)
        configs.append(ConfigInfo(config_key_info(key), value_info))
    return ConfigInfos(connector_type, errors, groups, configs)


def prefixed_result(
    values: Iterable[ConfigValue], prefix: str, config_keys: Mapping[str, ConfigKey]
) -> ConfigInfos:
    """Client-override entries (``producer.override.`` ...), as Kafka's
    ``prefixedConfigInfos``: a value of a key the client defines carries that definition
    (prefixed) and is rendered by its type (``[hidden]`` for a password); one error per
    erroring entry."""
    configs: list[ConfigInfo] = []
    groups: list[str] = []
    for value in values:
        key = config_keys.get(value.name)
        if key is not None and key.group is not None and key.group not in groups:
            groups.append(key.group)
        definition = None if key is None else config_key_info(key, prefix)
        type_ = None if key is None else key.type
        configs.append(ConfigInfo(definition, config_value_info(value, type_, prefix + value.name)))
    errors = sum(1 for c in configs if c.value is not None and c.value.errors)
    return ConfigInfos("", errors, groups, configs)


def merge_results(connector_type: str, *results: ConfigInfos | None) -> ConfigInfos:
    configs: list[ConfigInfo] = []
    groups: list[str] = []
    errors = 0
    for result in results:
        if result is None:
            continue
        errors += result.error_count
        configs.extend(result.configs)
        groups.extend(g for g in result.groups if g not in groups)
    return ConfigInfos(connector_type, errors, groups, configs)


def invalid_config_message(infos: ConfigInfos) -> str:
    """Kafka's 400 message for a create/update whose validation found errors."""
    lines = [
        f"Connector configuration is invalid and contains the following "
        f"{infos.error_count} error(s):",
        *infos.error_messages(),
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`",
    ]
    return "\n".join(lines)


__all__ = [
    "config_key_info",
    "config_value_info",
    "generate_result",
    "invalid_config_message",
    "merge_results",
    "prefixed_result",
]
