"""The driver side of lease control: a small authenticated HTTP endpoint in the worker.

One server per worker process (per :class:`~sparkcat.engine.spark_engine.SparkEngine`), one
*channel* per connector. The protocol is described in :mod:`sparkcat.runtime.tasks.control`;
the task hosts' protocol (``/v1/hosts/``), served on the same port with the same token, in
:mod:`sparkcat.runtime.tasks.host` (its driver side: :mod:`sparkcat.engine.task_hosts`).
The secret is generated per server (``secrets.token_urlsafe``) and travels to executors only
inside the lease specs; requests without it get 401.

Where it listens: ``sparkcat.control.listener`` (``host:port``) if set, else on loopback for
``local``/``local-cluster`` masters and on all interfaces for a cluster master, on an
ephemeral port. The address leases use names ``spark.driver.host`` (cluster masters; else
this host's name) or ``127.0.0.1`` (local masters); ``sparkcat.control.advertised.host``
overrides it.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from sparkcat.engine.shipping import is_local_master
from sparkcat.runtime.tasks.control import control_address
from sparkcat.runtime.tasks.host import HOSTS_PATH

log = logging.getLogger(__name__)

_PREFIX = "/v1/leases/"
_MAX_WAIT_MS = 30_000


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A lease or host whose process died (an executor lost, Spark stopped) resets its
        # connection: worth a debug line, not the traceback socketserver prints to stderr.
        if isinstance(sys.exc_info()[1], ConnectionError):
            log.debug("Control connection from %s lost", client_address, exc_info=True)
        else:
            log.exception("Control request from %s failed", client_address)


class _Channel:
    __slots__ = ("issue", "state", "version")

    def __init__(self, state: str) -> None:
        self.state = state
        self.version = 0
        self.issue = 0


class ControlServer:
    """Serves each connector query's lease-control state (see the module docs)."""

    def __init__(self, settings: Mapping[str, str]) -> None:
        master = settings.get("spark.master", "local[*]")
        # local-cluster[...] executors are JVMs on this machine too: loopback is enough.
        local = is_local_master(master) or master.startswith("local-cluster")
        listener = settings.get("sparkcat.control.listener", "")
        if listener:
            bind_host, _, port = listener.rpartition(":")
            bind = (bind_host or "0.0.0.0", int(port or 0))
        else:
            bind = ("127.0.0.1" if local else "0.0.0.0", 0)
        self._token = secrets.token_urlsafe(32)
        self._channels: dict[str, _Channel] = {}
        # One condition for channel changes and the task hosts' work (engine.task_hosts):
        # a host's long poll wakes for either.
        self.changed = threading.Condition()
        self._changed = self.changed
        self.version = 0  # of the channel table: any change to any channel raises it
        self.hosts: Any = None  # the engine's TaskHosts, once attached
        self._httpd = _Server(bind, _handler_for(self))
        self._httpd.daemon_threads = True
        port_bound = self._httpd.server_address[1]
        host = settings.get("sparkcat.control.advertised.host") or (
            "127.0.0.1"
            if local or bind[0] == "127.0.0.1"
            else settings.get("spark.driver.host") or socket.gethostname()
        )
        self.base_url = f"http://{host}:{port_bound}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="sparkcat-control", daemon=True
        )
        self._thread.start()
        log.info(
            "Lease control listens on %s:%d (leases use %s)", bind[0], port_bound, self.base_url
        )

    # -- driver API ------------------------------------------------------------------------
    def open_channel(self, state: str = "run") -> str:
        """A new channel in ``state``; returns the control address leases carry."""
        key = secrets.token_hex(8)
        with self._changed:
            self._channels[key] = _Channel(state)
            self.version += 1
            self._changed.notify_all()
        return control_address(self.base_url, key, self._token)

    def new_issue(self, address: str) -> str:
        """Start a new issue of the channel: leases of earlier issues are answered ``stale``
        from now on (long polls at once). Returns the address leases of the new issue carry.
        The worker calls this whenever the tasks it runs for the connector change."""
        key = _key_of(address)
        with self._changed:
            channel = self._channels.get(key)
            if channel is None:
                raise KeyError(f"No lease control channel {key}")
            channel.issue += 1
            channel.version += 1
            self.version += 1
            issue = channel.issue
            self._changed.notify_all()
        return control_address(self.base_url, key, self._token, issue)

    def set_state(self, address: str, state: str) -> None:
        """Tell every lease of the channel ``state``; long polls are answered at once."""
        key = _key_of(address)
        with self._changed:
            channel = self._channels.get(key)
            if channel is None or channel.state == state:
                return
            channel.state = state
            channel.version += 1
            self.version += 1
            self._changed.notify_all()

    def close_channel(self, address: str) -> None:
        """Forget the channel: leases still polling it are told it is gone (they end)."""
        with self._changed:
            self._channels.pop(_key_of(address), None)
            self.version += 1
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._channels.clear()
            self._changed.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()

    def channel_states(self) -> dict[str, dict[str, Any]]:
        """Every open channel's state and issue (call with :attr:`changed` held)."""
        return {k: {"state": c.state, "issue": c.issue} for k, c in self._channels.items()}

    @property
    def token(self) -> str:
        return self._token

    # -- request side ----------------------------------------------------------------------
    def authorized(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme == "Bearer" and hmac.compare_digest(token.encode(), self._token.encode())

    def wait_state(
        self, key: str, since: int, wait_ms: int, issue: int | None = None
    ) -> tuple[str, int] | None:
        """The channel's ``(state, version)`` once its version passes ``since`` or after
        ``wait_ms`` (state ``stale`` for a lease of an issue older than the channel's);
        ``None`` if the channel is gone."""
        deadline = time.monotonic() + min(max(wait_ms, 0), _MAX_WAIT_MS) / 1000
        with self._changed:
            while True:
                channel = self._channels.get(key)
                if channel is None:
                    return None
                remaining = deadline - time.monotonic()
                if issue is not None and issue < channel.issue:
                    return "stale", channel.version
                if channel.version > since or remaining <= 0:
                    return channel.state, channel.version
                self._changed.wait(remaining)


def _key_of(address: str) -> str:
    path = urllib.parse.urlsplit(address.partition("#")[0]).path
    return urllib.parse.unquote(path[len(_PREFIX) :])


def _handler_for(server: ControlServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per lease
        # Headers and body go out in two writes: without TCP_NODELAY the body waits for the
        # client's delayed ACK (~40 ms on Linux) on every answer.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if not url.path.startswith(HOSTS_PATH) or not url.path.endswith("/results"):
                self._reply(404, {"error": "not found"})
                return
            if not server.authorized(self.headers.get("Authorization")):
                self._reply(401, {"error": "unauthorized"})
                return
            host_id = url.path[len(HOSTS_PATH) : -len("/results")]
            try:
                items = json.loads(body)
            except ValueError:
                self._reply(400, {"error": "the body must be a JSON array"})
                return
            hosts = server.hosts
            if hosts is None or not hosts.results(host_id, items):
                self._reply(410, {"error": "gone"})
                return
            self._reply(200, {})

        def _host_poll(self, url: urllib.parse.SplitResult) -> None:
            query = urllib.parse.parse_qs(url.query)
            try:
                acked = int(query.get("acked", ["0"])[0])
                since = int(query.get("since", ["-1"])[0])
                wait_ms = min(int(query.get("wait_ms", ["0"])[0]), _MAX_WAIT_MS)
            except ValueError:
                self._reply(400, {"error": "acked, since and wait_ms must be integers"})
                return
            hosts = server.hosts
            host_id = url.path[len(HOSTS_PATH) :]
            doc = None if hosts is None else hosts.poll(host_id, acked, since, wait_ms)
            if doc is None:
                self._reply(410, {"error": "gone"})
            else:
                self._reply(200, doc)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path.startswith(HOSTS_PATH):
                if not server.authorized(self.headers.get("Authorization")):
                    self._reply(401, {"error": "unauthorized"})
                    return
                self._host_poll(url)
                return
            if not url.path.startswith(_PREFIX):
                self._reply(404, {"error": "not found"})
                return
            if not server.authorized(self.headers.get("Authorization")):
                self._reply(401, {"error": "unauthorized"})
                return
            query = urllib.parse.parse_qs(url.query)
            try:
                since = int(query.get("since", ["-1"])[0])
                wait_ms = int(query.get("wait_ms", ["0"])[0])
                issue = int(query["issue"][0]) if "issue" in query else None
            except ValueError:
                self._reply(400, {"error": "since, wait_ms and issue must be integers"})
                return
            key = urllib.parse.unquote(url.path[len(_PREFIX) :])
            found = server.wait_state(key, since, wait_ms, issue)
            if found is None:
                self._reply(410, {"error": "gone"})
            else:
                self._reply(200, {"state": found[0], "version": found[1]})

        def _reply(self, status: int, doc: dict[str, Any]) -> None:
            body = orjson.dumps(doc)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the lease ended meanwhile and closed its connection
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            return  # one line per long poll would flood the worker's log

    return Handler
