"""The driver side of task hosts: one Spark job whose few long-running tasks run every lease.

Each connector's leases used to be a micro-batch of a streaming query of its own, one Spark
task slot per running task: a worker with more tasks than slots starved the rest while
reporting them RUNNING. Now the worker runs one Spark job of ``sparkcat.task.hosts``
partitions, each a *task host* (:mod:`sparkcat.runtime.tasks.host`) that runs any number of
leases on threads. This module is the dispatcher hosts talk to over the lease-control server:

* :meth:`TaskHosts.submit` queues a lease for a host: the one its task last ran on if that
  host is alive (its clients, pipeline and plugin imports are warm there), else the host
  with the fewest leases; with no host up yet it waits in a backlog.
* A host's long poll (:meth:`TaskHosts.poll`) is its heartbeat: a host silent for
  ``HOST_TIMEOUT_S``, or replaced by a new attempt of the same partition (Spark retried it
  after its executor died), is *lost*, and each of its leases is reported lost (``None``) so
  its connector issues the task again from the committed offsets.
* :meth:`TaskHosts.results` hands each result to its lease's callback (on a small thread
  pool: a callback commits offsets, which may wait on the broker), unless the lease was
  forgotten (abandoned) meanwhile.

The job is started on first use and started again if it ends while the worker runs (a host
that raised, an executor lost more often than ``spark.task.maxFailures``).
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.session import POOL
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, result_from_json, spec_to_json

log = logging.getLogger(__name__)

HOSTS_KEY = "sparkcat.task.hosts"
# A host that has not polled for this long is lost (it polls at least every 5 s).
HOST_TIMEOUT_S = 20.0
# A lease that found no host up for this long fails its task: truthful status, not RUNNING.
BACKLOG_TIMEOUT_S = 90.0

OnResult = Callable[[str, LeaseResult | None], None]


def host_count(setting: str | None, master: str, parallelism: int) -> int:
    """``sparkcat.task.hosts``, else: on a local master half its slots, at most 4 (they share
    this machine's cores; slots stay free for Spark-native connectors), else half the
    cluster's slots (hosts spread over executors)."""
    if setting:
        count = int(setting)
        if count < 1:
            raise ValueError(f"{HOSTS_KEY} must be at least 1, got {count}")
        return count
    half = max(1, parallelism // 2)
    return min(half, 4) if master.startswith("local") else half


def _host_partition(base_url: str, token: str, index: int, _rows: Iterator[Any]) -> Iterator[int]:
    """The body of one host partition, on an executor."""
    from sparkcat.engine.shipping import activate
    from sparkcat.runtime.tasks.host import run_host

    yield run_host(base_url, token, index, activate)


@dataclass(slots=True)
class _Lease:
    lease_id: str
    key: tuple[str, int]
    spec: dict[str, Any]
    on_result: OnResult
    host: str | None = None
    seq: int = 0
    queued_at: float = field(default_factory=time.monotonic)


@dataclass(slots=True)
class _Host:
    host_id: str
    index: int
    last_seen: float
    outbox: list[_Lease] = field(default_factory=list)  # sent, not yet acknowledged
    leases: set[str] = field(default_factory=set)  # every lease it holds
    next_seq: int = 0


class TaskHosts:
    """Dispatches leases to the worker's task hosts (see the module docs)."""

    def __init__(
        self, session: Any, control: ControlServer, worker_config: Mapping[str, str]
    ) -> None:
        self._session = session
        self._control = control
        self._setting = worker_config.get(HOSTS_KEY)
        self._cv = control.changed
        self._hosts: dict[str, _Host] = {}
        self._leases: dict[str, _Lease] = {}
        self._backlog: list[_Lease] = []
        self._affinity: dict[tuple[str, int], int] = {}
        self._ids = itertools.count(1)
        self._closing = threading.Event()
        self._job: threading.Thread | None = None
        self._callbacks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sparkcat-results")
        self.count = 0
        self._job_group = f"sparkcat-task-hosts-{id(self):x}"
        control.hosts = self
        threading.Thread(target=self._reap_loop, name="sparkcat-host-reaper", daemon=True).start()

    # -- connector side ----------------------------------------------------------------------
    def submit(self, spec: LeaseSpec, on_result: OnResult) -> str:
        """Queue ``spec`` for a host; ``on_result(lease_id, result or None)`` is called once
        it ends (``None``: its host was lost) unless it is forgotten first."""
        self._ensure_job()
        lease = _Lease(
            str(next(self._ids)), (spec.connector, spec.task), spec_to_json(spec), on_result
        )
        with self._cv:
            self._leases[lease.lease_id] = lease
            self._place_locked(lease)
        return lease.lease_id

    def forget(self, lease_ids: list[str]) -> None:
        """Discard these leases: a result that still arrives is dropped (abandoned leases)."""
        with self._cv:
            for lease_id in lease_ids:
                lease = self._leases.pop(lease_id, None)
                if lease is None:
                    continue
                host = self._hosts.get(lease.host or "")
                if host is not None:
                    host.leases.discard(lease_id)
                    host.outbox = [x for x in host.outbox if x.lease_id != lease_id]
                if lease in self._backlog:
                    self._backlog.remove(lease)

    def withdraw(self, lease_ids: list[str]) -> set[str]:
        """Take back the leases of ``lease_ids`` that no host has taken yet (no host is up,
        e.g. Spark is gone): they never ran, so a stopping task need not wait for them."""
        with self._cv:
            waiting = {x.lease_id for x in self._backlog} & set(lease_ids)
            if waiting:
                self._backlog = [x for x in self._backlog if x.lease_id not in waiting]
                for lease_id in waiting:
                    self._leases.pop(lease_id, None)
            return waiting

    def hosts_up(self) -> int:
        with self._cv:
            return len(self._hosts)

    def close(self, timeout_s: float = 15.0) -> None:
        """Tell every host to exit, wait for the job to end, cancel it if it does not."""
        with self._cv:
            self._closing.set()
            self._cv.notify_all()
        job = self._job
        if job is not None:
            job.join(timeout_s)
            if job.is_alive():
                try:
                    self._session.sparkContext.cancelJobGroup(self._job_group)
                except Exception:  # Spark already stopped
                    log.debug("Cancelling the task hosts' job failed", exc_info=True)
        self._callbacks.shutdown(wait=False, cancel_futures=True)

    # -- host side (control-server threads) ----------------------------------------------------
    def poll(self, host_id: str, acked: int, since: int, wait_ms: int) -> dict[str, Any] | None:
        """A host's long poll: its new leases and the channel states (see the host module)."""
        deadline = time.monotonic() + max(wait_ms, 0) / 1000
        with self._cv:
            host = self._hosts.get(host_id)
            if host is None:
                if self._closing.is_set():
                    return {"leases": [], "version": self._control.version, "channels": None,
                            "exit": True}  # fmt: skip
                host = self._register_locked(host_id)
                if host is None:
                    return None
            while True:
                if self._hosts.get(host_id) is not host:
                    return None  # declared lost meanwhile
                host.last_seen = time.monotonic()
                host.outbox = [x for x in host.outbox if x.seq > acked]
                closing = self._closing.is_set()
                changed = self._control.version > since
                remaining = deadline - time.monotonic()
                if host.outbox or changed or closing or remaining <= 0:
                    return {
                        "leases": [
                            {"seq": x.seq, "id": x.lease_id, "spec": x.spec} for x in host.outbox
                        ],
                        "version": self._control.version,
                        "channels": self._control.channel_states() if changed else None,
                        "exit": closing,
                    }
                self._cv.wait(remaining)

    def results(self, host_id: str, items: list[dict[str, Any]]) -> bool:
        """Results from a host; ``False`` if the host is unknown (lost: results dropped)."""
        ready: list[tuple[_Lease, LeaseResult]] = []
        with self._cv:
            host = self._hosts.get(host_id)
            if host is None and not self._closing.is_set():
                return False
            for item in items:
                lease = self._leases.pop(str(item["id"]), None)
                if lease is None:
                    continue  # forgotten: abandoned, or its host was declared lost
                if host is not None:
                    host.leases.discard(lease.lease_id)
                ready.append((lease, result_from_json(item["result"])))
        for lease, result in ready:
            self._callback(lease, result)
        return True

    # -- internals -----------------------------------------------------------------------------
    def _callback(self, lease: _Lease, result: LeaseResult | None) -> None:
        try:
            self._callbacks.submit(_call, lease.on_result, lease.lease_id, result)
        except RuntimeError:  # the pool is shut down: the worker stops
            pass

    def _register_locked(self, host_id: str) -> _Host | None:
        index_text, _, _ = host_id.partition("-")
        try:
            index = int(index_text)
        except ValueError:
            return None
        for other in [h for h in self._hosts.values() if h.index == index]:
            log.warning("Task host %s replaces %s (Spark ran its partition again)", host_id,
                        other.host_id)  # fmt: skip
            self._lose_locked(other)
        host = _Host(host_id, index, time.monotonic())
        self._hosts[host_id] = host
        log.info("Task host %s is up (%d of %d)", host_id, len(self._hosts), self.count)
        backlog, self._backlog = self._backlog, []
        for lease in backlog:
            self._place_locked(lease)
        return host

    def _place_locked(self, lease: _Lease) -> None:
        if not self._hosts:
            self._backlog.append(lease)
            return
        preferred = self._affinity.get(lease.key)
        host = next((h for h in self._hosts.values() if h.index == preferred), None)
        if host is None:
            host = min(self._hosts.values(), key=lambda h: (len(h.leases), h.index))
            self._affinity[lease.key] = host.index
        host.next_seq += 1
        lease.seq = host.next_seq
        lease.host = host.host_id
        host.leases.add(lease.lease_id)
        host.outbox.append(lease)
        self._cv.notify_all()

    def _lose_locked(self, host: _Host) -> None:
        del self._hosts[host.host_id]
        lost = [self._leases.pop(i) for i in sorted(host.leases) if i in self._leases]
        if lost:
            log.warning("Task host %s is lost with %d lease(s); their tasks run again",
                        host.host_id, len(lost))  # fmt: skip
        for lease in lost:
            self._callback(lease, None)
        self._cv.notify_all()

    def _lose_all(self) -> None:
        with self._cv:
            for host in list(self._hosts.values()):
                self._lose_locked(host)

    def _reap_loop(self) -> None:
        while not self._closing.wait(1.0):
            now = time.monotonic()
            with self._cv:
                for host in [h for h in self._hosts.values() if now - h.last_seen > HOST_TIMEOUT_S]:
                    log.warning("Task host %s has not polled for %.0f s", host.host_id,
                                now - host.last_seen)  # fmt: skip
                    self._lose_locked(host)
                stale = [x for x in self._backlog if now - x.queued_at > BACKLOG_TIMEOUT_S]
                for lease in stale:
                    self._backlog.remove(lease)
                    self._leases.pop(lease.lease_id, None)
            for lease in stale:
                self._callback(lease, _unscheduled(lease))

    def _ensure_job(self) -> None:
        """Start the hosts' Spark job on first use (``session=None``: hosts are run by the
        caller, as tests do with :func:`~sparkcat.runtime.tasks.host.run_host`)."""
        with self._cv:
            if self._session is None or self._job is not None or self._closing.is_set():
                return
            self._job = threading.Thread(
                target=self._run_jobs, name="sparkcat-task-hosts", daemon=True
            )
            self._job.start()

    def _run_jobs(self) -> None:
        try:
            sc = self._session.sparkContext  # waits for a session still being built
            self.count = host_count(self._setting, str(sc.master), int(sc.defaultParallelism))
        except Exception:
            log.exception("The task hosts cannot start: Spark is not available")
            return
        body = functools.partial(_host_partition, self._control.base_url, self._control.token)
        failures = 0
        while not self._closing.is_set():
            log.info("Starting %d task host(s)", self.count)
            try:
                sc.setLocalProperty("spark.scheduler.pool", POOL)
                sc.setJobGroup(self._job_group, "sparkcat task hosts", interruptOnCancel=True)
                sc.parallelize(range(self.count), self.count).mapPartitionsWithIndex(body).collect()
                failures = 0
                if not self._closing.is_set():
                    self._lose_all()  # hosts that ended on their own hold nothing any more
            except Exception as exc:
                if self._closing.is_set():
                    return
                self._lose_all()
                failures += 1
                log.warning("The task hosts' Spark job failed (%d in a row): %s", failures,
                            _first_line(exc))  # fmt: skip
            if self._closing.wait(min(2.0**failures, 30.0) if failures else 0.5):
                return
            log.warning("The task hosts ended while the worker runs; starting them again")


def _first_line(exc: BaseException) -> str:
    # A Py4J error renders itself by asking the JVM, which may be the thing that is gone.
    try:
        text = str(exc)
    except Exception:
        return f"{type(exc).__name__} (Spark's JVM does not answer)"
    return text.splitlines()[0] if text else type(exc).__name__


_shared_lock = threading.Lock()
_shared: dict[int, tuple[ControlServer, TaskHosts, list[object]]] = {}


def acquire_shared(
    session: Any, settings: Mapping[str, str], worker_config: Mapping[str, str], owner: object
) -> tuple[ControlServer, TaskHosts]:
    """The control server and task hosts of an application's ``session``, shared by every
    engine on it: several workers embedded in one application share its Spark slots, and
    one job of hosts serves them all (a job per engine would hold slots per engine). The
    first engine's ``sparkcat.task.hosts`` sets their number."""
    with _shared_lock:
        entry = _shared.get(id(session))
        if entry is None:
            control = ControlServer(settings)
            entry = (control, TaskHosts(session, control, worker_config), [])
            _shared[id(session)] = entry
        entry[2].append(owner)
        return entry[0], entry[1]


def release_shared(session: Any, owner: object) -> None:
    """``owner`` is done with ``session``'s hosts; the last one closes them."""
    with _shared_lock:
        entry = _shared.get(id(session))
        if entry is None:
            return
        entry[2].remove(owner)
        if entry[2]:
            return
        del _shared[id(session)]
    entry[1].close()
    entry[0].close()


def _unscheduled(lease: _Lease) -> LeaseResult:
    """The result of a lease no task host took: its task fails, saying why."""
    spec = lease.spec
    trace = (
        "org.apache.kafka.connect.errors.ConnectException: no task host took this task's lease "
        f"within {BACKLOG_TIMEOUT_S:.0f} s: the worker's Spark job of task hosts did not start "
        "(no executor, no free task slot, or Spark failed: see the worker log); restart the "
        "task once Spark has room"
    )
    return LeaseResult(connector=spec["connector"], task=spec["task"],
                       generation=spec["generation"], trace=trace, elapsed_ms=0)  # fmt: skip


def _call(on_result: OnResult, lease_id: str, result: LeaseResult | None) -> None:
    try:
        on_result(lease_id, result)
    except Exception:  # one connector's trouble must not stop the others' results
        log.exception("Handling the result of lease %s failed", lease_id)
