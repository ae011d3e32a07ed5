"""Serving the REST app with uvicorn on a background thread, on Kafka's ``listeners``."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI

from sparkcat.api.errors import ConfigError, ConnectError


def parse_listener(listener: str) -> tuple[str, int]:
    """``(host, port)`` of a Kafka listener URL: ``http://:8083`` (all interfaces),
    ``http://host:port``; ``HTTP`` is case-insensitive. HTTPS is not supported yet."""
    parts = urlsplit(listener.strip())
    if parts.scheme.lower() != "http":
        raise ConfigError(
            "listeners", listener, "Only http listeners are supported (https is not yet)"
        )
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError("listeners", listener, "Invalid port") from exc
    if port is None:
        raise ConfigError("listeners", listener, "A listener needs a port")
    return parts.hostname or "0.0.0.0", port


class RestServer:
    """Serves ``app`` on the first of ``listeners``; port 0 picks a free port."""

    def __init__(self, app: FastAPI, listeners: Sequence[str] | str) -> None:
        if isinstance(listeners, str):
            listeners = [item for item in listeners.split(",") if item.strip()]
        if not listeners:
            raise ConfigError("listeners", listeners, "At least one listener is required")
        self.host, self._requested_port = parse_listener(listeners[0])
        config = uvicorn.Config(
            app, host=self.host, port=self._requested_port, log_level="warning",
            lifespan="off", access_log=False,
        )  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        servers = getattr(self._server, "servers", None) or []
        for server in servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self._requested_port

    @property
    def url(self) -> str:
        host = "localhost" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}/"

    def start(self, timeout_s: float = 10.0) -> RestServer:
        """Start serving; returns once the socket is bound (``ConnectError`` otherwise)."""
        self._thread = threading.Thread(target=self._server.run, name="sparkcat-rest", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConnectError(f"Could not start the REST server on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop accepting requests, let running ones finish, and join the thread."""
        if self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout_s)
        self._thread = None


__all__ = ["RestServer", "parse_listener"]
