"""Lease control over the network: how a running lease learns that it must end now.

The worker's main process (the Spark driver) serves one small HTTP endpoint
(:mod:`sparkcat.engine.control_server`); every lease carries the address of its connector's
*control channel* in :attr:`~sparkcat.runtime.tasks.lease.LeaseSpec.control`, as
``http://host:port/v1/leases/<key>#<token>``. The fragment is the worker's secret: it is
never sent in the request line, only as ``Authorization: Bearer <token>``.

Protocol (one resource per connector query, HTTP/1.1 keep-alive)::

    GET /v1/leases/<key>?since=<version>&wait_ms=<ms>[&issue=<i>]
    200 {"state": "run" | "pause" | "stop" | "stale", "version": n}
                            at once if n > since, else when it changes or wait_ms ends
    401 bad or missing token;   410 the channel is gone (its query stopped): end the lease

``issue`` is the *issue* of the lease: the worker starts a new issue of a channel whenever the
set or the configs of the tasks it runs for that connector change (a task moved away, a new
generation). A lease of an older issue is answered ``stale``: it belongs to an assignment this
worker no longer has, typically a Spark task *retry* of a lease issued before its task moved
to another worker while this worker still runs other tasks of the connector. It must end
without writing anything (an exactly-once lease must not even initialise its transactional
producer, which would fence the new owner's). Leases carry their issue in their address
(``.../v1/leases/<key>?issue=<i>#<token>``).

The lease side is a long poll on one background thread per lease, so the lease loop's
:meth:`ControlChannel.stop_requested` only reads a flag (no syscall on the data path) and a
``pause`` or ``stop`` reaches the lease one network round trip after the driver sets it. Nothing
here depends on a shared file system: executors on other hosts only need to reach the driver.

Inside a task host (:mod:`sparkcat.runtime.tasks.host`), which runs hundreds of leases at once,
the host's own long poll already brings every channel's state: the host installs a
:class:`ChannelRelay` and the channels of its leases read the relay instead of polling the
driver one connection per lease.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import urllib.parse
import weakref
from collections.abc import Mapping
from typing import Any

__all__ = [
    "STOP_STATES",
    "ChannelRelay",
    "ControlChannel",
    "address_issue",
    "control_address",
    "install_relay",
    "parse_address",
]

log = logging.getLogger(__name__)

STOP_STATES = frozenset({"pause", "stop", "stale"})
# A long poll is answered after this long without a change; short enough that a lease's
# poller thread outlives its lease by little, long enough to cost ~nothing when idle.
WAIT_MS = 2000
_RETRY_S = 0.2


def control_address(base_url: str, key: str, token: str, issue: int | None = None) -> str:
    """The address a lease carries: ``<base_url>/v1/leases/<key>[?issue=<i>]#<token>``."""
    query = "" if issue is None else f"?issue={issue}"
    return f"{base_url.rstrip('/')}/v1/leases/{urllib.parse.quote(key, safe='')}{query}#{token}"


def address_issue(address: str) -> int | None:
    """The issue an address names (``None``: an address without one, never stale)."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(address.partition("#")[0]).query)
    values = query.get("issue")
    return int(values[0]) if values else None


def parse_address(address: str) -> tuple[str, int, str, str]:
    """``(host, port, path, token)`` of a control address (``ValueError`` if malformed)."""
    url, _, token = address.partition("#")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or not parts.path or not token:
        raise ValueError(f"Not a lease control address: {url!r}")
    return parts.hostname, parts.port or 80, parts.path, token


class _Poller:
    """The long-polling loop, kept apart from :class:`ControlChannel` so that the channel
    can be garbage collected (which ends the loop) while the thread still runs."""

    def __init__(self, address: str) -> None:
        self.host, self.port, self.path, token = parse_address(address)
        self.headers = {"Authorization": f"Bearer {token}"}
        issue = address_issue(address)
        self.issue_query = "" if issue is None else f"&issue={issue}"
        self.state = ""  # the last state the channel answered
        self.stop_flag = threading.Event()  # the lease must end
        self.first_answer = threading.Event()
        self.closed = threading.Event()
        self.version = -1
        self.conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        self.closed.set()
        conn = self.conn
        if conn is not None and conn.sock is not None:
            try:  # wakes the thread out of its blocking read at once
                conn.sock.shutdown(2)
            except OSError:
                pass

    def run(self) -> None:
        try:
            while not self.closed.is_set():
                try:
                    if self._poll_once():
                        return
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    if self.closed.is_set():
                        return
                    log.debug("Lease control %s:%s unreachable: %s", self.host, self.port, exc)
                    self._drop_connection()
                    self.closed.wait(_RETRY_S)
        finally:
            self._drop_connection()

    def _poll_once(self) -> bool:
        """One request; ``True`` when polling is over (the lease must end)."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(
                self.host, self.port, timeout=WAIT_MS / 1000 + 10
            )
        query = f"?since={self.version}&wait_ms={WAIT_MS}{self.issue_query}"
        self.conn.request("GET", self.path + query, headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        if response.status == 410:
            self._end("gone")
            return True
        if response.status != 200:
            raise ValueError(f"lease control answered {response.status}: {body[:200]!r}")
        doc = json.loads(body)
        self.version = int(doc["version"])
        self.state = str(doc["state"])
        self.first_answer.set()
        if doc["state"] in STOP_STATES:
            self._end(doc["state"])
            return True
        return False

    def _end(self, why: str) -> None:
        log.debug("Lease control %s says %s", self.path, why)
        self.state = why
        self.stop_flag.set()
        self.first_answer.set()

    def _drop_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()


class _Relayed:
    """A lease's channel as a task host relays it: the same flags as :class:`_Poller`."""

    __slots__ = ("__weakref__", "first_answer", "issue", "key", "state", "stop_flag")

    def __init__(self, key: str, issue: int | None) -> None:
        self.key = key
        self.issue = issue
        self.state = ""
        self.stop_flag = threading.Event()
        self.first_answer = threading.Event()

    def apply(self, channel: Mapping[str, Any] | None) -> None:
        """Take the channel's state from the host's last answer (``None``: it is gone)."""
        if self.stop_flag.is_set():
            return
        if channel is None:
            state = "gone"
        elif self.issue is not None and self.issue < int(channel["issue"]):
            state = "stale"
        else:
            state = str(channel["state"])
        self.state = state
        if state in STOP_STATES or state == "gone":
            self.stop_flag.set()
        self.first_answer.set()

    def close(self) -> None:
        return None


class ChannelRelay:
    """Channel states a task host learns from its own long poll, for its leases' channels.

    ``update`` takes the driver's ``{key: {"state", "issue"}}`` of every open channel; a
    channel missing from it is gone.
    """

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._lock = threading.Lock()
        self._channels: dict[str, Mapping[str, Any]] | None = None
        self._watchers: weakref.WeakSet[_Relayed] = weakref.WeakSet()

    def serves(self, address: str) -> bool:
        url, _, token = address.partition("#")
        return token == self.token and url.startswith(self.base_url + "/")

    def attach(self, address: str) -> _Relayed | None:
        """A relayed view of the channel, or ``None`` if the host has not heard of it: a
        host starts a lease only after the answer that brought it, which holds every channel
        open when it was made, so an unknown channel is one opened later than the host's
        last answer (the caller then polls it itself) or one already closed (the poll says
        so at once)."""
        key = _channel_key(address)
        with self._lock:
            channels = self._channels
            if channels is None or key not in channels:
                return None
            watcher = _Relayed(key, address_issue(address))
            self._watchers.add(watcher)
        watcher.apply(channels[key])
        return watcher

    def knows(self, address: str) -> bool:
        with self._lock:
            return self._channels is not None and _channel_key(address) in self._channels

    def update(self, channels: Mapping[str, Mapping[str, Any]]) -> None:
        with self._lock:
            self._channels = dict(channels)
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.apply(channels.get(watcher.key))

    def end_all(self) -> None:
        """The host stops: every lease it runs must end (as if each channel were gone)."""
        self.update({})


def _channel_key(address: str) -> str:
    path = urllib.parse.urlsplit(address.partition("#")[0]).path
    return urllib.parse.unquote(path.rsplit("/", 1)[-1])


_relay: ChannelRelay | None = None


def install_relay(relay: ChannelRelay | None) -> None:
    """Make this process's channels read ``relay`` (a task host does; ``None`` undoes it)."""
    global _relay
    _relay = relay


class ControlChannel:
    """A lease's view of its control channel; ``address=None`` means "never told to stop".

    Starting one starts its poller thread; the thread ends when the lease says it must
    (``pause``/``stop``/gone), when :meth:`close` is called, or when the channel is
    garbage collected.
    """

    __slots__ = ("__weakref__", "_poller")

    def __init__(self, address: str | None) -> None:
        self._poller: _Poller | _Relayed | None = None
        if address is None:
            return
        relay = _relay
        if relay is not None and relay.serves(address):
            self._poller = relay.attach(address)
            if self._poller is not None:
                return
        poller = _Poller(address)
        self._poller = poller
        weakref.finalize(self, poller.close)
        threading.Thread(target=poller.run, name="sparkcat-lease-control", daemon=True).start()

    def stop_requested(self, now: float = 0.0) -> bool:
        """Whether the driver asked this lease to end (a flag read: cheap on the data path)."""
        return self._poller is not None and self._poller.stop_flag.is_set()

    def state(self) -> str:
        """The last state the channel answered (``""`` before the first answer; ``"gone"``
        once the channel was closed)."""
        return "run" if self._poller is None else self._poller.state

    def wait_first_answer(self, timeout_s: float) -> bool:
        """Wait until the channel's state is known (tests and start-up use this)."""
        return self._poller is None or self._poller.first_answer.wait(timeout_s)

    def close(self) -> None:
        if self._poller is not None:
            self._poller.close()
