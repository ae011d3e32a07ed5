"""Serving the REST app with uvicorn on background threads, on Kafka's ``listeners``.

Every listener gets its own uvicorn server (one thread each) over the same app:
``http://host:port`` plainly, ``https://host:port`` with TLS from the ``listeners.https.*``
settings (:mod:`.tls`). With a non-empty ``admin.listeners`` the admin endpoints
(``/admin/...``) leave the regular listeners and are served on those alone (TLS from
``admin.listeners.https.*``), as in Kafka.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.runtime.rest.tls import (
    ADMIN_LISTENERS_HTTPS_PREFIX,
    LISTENERS_HTTPS_PREFIX,
    ServerTls,
    server_tls,
    ssl_settings,
)


def parse_listener(listener: str, name: str = "listeners") -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a Kafka listener URL: ``http://:8083`` (all interfaces),
    ``https://host:port``; the scheme is case-insensitive."""
    parts = urlsplit(listener.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ConfigError(name, listener, "Listener must be of the form http://... or https://...")
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(name, listener, "Invalid port") from exc
    if port is None:
        raise ConfigError(name, listener, "A listener needs a port")
    return scheme, parts.hostname or "0.0.0.0", port


def _listeners(value: Sequence[str] | str | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    return [item.strip() for item in value if item.strip()]


class _Listener:
    """One uvicorn server on one listener URL."""

    def __init__(self, app: FastAPI, url: str, name: str, tls: ServerTls | None) -> None:
        self.scheme, self.host, self.requested_port = parse_listener(url, name)
        options: dict[str, Any] = tls.uvicorn_options() if tls is not None else {}
        config = uvicorn.Config(
            app, host=self.host, port=self.requested_port, log_level="warning",
            lifespan="off", access_log=False, **options,
        )  # fmt: skip
        self.tls = tls
        self.server = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        for server in getattr(self.server, "servers", None) or []:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self.requested_port

    @property
    def url(self) -> str:
        host = "localhost" if self.host in ("0.0.0.0", "::") else self.host
        return f"{self.scheme}://{host}:{self.port}/"

    def start(self, deadline: float) -> None:
        self.thread = threading.Thread(target=self.server.run, name="sparkcat-rest", daemon=True)
        self.thread.start()
        try:
            while not self.server.started:
                if not self.thread.is_alive() or time.monotonic() > deadline:
                    raise ConnectError(
                        f"Could not start the REST server on {self.host}:{self.port}"
                    )
                time.sleep(0.02)
        finally:
            if self.tls is not None:
                self.tls.cleanup()  # the SSL context holds what it needs now

    def stop(self, timeout_s: float) -> None:
        if self.thread is None:
            return
        self.server.should_exit = True
        self.thread.join(timeout_s)
        self.thread = None


class RestServer:
    """Serves ``app`` on every one of ``listeners``; port 0 picks a free port.

    ``worker_config`` (the worker's settings) supplies the ``listeners.https.*`` TLS settings
    and ``admin.listeners``; without it only ``http`` listeners can be served.
    """

    def __init__(
        self,
        app: FastAPI,
        listeners: Sequence[str] | str,
        worker_config: Mapping[str, Any] | None = None,
    ) -> None:
        urls = _listeners(listeners)
        if not urls:
            raise ConfigError("listeners", listeners, "At least one listener is required")
        worker = dict(worker_config or {})
        self._listeners = [self._listener(app, u, "listeners", worker) for u in urls]
        admin_urls = _listeners(worker.get("admin.listeners"))
        if admin_urls:
            from sparkcat.runtime.rest.app import create_admin_app

            admin = create_admin_app(app)
            self._listeners += [
                self._listener(admin, u, "admin.listeners", worker) for u in admin_urls
            ]
        first = self._listeners[0]
        self.host, self.scheme = first.host, first.scheme

    @staticmethod
    def _listener(app: FastAPI, url: str, name: str, worker: Mapping[str, Any]) -> _Listener:
        tls = None
        if parse_listener(url, name)[0] == "https":
            prefix = LISTENERS_HTTPS_PREFIX if name == "listeners" else ADMIN_LISTENERS_HTTPS_PREFIX
            tls = server_tls(ssl_settings(worker, prefix))
        return _Listener(app, url, name, tls)

    @property
    def port(self) -> int:
        """The bound port of the first listener (after :meth:`start`)."""
        return self._listeners[0].port

    @property
    def url(self) -> str:
        return self._listeners[0].url

    @property
    def urls(self) -> list[str]:
        """Every listener's URL, admin listeners last."""
        return [listener.url for listener in self._listeners]

    def start(self, timeout_s: float = 10.0) -> RestServer:
        """Start serving; returns once every socket is bound (``ConnectError`` otherwise)."""
        deadline = time.monotonic() + timeout_s
        try:
            for listener in self._listeners:
                listener.start(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop accepting requests, let running ones finish, and join the threads."""
        for listener in self._listeners:
            listener.stop(timeout_s)


__all__ = ["RestServer", "parse_listener"]
