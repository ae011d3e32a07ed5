"""``GET /metrics`` (Prometheus text), ``GET /ui`` (the status page) and the JSON it polls.

None of these is in Kafka's REST API (Kafka exposes metrics over JMX only); the page calls
Kafka's own endpoints for statuses and actions, and ``/ui/metrics.json`` for the numbers.
"""

from __future__ import annotations

import math
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from sparkcat.runtime.metrics import prometheus
from sparkcat.runtime.metrics.names import SINK_GROUP, SOURCE_GROUP
from sparkcat.runtime.metrics.registry import Metric

router = APIRouter()

_ASSETS = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
_RATE = {SOURCE_GROUP: "source-record-write-rate", SINK_GROUP: "sink-record-send-rate"}


def _herder(request: Request) -> Any:
    return request.app.state.herder


def _collect(herder: Any) -> list[Metric]:
    return herder.metrics.collect(herder.metric_views())  # type: ignore[no-any-return]


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Kafka Connect's metrics of this worker in the Prometheus text format."""
    herder = _herder(request)
    body = prometheus.render(lambda: _collect(herder))
    return Response(body, media_type=prometheus.CONTENT_TYPE)


def _number(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


def metrics_summary(herder: Any) -> dict[str, Any]:
    """Every metric grouped by connector and task, plus each connector's records per second
    (written to Kafka / put to the sink) and current consumer lag."""
    worker: dict[str, dict[str, Any]] = {}
    connectors: dict[str, dict[str, Any]] = {}
    for metric in _collect(herder):
        tags = dict(metric.tags)
        value = metric.text if metric.text is not None else _number(metric.value)
        name = tags.get("connector")
        if name is None or ("task" not in tags and metric.group != "connector-metrics"):
            target = worker.setdefault(metric.group, {})
            if name is not None:
                target = target.setdefault(name, {})
            target[metric.name] = value
            continue
        entry = connectors.setdefault(name, {"groups": {}, "tasks": {}, "rate": 0.0})
        if "task" not in tags:
            entry["groups"].setdefault(metric.group, {})[metric.name] = value
            continue
        task = entry["tasks"].setdefault(tags["task"], {})
        task.setdefault(metric.group, {})[metric.name] = value
        if _RATE.get(metric.group) == metric.name and value is not None:
            entry["rate"] += value
    for name, entry in connectors.items():
        entry["lag"] = herder.metrics.current_lag(name)
    return {"worker": worker, "connectors": connectors}


@router.get("/ui/metrics.json", include_in_schema=False)
def ui_metrics(request: Request) -> JSONResponse:
    return JSONResponse(metrics_summary(_herder(request)))


def _asset(name: str) -> str:
    return (resources.files("sparkcat.runtime.rest") / "ui" / name).read_text(encoding="utf-8")


@router.get("/ui", response_class=HTMLResponse, include_in_schema=False)
def ui_page() -> HTMLResponse:
    """The status page (plain HTML and one script, shipped as package data)."""
    return HTMLResponse(_asset("index.html"))


@router.get("/ui/{asset}", include_in_schema=False)
def ui_asset(asset: str) -> Response:
    if asset not in _ASSETS:
        return JSONResponse({"error_code": 404, "message": "HTTP 404 Not Found"}, status_code=404)
    return Response(_asset(asset), media_type=_ASSETS[asset])


__all__ = ["metrics_summary", "router"]
