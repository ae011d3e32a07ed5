"""Task hosts: one long-running Spark task that runs many Connect tasks' leases at once.

A worker's Spark job holds a few *host* partitions (``sparkcat.task.hosts``); each runs
:func:`run_host` for as long as the worker lives. A host asks the driver for work with one
long poll (its heartbeat too), runs each lease it is given on a thread of its own
(:func:`sparkcat.runtime.tasks.lease.run_lease`, exactly as before), and sends each result back
the moment the lease ends, so the driver commits it and issues the task's next lease without
waiting for any other task. Slots therefore carry hosts, not tasks: a worker runs every task of
every connector whatever its number of Spark slots, and an idle task costs a sleeping thread.

Protocol (HTTP/1.1 on the lease-control server, same bearer token)::

    GET  /v1/hosts/<host>?acked=<seq>&since=<version>&wait_ms=<ms>
    200  {"leases": [{"seq", "id", "spec"}], "version": v, "channels": {...} | null,
          "exit": bool}      at once when there is a lease past ``acked``, a channel change past
                             ``since`` or an exit; else after ``wait_ms``
    410  the driver no longer knows this host (it was declared lost): the host ends
    POST /v1/hosts/<host>/results   [{"id", "result"}]  ->  200

``channels`` holds every control channel's state and issue; the host relays them to its
leases' channels (:class:`~sparkcat.runtime.tasks.control.ChannelRelay`), so a pause reaches a
lease one round trip after the driver sets it, with one connection per host, not per lease.
Nothing here imports pyspark: hosts are tested against a real control server without Spark.
"""

from __future__ import annotations

import http.client
import logging
import queue
import secrets
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import orjson

from sparkcat.runtime.tasks.control import ChannelRelay, install_relay, parse_address
from sparkcat.runtime.tasks.lease import (
    LeaseSpec,
    failed_result,
    result_to_json,
    run_lease,
    spec_from_json,
)

__all__ = ["HOSTS_PATH", "run_host"]

log = logging.getLogger(__name__)

HOSTS_PATH = "/v1/hosts/"
POLL_WAIT_MS = 5000
# A driver unreachable for this long is gone (the worker died): the host ends its leases.
DRIVER_GONE_S = 60.0
# After the host is told to exit, its leases get this long to end and report.
EXIT_GRACE_S = 10.0


class _Client:
    """One keep-alive connection to the driver's control server."""

    def __init__(self, base_url: str, token: str) -> None:
        host, port, _, _ = parse_address(f"{base_url}/v1/hosts/x#{token}")
        self.host, self.port = host, port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(
                self.host, self.port, timeout=POLL_WAIT_MS / 1000 + 30
            )
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            return response.status, response.read()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()


class _ResultSender:
    """Sends lease results to the driver from one thread, several per request when they
    pile up (hundreds of idle leases tend to end together)."""

    def __init__(self, base_url: str, token: str, host_id: str) -> None:
        self._client = _Client(base_url, token)
        self._path = f"{HOSTS_PATH}{host_id}/results"
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="sparkcat-host-results", daemon=True)
        self._thread.start()

    def put(self, lease_id: str, result: dict[str, Any]) -> None:
        self._queue.put({"id": lease_id, "result": result})

    def close(self, timeout_s: float) -> None:
        self._queue.put(None)
        self._thread.join(timeout_s)

    def _run(self) -> None:
        done = False
        while not done:
            items = [self._queue.get()]
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            done = items[-1] is None or None in items
            batch = [item for item in items if item is not None]
            if batch:
                self._send(batch)
        self._client.close()

    def _send(self, batch: list[dict[str, Any]]) -> None:
        deadline = time.monotonic() + DRIVER_GONE_S
        body = orjson.dumps(batch)
        while True:
            try:
                status, _ = self._client.request("POST", self._path, body)
                if status != 200:
                    log.warning(
                        "The driver refused %d lease result(s): HTTP %d", len(batch), status
                    )
                return
            except (OSError, http.client.HTTPException) as exc:
                if time.monotonic() >= deadline:
                    log.warning("Lease results lost, the driver is unreachable: %s", exc)
                    return
                time.sleep(0.2)


def _run_one(
    lease: dict[str, Any], prepare: Callable[[LeaseSpec], LeaseSpec], sender: _ResultSender
) -> None:
    started = time.monotonic()
    spec: LeaseSpec | None = None
    try:
        spec = spec_from_json(lease["spec"])
        result = run_lease(prepare(spec))
    except BaseException:  # whatever broke, the task's status must say it
        if spec is None:
            doc = lease["spec"]
            trace = traceback.format_exc()
            result_doc = {
                "connector": doc.get("connector", ""), "task": doc.get("task", 0),
                "generation": doc.get("generation", 0), "records": 0, "polled": 0,
                "source_offsets": [], "sink_offsets": [], "trace": trace, "elapsed_ms": 0,
            }  # fmt: skip
            sender.put(lease["id"], result_doc)
            return
        result = failed_result(spec, traceback.format_exc(), started)
    sender.put(lease["id"], result_to_json(result))


def run_host(
    base_url: str,
    token: str,
    index: int,
    prepare: Callable[[LeaseSpec], LeaseSpec] = lambda spec: spec,
    wait_ms: int = POLL_WAIT_MS,
) -> int:
    """Serve the driver at ``base_url`` as host ``index`` until it says exit (or is gone);
    returns the number of leases run. ``prepare`` adapts a spec to this executor (plugin
    paths; see :func:`sparkcat.engine.shipping.activate`)."""
    host_id = f"{index}-{secrets.token_hex(6)}"
    relay = ChannelRelay(base_url, token)
    install_relay(relay)
    client = _Client(base_url, token)
    sender = _ResultSender(base_url, token, host_id)
    threads: list[threading.Thread] = []
    acked, since, started = 0, -1, 0
    unreachable_since: float | None = None
    log.info("Task host %s serves %s", host_id, base_url)
    try:
        while True:
            path = f"{HOSTS_PATH}{host_id}?acked={acked}&since={since}&wait_ms={wait_ms}"
            try:
                status, body = client.request("GET", path)
            except (OSError, http.client.HTTPException) as exc:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since >= DRIVER_GONE_S:
                    log.warning("Task host %s: the driver is gone (%s); ending", host_id, exc)
                    return started
                time.sleep(0.5)
                continue
            unreachable_since = None
            if status == 410:
                log.info("Task host %s: the driver no longer knows this host; ending", host_id)
                return started
            if status != 200:
                raise RuntimeError(f"The driver answered HTTP {status}: {body[:200]!r}")
            doc = orjson.loads(body)
            if doc.get("channels") is not None:
                relay.update(doc["channels"])
                since = int(doc["version"])
            for lease in doc.get("leases", ()):
                if int(lease["seq"]) <= acked:
                    continue  # sent again because our ack was lost: already running
                acked = int(lease["seq"])
                spec = lease["spec"]
                thread = threading.Thread(
                    target=_run_one,
                    args=(lease, prepare, sender),
                    name=f"lease-{spec.get('connector')}-{spec.get('task')}",
                    daemon=True,
                )
                thread.start()
                threads.append(thread)
                started += 1
            threads = [t for t in threads if t.is_alive()]
            if doc.get("exit"):
                return started
    finally:
        relay.end_all()  # every lease still running ends as if its channel were gone
        deadline = time.monotonic() + EXIT_GRACE_S
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        sender.close(max(1.0, deadline - time.monotonic()))
        client.close()
        install_relay(None)
