"""REST forwarding to the leader and verification of internal requests (Kafka's
``HerderRequestHandler.completeOrForwardRequest`` and ``InternalRequestSignature`` checks).

:func:`install` adds one middleware to the worker's REST app. For the endpoints Kafka runs
on the leader (create; config PUT/PATCH; delete; stop; connector and task restart; offsets
PATCH/DELETE; the internal ``POST /connectors/{c}/tasks`` and ``PUT /connectors/{c}/fence``),
a follower sends the request on to ``<leader url><path>`` with the same method and body,
copying only the ``Authorization`` header (and, on internal requests, their signature), and
answers with the leader's status and body. The hidden ``forward`` query parameter bounds the
hops as in Kafka: absent on the user's request (sent on with ``forward=true``), ``true`` on
the first hop (sent on with ``forward=false``), ``false`` is not sent on: 409. Kafka's 409
texts answer while a rebalance is under way or no leader is known. GETs, pause and resume
are answered by the worker that receives them. A task restart is run by the worker that
owns the task; the leader sends it there.

Internal requests are verified before anything else when ``connect.protocol=sessioned``
(400 missing signature or unknown algorithm, 503 no session key yet, 403 wrong signature).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware

from sparkcat.runtime.distributed.herder import STALE_CONFIG_MESSAGE
from sparkcat.runtime.distributed.signing import (
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    verify_internal_request,
)
from sparkcat.runtime.rest.errors import ConnectRestError

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder

NO_LEADER_MESSAGE = (
    "Cannot complete request momentarily due to no known leader URL, likely because a "
    "rebalance was underway."
)
CONFLICT_MESSAGE = (
    "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)
STABLE_WAIT_S = 30.0

_NAME = r"/connectors/[^/]+"
_LEADER_ONLY = [
    ("POST", re.compile(r"^/connectors/?$")),
    ("PUT", re.compile(rf"^{_NAME}/config/?$")),
    ("PATCH", re.compile(rf"^{_NAME}/config/?$")),
    ("DELETE", re.compile(rf"^{_NAME}/?$")),
    ("PUT", re.compile(rf"^{_NAME}/stop/?$")),
    ("POST", re.compile(rf"^{_NAME}/restart/?$")),
    ("PATCH", re.compile(rf"^{_NAME}/offsets/?$")),
    ("DELETE", re.compile(rf"^{_NAME}/offsets/?$")),
]
_TASK_RESTART = re.compile(r"^/connectors/([^/]+)/tasks/(\d+)/restart/?$")
_INTERNAL = [
    ("POST", re.compile(rf"^{_NAME}/tasks/?$")),
    ("PUT", re.compile(rf"^{_NAME}/fence/?$")),
]


def _matches(rules: list[tuple[str, re.Pattern[str]]], method: str, path: str) -> bool:
    return any(method == m and pattern.match(path) for m, pattern in rules)


def _error(status: int, message: str) -> Response:
    from sparkcat.runtime.rest.app import error_response

    return error_response(status, message)


def install(app: FastAPI, herder: DistributedHerder) -> None:
    """Add the forwarding middleware to ``app`` (the worker's REST app), innermost: REST
    extensions (Basic auth) run first, as Kafka's filters run before its resources forward,
    and the app's error mapper shapes anything it raises."""

    async def forward(request: Request, call_next: Any) -> Response:
        method, path = request.method, request.url.path
        internal = _matches(_INTERNAL, method, path)
        task_restart = method == "POST" and _TASK_RESTART.match(path)
        if not (internal or task_restart or _matches(_LEADER_ONLY, method, path)):
            return await call_next(request)  # type: ignore[no-any-return]
        body = await request.body()
        if internal and herder.config.get_string("connect.protocol") == "sessioned":
            try:
                verify_internal_request(
                    body, dict(request.headers), herder.snapshot.session_key,
                    herder.config.get_list("inter.worker.verification.algorithms"),
                )  # fmt: skip
            except ConnectRestError as exc:
                return _error(exc.status, exc.message)
        if task_restart and herder.runs_task(task_restart.group(1), int(task_restart.group(2))):
            return await call_next(request)  # type: ignore[no-any-return]
        # As Kafka's herder queues requests until a rebalance completes, wait for one.
        if not await run_in_threadpool(herder.wait_stable, STABLE_WAIT_S):
            return _error(409, STALE_CONFIG_MESSAGE)
        if herder.is_leader():
            return await call_next(request)  # type: ignore[no-any-return]
        return await run_in_threadpool(_forward, request, body, herder, internal)

    app.user_middleware.append(Middleware(BaseHTTPMiddleware, dispatch=forward))


def _forward(request: Request, body: bytes, herder: DistributedHerder, internal: bool) -> Response:
    hop = request.query_params.get("forward")
    if hop is not None and hop.lower() == "false":
        return _error(409, CONFLICT_MESSAGE)
    leader = herder.leader_url()
    if leader is None:
        return _error(409, NO_LEADER_MESSAGE)
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"]
    params.append(("forward", "true" if hop is None else "false"))
    query = "&".join(f"{k}={quote(v)}" for k, v in params)
    url = f"{leader.rstrip('/')}{request.url.path}?{query}"
    headers = {"Content-Type": request.headers.get("content-type", "application/json")}
    copied = ["Authorization"]
    if internal:
        copied += [SIGNATURE_HEADER, SIGNATURE_ALGORITHM_HEADER]
    for header in copied:
        value = request.headers.get(header)
        if value is not None:
            headers[header] = value
    try:
        status, answer = herder.rest_client.send(request.method, url, body, headers)
    except OSError as exc:
        return _error(500, f"IO Error trying to forward REST request: {exc}")
    response = Response(answer, status_code=status, media_type="application/json")
    if status == 201:
        name = _created_name(request, answer)
        if name is not None:
            base = str(request.base_url).rstrip("/")
            response.headers["Location"] = f"{base}/connectors/{quote(name, safe='')}"
    return response


def _created_name(request: Request, answer: bytes) -> str | None:
    import orjson

    try:
        name = orjson.loads(answer).get("name")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return str(name) if name is not None else None


__all__ = ["CONFLICT_MESSAGE", "NO_LEADER_MESSAGE", "install"]
