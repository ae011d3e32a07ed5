"""Routes of the REST API (Kafka's ``RootResource`` and ``ConnectorsResource``).

Each handler parses the request, makes one herder call and shapes the entity; status codes
and bodies are Kafka's (connect-spec §1.2-1.3). Errors are mapped in :mod:`.app`. Bodies
that are not JSON objects (or whose ``config`` is not one) are 400 here, 500 in Kafka.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import JSONResponse, Response

import sparkcat
from sparkcat.runtime.errors import BadRequestError

router = APIRouter()

# Jersey's JSON provider coerces scalar values of a Map<String, String> to strings.
_Scalar = str | int | float | bool | None


def _herder(request: Request) -> Any:
    return request.app.state.herder


def _string_map(value: Any, what: str) -> dict[str, str | None]:
    if not isinstance(value, dict):
        raise BadRequestError(f"{what} must be a JSON object of strings")
    result: dict[str, str | None] = {}
    for key, item in value.items():
        if isinstance(item, dict | list):
            raise BadRequestError(f"{what}: the value of '{key}' must be a string")
        result[key] = (
            None if item is None else ("true" if item is True else "false")
            if isinstance(item, bool) else str(item)
        )  # fmt: skip
    return result


@router.get("/")
def server_info(request: Request) -> dict[str, Any]:
    """``{"version","commit","kafka_cluster_id"}``."""
    herder = _herder(request)
    return {
        "version": sparkcat.__version__,
        "commit": getattr(herder, "commit", "unknown"),
        "kafka_cluster_id": getattr(herder, "kafka_cluster_id", None),
    }


@router.get("/connectors")
def list_connectors(request: Request, expand: list[str] = Query(default=[])) -> Any:
    """Names, or with ``expand=status``/``expand=info`` a map of name → expansions."""
    herder = _herder(request)
    if not expand:
        return herder.connectors()
    return herder.expanded_connectors(expand)


@router.post("/connectors", status_code=201)
def create_connector(request: Request, body: dict[str, Any] = Body(...)) -> JSONResponse:
    """201 + ``Location`` + ConnectorInfo; 409 if it exists; 400 if invalid.

    Deliberate difference: unknown fields and a bad ``initial_state`` are 400 (Kafka: 500).
    """
    name = str(body.get("name") or "").strip()
    config = _string_map(body.get("config") or {}, "config")
    info = _herder(request).create_connector(
        name, config, body.get("initial_state"), body.get("initial_offsets")
    )
    location = str(request.base_url).rstrip("/") + "/connectors/" + quote(name, safe="")
    return JSONResponse(info.to_json(), status_code=201, headers={"Location": location})


@router.get("/connectors/{name}")
def connector_info(request: Request, name: str) -> dict[str, Any]:
    return _herder(request).connector_info(name).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/config")
def connector_config(request: Request, name: str) -> dict[str, str]:
    return _herder(request).connector_config(name)  # type: ignore[no-any-return]


@router.get("/connectors/{name}/status")
def connector_status(request: Request, name: str) -> dict[str, Any]:
    return _herder(request).connector_status(name).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/tasks")
def task_configs(request: Request, name: str) -> list[dict[str, Any]]:
    return [t.to_json() for t in _herder(request).task_configs(name)]


@router.get("/connectors/{name}/tasks/{task}/status")
def task_status(request: Request, name: str, task: int) -> dict[str, Any]:
    return _herder(request).task_status(name, task).to_json()  # type: ignore[no-any-return]


@router.delete("/connectors/{name}", status_code=204)
def delete_connector(request: Request, name: str) -> Response:
    _herder(request).delete_connector(name)
    return Response(status_code=204)


@router.put("/connectors/{name}/pause", status_code=202)
def pause_connector(request: Request, name: str) -> Response:
    _herder(request).pause_connector(name)
    return Response(status_code=202)


@router.put("/connectors/{name}/resume", status_code=202)
def resume_connector(request: Request, name: str) -> Response:
    _herder(request).resume_connector(name)
    return Response(status_code=202)


@router.put("/connectors/{name}/stop", status_code=204)
def stop_connector(request: Request, name: str) -> Response:
    _herder(request).stop_connector(name)
    return Response(status_code=204)


@router.post("/connectors/{name}/restart")
def restart_connector(
    request: Request,
    name: str,
    include_tasks: bool = Query(default=False, alias="includeTasks"),
    only_failed: bool = Query(default=False, alias="onlyFailed"),
) -> Response:
    """Both flags false: 204 (connector instance only). Otherwise 202 + the restart plan."""
    plan = _herder(request).restart_connector(name, include_tasks, only_failed)
    if plan is None:
        return Response(status_code=204)
    return JSONResponse(plan.to_json(), status_code=202)


@router.post("/connectors/{name}/tasks/{task}/restart", status_code=204)
def restart_task(request: Request, name: str, task: int) -> Response:
    _herder(request).restart_task(name, task)
    return Response(status_code=204)


__all__ = ["router"]
