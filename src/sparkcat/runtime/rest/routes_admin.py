"""Routes of Kafka's admin ``LoggingResource`` at ``/admin/loggers``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from sparkcat.runtime.rest.loggers import Loggers
from sparkcat.runtime.rest.models import LoggerLevelRequest

router = APIRouter()
log = logging.getLogger(__name__)


def _loggers(request: Request) -> Loggers:
    loggers: Loggers = request.app.state.loggers
    return loggers


@router.get("/admin/loggers")
def list_loggers(request: Request) -> dict[str, Any]:
    """Loggers with an explicit level, and ``root``: name → ``{"level","last_modified"}``."""
    return {name: level.to_json() for name, level in _loggers(request).all_levels().items()}


@router.get("/admin/loggers/{logger}")
def get_logger(request: Request, logger: str) -> dict[str, Any]:
    """The logger's (effective) level; 404 ``Logger X not found.``."""
    return _loggers(request).level(logger).to_json()


@router.put("/admin/loggers/{logger}")
def set_logger_level(
    request: Request, logger: str, body: LoggerLevelRequest, scope: str = Query(default="worker")
) -> Response:
    """Worker scope: 200 + the affected loggers. Cluster scope: 204 (standalone: applied
    here). An unknown scope is the worker scope, as in Kafka."""
    affected = _loggers(request).set_level(logger, body.level)
    if scope.lower() == "cluster":
        return Response(status_code=204)
    if scope.lower() != "worker":
        log.warning("Received invalid scope '%s' in request to adjust logging level; "
                    "will default to worker", scope)  # fmt: skip
    return JSONResponse(affected)


__all__ = ["router"]
