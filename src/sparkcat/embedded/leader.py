"""Writes that Kafka reserves for the group's leader, from any member of an embedded cluster.

The distributed herder raises ``NotLeaderError`` for them on a follower and its REST layer
forwards the request to the leader. The embedded API does the same without an HTTP hop of
its own: on the leader the herder method runs in-process; on a follower the request goes to
the leader's REST endpoint (``<leader url><path>``) exactly as the REST layer would send it,
and the leader's error answer becomes the matching exception (:mod:`.errors`).

While a rebalance is under way (Kafka's 409 "stale configuration" / "no known leader"), the
call waits for the group to settle and tries again until ``timeout_s``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson

from sparkcat.api.errors import ConnectError
from sparkcat.embedded.errors import error_from_answer
from sparkcat.runtime.distributed.herder import DistributedHerder, NotLeaderError
from sparkcat.runtime.rest.errors import ConnectRestError

WRITE_TIMEOUT_S = 90.0
_RETRY_PAUSE_S = 0.2


def _retryable(exc: ConnectError) -> bool:
    return isinstance(exc, NotLeaderError) or (
        isinstance(exc, ConnectRestError)
        and exc.status == 409
        and ("momentarily" in exc.message or "conflicting operation" in exc.message)
    )


def call_leader(
    herder: DistributedHerder,
    local: Callable[[], Any],
    method: str,
    path: str,
    body: Any = None,
    timeout_s: float = WRITE_TIMEOUT_S,
) -> Any:
    """``local()`` on the leader, else ``method path`` (JSON ``body``) on the leader's REST
    API; the REST answer is returned decoded (``None`` when empty)."""
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not herder.wait_stable(remaining):
            raise ConnectRestError(
                f"No stable group leader within {timeout_s:g} s to {method} {path}", 409
            )
        try:
            if herder.is_leader():
                return local()
            return _remote(herder, method, path, body)
        except ConnectError as exc:
            if not _retryable(exc) or time.monotonic() + _RETRY_PAUSE_S >= deadline:
                raise
            time.sleep(_RETRY_PAUSE_S)


def _remote(herder: DistributedHerder, method: str, path: str, body: Any) -> Any:
    leader = herder.leader_url()
    if leader is None:
        raise NotLeaderError(f"{method} {path}", None)
    data = b"" if body is None else orjson.dumps(body)
    headers = {"Content-Type": "application/json"}
    try:
        status, answer = herder.rest_client.send(
            method, f"{leader.rstrip('/')}{path}", data, headers
        )
    except OSError as exc:  # the leader went away: the next rebalance names another
        raise NotLeaderError(f"{method} {path} ({exc})", leader) from exc
    if status >= 300:
        raise error_from_answer(status, answer)
    return orjson.loads(answer) if answer.strip() else None


__all__ = ["WRITE_TIMEOUT_S", "call_leader"]
