"""Config-level operations of the herder: ``PATCH`` and ``PUT .../config``, ``tasks-config``,
connector plugins (listing, config definitions, validation) and the internal worker-to-worker
endpoints, with Kafka's messages throughout. Topic tracking (KIP-558) is :mod:`.topics`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    sink_config_def,
    source_config_def,
)
from sparkcat.runtime.herder.core import HerderCore
from sparkcat.runtime.isolation.plugins import kind_base
from sparkcat.runtime.rest.config_infos import config_key_info
from sparkcat.runtime.rest.entities import ConfigInfos, ConfigKeyInfo, ConnectorInfo, PluginInfo
from sparkcat.runtime.rest.errors import BadRequestError, ConnectRestError

log = logging.getLogger(__name__)

# The kinds GET /connector-plugins?connectorsOnly=false lists, in Kafka's order.
_LISTED = ("sink", "source", "transformation", "predicate", "converter", "header_converter")
_CONFIGURABLE = _LISTED


def _normalized_plugin_name(name: str) -> str:
    suffix = "Connector"
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


class HerderConfig(HerderCore):
    """Config and plugin operations of :class:`~sparkcat.runtime.herder.base.AbstractHerder`."""

    # -- configs ------------------------------------------------------------------------------
    def put_connector_config(
        self, name: str, config: Mapping[str, str | None]
    ) -> tuple[bool, ConnectorInfo]:
        """``PUT .../config``: ``(created, info)``; a ``null`` value is a validation error."""
        return self.update_connector_config(name, config)  # type: ignore[arg-type]

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        """``PATCH .../config``: merge ``patch`` into the config (``None`` removes a key),
        validate the result, apply it like ``PUT``."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Connector {name} not found")
            patched = dict(managed.config)
            for key, value in patch.items():
                if value is None:
                    patched.pop(key, None)
                else:
                    patched[key] = value
            return self.update_connector_config(name, patched)[1]

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        """``GET .../tasks-config`` (deprecated): ``{"<name>-<task>": config}``; 404 also when
        the connector has no tasks, as Kafka's standalone herder."""
        log.warning(
            "The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated and will be "
            "removed in the next major release. Please use the 'GET /connectors/{connector}/tasks'"
            " endpoint instead."
        )
        with self._lock:
            managed = self._connectors.get(name)
            configs = [] if managed is None else managed.task_configs
            if not configs:
                raise NotFoundError(f"Connector {name} not found")
            return {f"{name}-{i}": dict(c) for i, c in enumerate(configs)}

    # -- connector plugins ----------------------------------------------------------------
    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        """``GET /connector-plugins``: sinks, sources (then transformations, predicates,
        converters and header converters unless ``connectors_only``)."""
        kinds = ("sink", "source") if connectors_only else _LISTED
        return [
            PluginInfo(d.class_name, d.kind, d.version)
            for d in self.registry.plugins()
            if d.kind in kinds
        ]

    def connector_plugin_config(self, plugin: str) -> list[ConfigKeyInfo]:
        """``GET /connector-plugins/{plugin}/config``: the plugin's keys; for a connector
        then the framework's Source/SinkConnectorConfig keys it does not define itself."""
        try:
            cls = self.registry.find(plugin, "connector")
        except (ImportError, AttributeError, TypeError):
            cls = None
        if cls is None:
            raise NotFoundError(f"Unknown plugin {plugin}.")
        kind = next((k for k in _CONFIGURABLE if _is_plugin(cls, k)), None)
        if kind is None:
            raise BadRequestError(
                f"Invalid plugin class {plugin}. Valid types are sink, source, converter, "
                "header_converter, transformation, predicate."
            )
        try:
            own = cls().config()
        except Exception as exc:
            raise ConnectError(f"Failed to read the config definition of {plugin}: {exc}") from exc
        keys = dict(own.config_keys()) if own is not None else {}
        if kind in ("sink", "source"):
            base = (
                sink_config_def(self.registry)
                if kind == "sink"
                else source_config_def(self.registry)
            )
            for key_name, key in base.config_keys().items():
                keys.setdefault(key_name, key)
        return [config_key_info(key) for key in keys.values()]

    def validate_plugin_config(self, plugin: str, config: Mapping[str, str | None]) -> ConfigInfos:
        """``PUT /connector-plugins/{plugin}/config/validate`` (``connector.class`` must be
        in ``config`` and name the same plugin)."""
        included = config.get(CONNECTOR_CLASS_CONFIG)
        if included is not None and not _normalized_plugin_name(included).endswith(
            _normalized_plugin_name(plugin)
        ):
            raise BadRequestError(
                f"Included connector type {included} does not match request type {plugin}"
            )
        return self.validate_config(config)

    # -- internal endpoints (distributed mode only in Kafka) -------------------------------
    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """``POST /connectors/{name}/tasks``: not in standalone mode (500, as Kafka)."""
        raise ConnectRestError(
            "Kafka Connect in standalone mode does not support externally setting task "
            "configurations."
        )

    def fence_zombie_source_tasks(self, name: str) -> None:
        """``PUT /connectors/{name}/fence``: not in standalone mode (500, as Kafka)."""
        raise ConnectRestError(
            "Kafka Connect in standalone mode does not support exactly-once source connectors."
        )


def _is_plugin(cls: type, kind: str) -> bool:
    try:
        base = kind_base(kind)
    except (ImportError, AttributeError):
        return False
    return isinstance(cls, type) and issubclass(cls, base) and cls is not base


__all__ = ["HerderConfig"]
