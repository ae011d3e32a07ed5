"""SparkEngine: the shipped :class:`~sparkcat.runtime.engine_api.Engine`.

One SparkSession per worker. Connectors' tasks run as leases on the worker's task hosts, a few
long-running Spark tasks of one job (:mod:`sparkcat.engine.task_hosts`), each connector
steered by a :class:`~sparkcat.engine.connector_query.ConnectorQuery`; Spark-native connectors
run as streaming queries of their own. The engine is driven by the herder from its threads and
by lease results; a ticker thread issues leases that are due without a result to trigger them
(a restarted task, a sink whose topic appeared).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyspark.sql import SparkSession

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.engine.connector_query import ConnectorQuery
from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.native_config import NATIVE_KEY
from sparkcat.engine.native_sink import NativeSinkQuery
from sparkcat.engine.native_source import NativeSourceQuery
from sparkcat.engine.session import build_session, spark_settings
from sparkcat.engine.shipping import Shipment
from sparkcat.engine.task_hosts import TaskHosts, acquire_shared, release_shared
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener
from sparkcat.runtime.stores.offsets import OffsetStore

log = logging.getLogger(__name__)

# How long starting a connector waits for its query's source to come up before the next one
# starts (see ConnectorQuery.wait_started); a slower start is not an error.
QUERY_START_WAIT_S = 30.0
# How often the ticker looks at the connectors; each decides whether a lease is due (about
# once a second, more often for a sink waiting for its topic: see ConnectorQuery.tick).
TICK_S = 0.2


def _handle_class(plan: ConnectorPlan) -> type[Any]:
    """Spark-native connectors (their task configs carry ``sparkcat.native``) run through
    Spark's own readers and writers; every other connector as leases of its tasks."""
    native = plan.task_configs[0].get(NATIVE_KEY) if plan.task_configs else None
    if native == "sink":
        return NativeSinkQuery
    if native == "source":
        return NativeSourceQuery
    return ConnectorQuery


class _SessionHandle:
    """The worker's SparkSession, built in the background.

    A cold SparkSession takes 6-10 s to build; the worker's REST API, herder and connector
    validation need none of it, so the engine hands out this handle at once and only what
    touches Spark (starting a query, on the starter thread) waits for the session.
    """

    def __init__(self, worker_config: Mapping[str, str], shipment: Shipment) -> None:
        self._shipment = shipment
        self._ready = threading.Event()
        self._session: SparkSession | None = None
        self._error: BaseException | None = None
        threading.Thread(
            target=self._build, args=(dict(worker_config),), name="sparkcat-session", daemon=True
        ).start()

    def _build(self, worker_config: dict[str, str]) -> None:
        try:
            session = build_session(worker_config)
            self._shipment.attach(session.sparkContext)
            self._session = session
        except BaseException as exc:  # surfaced to whoever needs the session
            self._error = exc
        finally:
            self._ready.set()

    def wait(self, timeout_s: float) -> bool:
        """Whether the build has ended (ready or failed) within ``timeout_s``."""
        return self._ready.wait(timeout_s)

    def get(self) -> SparkSession:
        self._ready.wait()
        if self._session is None:
            raise ConnectError(f"Spark could not start: {self._error}") from self._error
        return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


class SparkEngine:
    """Runs connectors on the worker's SparkSession: as leases on its task hosts, or as
    Spark-native streaming queries."""

    def __init__(
        self,
        worker_config: Mapping[str, str],
        offset_store: OffsetStore,
        session: SparkSession | None = None,
    ) -> None:
        self._offsets = offset_store
        self._own_session = session is None
        settings = spark_settings(worker_config)
        if session is not None:
            settings["spark.master"] = str(session.sparkContext.master)
        # With a cluster master, sparkcat and the plugin environments go to executors.
        self._shipment = Shipment(worker_config, settings["spark.master"])
        self._worker = {**worker_config, **self._shipment.lease_config()}
        if session is None:
            self.session: Any = _SessionHandle(worker_config, self._shipment)
        else:
            self.session = session
            self._shipment.attach(session.sparkContext)
        self._queries: dict[str, Any] = {}  # ConnectorQuery or a native connector's handle
        # Leases may run on other hosts: their work, results and early ends go over the network.
        if self._own_session:
            self._control = ControlServer(settings)
            self._hosts = TaskHosts(self.session, self._control, self._worker)
        else:  # an application's session: its engines share one job of hosts
            self._control, self._hosts = acquire_shared(session, settings, self._worker, self)
        self._lock = threading.RLock()
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparkcat-start")
        self._closed = threading.Event()
        # task.shutdown.graceful.timeout.ms bounds how long a stop waits for in-flight leases.
        grace_ms = int(self._worker.get("task.shutdown.graceful.timeout.ms", "5000"))
        # A lease still running after that is abandoned (killed): the whole stop then stays
        # within task.shutdown.graceful.timeout.ms + 5 s, as Kafka's bound for a stuck task.
        self._stop_timeout_s: float = max(grace_ms / 1000.0, 1.0) + 2.0
        self._ticker = threading.Thread(target=self._tick_loop, name="sparkcat-ticker", daemon=True)
        self._ticker.start()

    def wait_ready(self, stop: threading.Event | None = None) -> bool:
        """Block until Spark is up (``True``) or ``stop`` is set first (``False``: a worker
        told to stop while Spark starts need not wait for it); raises ConnectError if Spark
        could not start."""
        if not isinstance(self.session, _SessionHandle):
            return True
        while stop is not None and not self.session.wait(0.1):
            if stop.is_set():
                return False
        self.session.get()
        return True

    def start_connector(self, plan: ConnectorPlan, listener: EngineListener) -> None:
        """Returns at once; the query starts on the starter thread (see :meth:`_start`)."""
        with self._lock:
            current: Any = self._queries.get(plan.name)
            handle = _handle_class(plan)
            if (
                current is not None
                and current.failure is None
                and current.kind == plan.kind
                and isinstance(current, handle)
            ):
                current.replace_plan(plan, self._stop_timeout_s)
                return
            if current is not None:
                current.stop(self._stop_timeout_s)
            query: Any
            if handle is ConnectorQuery:
                query = ConnectorQuery(
                    self._hosts, plan, listener, self._worker, self._offsets, self._control
                )
            elif handle is NativeSinkQuery:
                query = NativeSinkQuery(self.session, plan, listener, self._worker)
            else:
                query = NativeSourceQuery(self.session, plan, listener, self._worker, self._offsets)
            self._queries[plan.name] = query
        self._starter.submit(self._start, query, listener, len(plan.task_ids()))

    def _start(self, query: Any, listener: EngineListener, tasks: int) -> None:
        """Start queries one at a time: Spark gives a starting Python process 10 s to connect
        back, which several starting at once on a busy machine miss (the query then dies)."""
        try:
            query.start()
            query.wait_started(QUERY_START_WAIT_S)
        except Exception as exc:  # the connector's trace; the worker carries on
            if self._closed.is_set():  # Spark stopped under a start the worker's stop overtook
                log.debug("The query of %s did not start: the worker stops", query.name,
                          exc_info=True)  # fmt: skip
                return
            log.exception("Starting the query of connector %s failed", query.name)
            listener.on_connector_failed(query.name, f"Starting the query failed: {exc}")
            return
        log.info("Connector %s runs (%d task(s))", query.name, tasks)

    def pause_connector(self, name: str) -> None:
        self._get(name).pause()

    def resume_connector(self, name: str) -> None:
        query = self._get(name)
        if isinstance(query, ConnectorQuery):
            query.resume(self._stop_timeout_s)
        else:
            query.resume()

    def restart_task(self, name: str, task: int) -> None:
        self.restart_tasks(name, [task])

    def restart_tasks(self, name: str, tasks: list[int]) -> None:
        """Restart several tasks of one connector at once: one lease boundary for all."""
        query = self._get(name)
        if isinstance(query, ConnectorQuery):
            query.restart_tasks(tasks, self._stop_timeout_s)
            return
        for task in tasks:
            query.restart_task(task)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            query = self._queries.pop(name, None)
        if query is not None:
            query.stop(self._stop_timeout_s)

    def close(self) -> None:
        """Stop every connector at once (each waits for its own lease), then Spark."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._starter.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            queries = list(self._queries.values())
            self._queries.clear()
        if queries:
            with ThreadPoolExecutor(max_workers=len(queries)) as pool:
                list(pool.map(lambda q: q.stop(self._stop_timeout_s), queries))
        if self._own_session:
            self._hosts.close()
            self._control.close()
        else:
            release_shared(self.session, self)
        if self._own_session:
            try:
                self.session.stop()
            except ConnectError:
                pass  # Spark never started: nothing to stop
            except Exception as exc:  # py4j's errors: the JVM is gone
                # A SIGTERM to the whole process group (systemd's default) ends Spark's JVM
                # before this: one line, not a traceback.
                log.warning("Spark's JVM had already ended (%s)", type(exc).__name__)
        self._shipment.close()

    def _get(self, name: str) -> Any:
        with self._lock:
            query = self._queries.get(name)
        if query is None:
            raise NotFoundError(f"Connector {name} is not running")
        return query

    def _tick_loop(self) -> None:
        while not self._closed.wait(TICK_S):
            with self._lock:
                queries = list(self._queries.values())
            for query in queries:
                try:
                    query.tick()
                except Exception:  # one connector's trouble must not stop the rest
                    log.exception("Issuing a lease for %s failed", query.name)
