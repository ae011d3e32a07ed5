"""Kafka's ``ConfigTransformer``: substitute ``${provider:[path:]key}`` variables.

Pure functions over a map of configured providers. A variable whose provider is unknown, or
whose key the provider did not return, is left as it is (Kafka's behaviour), so a config
never silently loses a reference. :func:`reverse_transform` puts the variables back into
task configs a connector generated from its resolved config, so that what is stored (config
topic, plans shipped to Spark executors) never holds a resolved secret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sparkcat.api.config_provider import ConfigProvider

#: Kafka's ``ConfigTransformer.DEFAULT_PATTERN``: ``${provider:path:key}`` or ``${provider:key}``.
VARIABLE_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


@dataclass(frozen=True, slots=True)
class TransformResult:
    """The transformed configs and, per provider path, the shortest TTL (ms) reported."""

    data: dict[str, str]
    ttls: dict[str, int] = field(default_factory=dict)


def has_variables(value: str | None) -> bool:
    return value is not None and "${" in value and VARIABLE_PATTERN.search(value) is not None


def keys_with_variables(config: Mapping[str, str | None]) -> set[str]:
    """The keys whose value holds at least one ``${...}`` variable."""
    return {key for key, value in config.items() if has_variables(value)}


class ConfigTransformer:
    """Resolves variables with ``providers`` (alias → configured provider)."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self._providers = dict(providers)

    def transform(self, configs: Mapping[str, str | None]) -> TransformResult:
        wanted: dict[str, dict[str, set[str]]] = {}
        for value in configs.values():
            if value is None or "${" not in value:
                continue
            for match in VARIABLE_PATTERN.finditer(value):
                provider, path, key = match.group(1), match.group(3) or "", match.group(4)
                wanted.setdefault(provider, {}).setdefault(path, set()).add(key)
        lookups: dict[tuple[str, str], dict[str, str]] = {}
        ttls: dict[str, int] = {}
        for name, by_path in wanted.items():
            provider = self._providers.get(name)
            if provider is None:
                continue
            for path, keys in by_path.items():
                data = provider.get(path, set(keys))
                if data.ttl is not None and data.ttl >= 0:
                    ttls[path] = data.ttl
                lookups[(name, path)] = data.data
        out = {
            key: value if value is None else _replace(value, lookups)
            for key, value in configs.items()
        }
        return TransformResult({k: v for k, v in out.items() if v is not None}, ttls)


def _replace(value: str, lookups: Mapping[tuple[str, str], Mapping[str, str]]) -> str:
    def substitute(match: re.Match[str]) -> str:
        found = lookups.get((match.group(1), match.group(3) or ""))
        if found is None:
            return match.group(0)
        replacement = found.get(match.group(4))
        return match.group(0) if replacement is None else replacement

    return VARIABLE_PATTERN.sub(substitute, value) if "${" in value else value


def reverse_transform(
    raw_connector_config: Mapping[str, str], task_configs: Sequence[Mapping[str, str]]
) -> list[dict[str, str]]:
    """Kafka's ``AbstractHerder.reverseTransform``: in each task config, a key whose raw
    connector value holds a variable gets that raw value back."""
    variable_keys = keys_with_variables(raw_connector_config)
    result = []
    for config in task_configs:
        restored = dict(config)
        for key in variable_keys:
            if key in restored:
                restored[key] = raw_connector_config[key]
        result.append(restored)
    return result


__all__ = [
    "VARIABLE_PATTERN",
    "ConfigTransformer",
    "TransformResult",
    "has_variables",
    "keys_with_variables",
    "reverse_transform",
]
