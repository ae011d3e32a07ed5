"""Routes of Kafka's ``ConnectorPluginsResource``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Query, Request

from sparkcat.runtime.rest.models import ConfigMap, string_map

router = APIRouter()


def _herder(request: Request) -> Any:
    return request.app.state.herder


@router.get("/connector-plugins")
def connector_plugins(
    request: Request, connectors_only: bool = Query(default=True, alias="connectorsOnly")
) -> list[dict[str, Any]]:
    """``[{"class","type","version"}]``: connectors only unless ``connectorsOnly=false``."""
    return [p.to_json() for p in _herder(request).connector_plugins(connectors_only)]


@router.get("/connector-plugins/{plugin}/config")
def connector_plugin_config(request: Request, plugin: str) -> list[dict[str, Any]]:
    """The plugin's ConfigKeyInfos; 404 unknown plugin, 400 a plugin of another kind."""
    return [k.to_json() for k in _herder(request).connector_plugin_config(plugin)]


@router.put("/connector-plugins/{plugin}/config/validate")
def validate_config(request: Request, plugin: str, body: ConfigMap = Body(...)) -> dict[str, Any]:
    """ConfigInfos of the connector config in the body (which names ``connector.class``)."""
    return _herder(request).validate_plugin_config(plugin, string_map(body)).to_json()  # type: ignore[no-any-return]


__all__ = ["router"]
