"""The REST application: :func:`create_app` and the one error mapper.

Every error leaves as Kafka's body ``{"error_code": <status>, "message": "..."}``:
``ConnectRestError`` (e.g. ``BadRequestError``) → its status, ``NotFoundError`` → 404,
``AlreadyExistsError`` → 409, an unknown path or method → 404/405 with Jersey's text
(``HTTP 404 Not Found``), anything else → 500 with the exception's message.

One deliberate difference from Kafka: a malformed or ill-typed JSON body (or path/query
parameter) is a 400 here (Kafka's Jackson errors surface as 500). ``docs/rest.md`` lists
every difference. The OpenAPI description is served at ``/openapi.json``.

The admin endpoints (``/admin/loggers``) follow ``admin.listeners``: unset → served with the
others; empty → not served (404); a list → served only there (:func:`create_admin_app`,
started by :class:`~sparkcat.runtime.rest.server.RestServer`). ``rest.extension.classes``
are registered with the app (:mod:`.extension`; built in: Kafka's
``BasicAuthSecurityRestExtension``), and with the admin app too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

import sparkcat
from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.runtime.rest import routes, routes_admin, routes_metrics, routes_plugins
from sparkcat.runtime.rest.errors import ConnectRestError
from sparkcat.runtime.rest.loggers import Loggers

log = logging.getLogger(__name__)


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


def status_of(exc: BaseException) -> int:
    """The HTTP status an exception maps to."""
    if isinstance(exc, ConnectRestError):
        return exc.status
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, AlreadyExistsError):
        return 409
    return 500


def _validation_message(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "Malformed request"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    text = str(first.get("msg", "invalid value"))
    return f"Malformed request: {where}: {text}" if where else f"Malformed request: {text}"


def _admin_listeners(herder: Any) -> list[str] | None:
    config = getattr(herder, "worker_config", None)
    if config is None:
        return None
    listeners = config.get("admin.listeners")
    return None if listeners is None else [item for item in listeners if item.strip()]


def _register_extensions(app: FastAPI, herder: Any) -> None:
    config = getattr(herder, "worker_config", None)
    if config is None:
        return
    names = list(config.get("rest.extension.classes") or [])
    if not names:
        return
    from sparkcat.runtime.config_provider import resolve_worker
    from sparkcat.runtime.rest.extension import ConnectRestExtensionContext, load_extensions

    worker = resolve_worker({k: v for k, v in config.originals().items() if v is not None})
    for extension in load_extensions(names, worker):
        extension.register(ConnectRestExtensionContext(app, herder))


def create_app(herder: Any, loggers: Loggers | None = None) -> FastAPI:
    """The Connect REST API over ``herder`` (a ``StandaloneHerder``)."""
    app = FastAPI(
        title="sparkcat (Kafka Connect REST API)", version=sparkcat.__version__,
        docs_url=None, redoc_url=None, openapi_url="/openapi.json",
    )  # fmt: skip
    app.state.herder = herder
    app.state.loggers = loggers or Loggers()
    app.include_router(routes.router)
    app.include_router(routes_plugins.router)
    app.include_router(routes_metrics.router)
    if _admin_listeners(herder) is None:  # unset: served with the rest
        app.include_router(routes_admin.router)
    _install_error_handlers(app)
    _register_extensions(app, herder)
    return app


def create_admin_app(app: FastAPI) -> FastAPI:
    """The admin endpoints alone, for ``admin.listeners``, over ``app``'s herder."""
    herder = app.state.herder
    admin = FastAPI(
        title="sparkcat admin", version=sparkcat.__version__,
        docs_url=None, redoc_url=None, openapi_url=None,
    )  # fmt: skip
    admin.state.herder = herder
    admin.state.loggers = app.state.loggers
    admin.include_router(routes_admin.router)
    _install_error_handlers(admin)
    _register_extensions(admin, herder)
    return admin


def _install_error_handlers(app: FastAPI) -> None:

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        phrase = HTTPStatus(exc.status_code).phrase
        return error_response(exc.status_code, f"HTTP {exc.status_code} {phrase}")

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, _validation_message(exc))

    @app.middleware("http")
    async def map_errors(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        try:
            return await call_next(request)
        except Exception as exc:
            status = status_of(exc)
            if status >= 500:
                # Expected failures (ConnectError) log one line; anything else its traceback.
                trace = not isinstance(exc, ConnectError)
                log.error("Uncaught exception in REST call to %s: %s", request.url.path, exc,
                          exc_info=exc if trace else None)  # fmt: skip
            return error_response(status, str(exc))


__all__ = ["create_admin_app", "create_app", "error_response", "status_of"]
