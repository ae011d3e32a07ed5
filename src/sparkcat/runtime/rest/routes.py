"""Routes of Kafka's ``RootResource``, ``ConnectorsResource`` and ``InternalConnectResource``.

Each handler parses the request, makes one herder call and shapes the entity; paths, query
parameters, status codes and bodies are Kafka's.
Errors are mapped in :mod:`.app`. Bodies of the wrong shape are 400 here, 500 in Kafka.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import JSONResponse, Response

import sparkcat
from sparkcat.runtime.rest.models import (
    ConfigMap,
    ConnectorOffsetsRequest,
    CreateConnectorRequest,
    string_map,
)

router = APIRouter()


def _herder(request: Request) -> Any:
    return request.app.state.herder


def _location(request: Request, name: str) -> str:
    return str(request.base_url).rstrip("/") + "/connectors/" + quote(name, safe="")


def _created(request: Request, name: str, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, status_code=201, headers={"Location": _location(request, name)})


# -- RootResource -------------------------------------------------------------------------
@router.get("/")
def server_info(request: Request) -> dict[str, Any]:
    """``{"version","commit","kafka_cluster_id"}``."""
    herder = _herder(request)
    return {
        "version": sparkcat.__version__,
        "commit": getattr(herder, "commit", "unknown"),
        "kafka_cluster_id": getattr(herder, "kafka_cluster_id", None),
    }


@router.get("/health")
def health(request: Request) -> JSONResponse:
    """200 healthy, 503 while starting, 500 if the herder does not answer in 10 s."""
    status = _herder(request).health_check()
    return JSONResponse(status.to_json(), status_code=status.http_status)


# -- ConnectorsResource -----------------------------------------------------------------------
@router.get("/connectors")
def list_connectors(request: Request, expand: list[str] = Query(default=[])) -> Any:
    """Names, or with ``expand=status``/``expand=info`` a map of name → expansions."""
    herder = _herder(request)
    return herder.expanded_connectors(expand) if expand else herder.connectors()


@router.post("/connectors", status_code=201)
def create_connector(request: Request, body: CreateConnectorRequest) -> JSONResponse:
    """201 + ``Location`` + ConnectorInfo (+ ``offsets_status`` with ``initial_offsets``)."""
    name = (body.name or "").strip()
    info = _herder(request).create_connector(
        name, string_map(body.config), body.initial_state, body.offsets_json()
    )
    return _created(request, name, info.to_json())


@router.get("/connectors/{name}")
def connector_info(request: Request, name: str) -> dict[str, Any]:
    return _herder(request).connector_info(name).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/config")
def connector_config(request: Request, name: str) -> dict[str, str]:
    return _herder(request).connector_config(name)  # type: ignore[no-any-return]


@router.put("/connectors/{name}/config")
def put_connector_config(request: Request, name: str, body: ConfigMap = Body(...)) -> JSONResponse:
    """201 + ``Location`` when created, 200 when updated; ConnectorInfo."""
    created, info = _herder(request).put_connector_config(name, string_map(body))
    if created:
        return _created(request, name, info.to_json())
    return JSONResponse(info.to_json())


@router.patch("/connectors/{name}/config")
def patch_connector_config(
    request: Request, name: str, body: ConfigMap = Body(...)
) -> dict[str, Any]:
    """Merge into the config (``null`` removes a key); 200 ConnectorInfo."""
    return _herder(request).patch_connector_config(name, string_map(body)).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/status")
def connector_status(request: Request, name: str) -> dict[str, Any]:
    return _herder(request).connector_status(name).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/tasks")
def task_configs(request: Request, name: str) -> list[dict[str, Any]]:
    return [t.to_json() for t in _herder(request).task_configs(name)]


@router.get("/connectors/{name}/tasks-config", deprecated=True)
def tasks_config(request: Request, name: str) -> dict[str, dict[str, str]]:
    return _herder(request).tasks_config(name)  # type: ignore[no-any-return]


@router.get("/connectors/{name}/tasks/{task}/status")
def task_status(request: Request, name: str, task: int) -> dict[str, Any]:
    return _herder(request).task_status(name, task).to_json()  # type: ignore[no-any-return]


@router.get("/connectors/{name}/tasks/{task}/metrics")
def task_metrics(request: Request, name: str, task: int) -> dict[str, Any]:
    """sparkcat-specific (Kafka exposes these over JMX only): the task's
    ``task-error-metrics`` since the worker started."""
    metrics = _herder(request).task_metrics(name, task)
    return {"connector": name, "task": task, "task-error-metrics": metrics}


@router.get("/connectors/{name}/topics")
def connector_topics(request: Request, name: str) -> dict[str, Any]:
    """``{"<name>": {"topics": [...]}}`` (KIP-558); 403 when tracking is disabled."""
    return _herder(request).connector_active_topics(name)  # type: ignore[no-any-return]


@router.put("/connectors/{name}/topics/reset", status_code=202)
def reset_connector_topics(request: Request, name: str) -> Response:
    _herder(request).reset_connector_active_topics(name)
    return Response(status_code=202)


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


# -- offsets (KIP-875) ---------------------------------------------------------------------
@router.get("/connectors/{name}/offsets")
def connector_offsets(request: Request, name: str) -> dict[str, Any]:
    """``{"offsets": [{"partition": {...}, "offset": {...}}, ...]}``."""
    return _herder(request).connector_offsets(name)  # type: ignore[no-any-return]


@router.patch("/connectors/{name}/offsets")
def alter_connector_offsets(
    request: Request, name: str, body: ConnectorOffsetsRequest | None = Body(default=None)
) -> dict[str, str]:
    """200 ``{"message": ...}``; the connector must be STOPPED."""
    offsets = body.as_json() if body is not None else {}
    return {"message": _herder(request).alter_connector_offsets(name, offsets)}


@router.delete("/connectors/{name}/offsets")
def reset_connector_offsets(request: Request, name: str) -> dict[str, str]:
    """200 ``{"message": ...}``; the connector must be STOPPED."""
    return {"message": _herder(request).reset_connector_offsets(name)}


# -- InternalConnectResource (worker to worker; standalone answers 500 as Kafka) -----------
@router.post("/connectors/{name}/tasks", status_code=204)
def put_task_configs(
    request: Request, name: str, body: list[dict[str, str]] = Body(...)
) -> Response:
    _herder(request).put_task_configs(name, body)
    return Response(status_code=204)


@router.put("/connectors/{name}/fence", status_code=204)
def fence_zombies(request: Request, name: str) -> Response:
    _herder(request).fence_zombie_source_tasks(name)
    return Response(status_code=204)


__all__ = ["router"]
