"""Kafka's ``ConnectStandalone``: the running standalone worker (``sparkcat standalone``).

Start-up order: the embedded broker when ``bootstrap.servers`` is absent or ``embedded``,
the file offset store, the Spark engine (its session builds in the background), the
standalone herder with its :class:`~sparkcat.runtime.worker.Worker`, the REST server, the
connectors given on the command line; once Spark runs the worker is ready (``GET /health``
200) and a progress line goes to stderr whenever the counts change. Shutdown, in reverse:
REST server, engine (stops queries gracefully), offset store, broker.

Exit codes of :meth:`ConnectStandalone.run`: 0 after a graceful stop (SIGINT/SIGTERM, at any
moment of start-up too); 3 when a connector could not be created or the worker failed.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.assembly.process import Process, start_embedded_broker, worker_id
from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger("sparkcat")

PROGRESS_INTERVAL_S = 5.0


@dataclass(frozen=True, slots=True)
class ConnectorRequest:
    """One connector to create at start-up (a connector file, read and checked)."""

    name: str
    config: dict[str, str | None]  # a JSON null stays None: validation rejects it as Kafka does
    initial_state: str | None = None
    initial_offsets: Any = None


class ConnectStandalone:
    """One standalone worker: its parts, started in order and stopped in reverse."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.process = Process()
        self.engine: Any = None
        self.herder: Any = None
        self.rest: Any = None

    def run(self, requests: list[ConnectorRequest]) -> int:
        """Start, create ``requests``, report progress until SIGINT/SIGTERM, stop."""
        self.process.install_signal_handlers()
        stop = self.process.stop_event
        try:
            self.start()
            if stop.is_set():
                return 0
            if not self.create(requests):
                return 3
            # Spark builds in the background while the REST API and the connectors come up;
            # the worker is ready (GET /health 200) once it runs, and exits if it cannot.
            if not self.engine.wait_ready(stop):
                return 0
            self.herder.mark_ready()  # GET /health: 503 until here
            self._report_progress()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("sparkcat worker failed: %s", exc)
            return 3
        finally:
            self.process.shutdown()

    def start(self) -> None:
        """Every part up to the REST server; each registers its stop as it starts."""
        from sparkcat.kafka.admin import cluster_id
        from sparkcat.runtime.isolation.plugins import default_registry
        from sparkcat.runtime.rest.app import create_app
        from sparkcat.runtime.rest.server import RestServer
        from sparkcat.runtime.standalone.herder import StandaloneHerder
        from sparkcat.runtime.stores.offsets import FileOffsetStore

        if self.config.uses_embedded_broker:
            servers = start_embedded_broker(self.process)
            self.config = self.config.with_bootstrap_servers(servers)
        offsets = FileOffsetStore(self.config.get_string("offset.storage.file.filename"))
        self.process.on_shutdown("offset store", offsets.flush, offsets.close)
        self.engine = _spark_engine(self.config, offsets)
        self.process.on_shutdown("engine", self.engine.close)
        registry = default_registry(self.config.plugin_path())
        self.herder = StandaloneHerder(self.config, self.engine, offsets, registry, "")
        self.herder.kafka_cluster_id = cluster_id(self.config.strings())
        self.rest = RestServer(
            create_app(self.herder), self.config.get_list("listeners"), self.config.originals()
        ).start()
        self.process.on_shutdown("REST server", self.rest.stop)
        self.herder.worker_id = worker_id(self.config, self.rest.port)
        log.info("REST server listening at %s", self.rest.url)

    def create(self, requests: list[ConnectorRequest]) -> bool:
        """Create the command line's connectors; ``False`` if any could not be created."""
        ok = True
        for request in requests:
            try:
                self.herder.create_connector(
                    request.name, request.config, request.initial_state, request.initial_offsets
                )
                log.info("Created connector %s", request.name)
            except ConnectError as exc:
                log.error("Failed to create connector %s: %s", request.name, exc)
                ok = False
        return ok

    def _report_progress(self) -> None:
        last = ""
        while not self.process.stop_event.wait(PROGRESS_INTERVAL_S):
            line = progress_line(self.herder)
            if line and line != last:
                print(f"[sparkcat] {line}", file=sys.stderr, flush=True)
                last = line


def _spark_engine(config: WorkerConfig, offsets: Any, session: Any = None) -> Any:
    from sparkcat.engine import SparkEngine  # lazily: it imports pyspark

    return SparkEngine(config.strings(), offsets, session=session)


def progress_line(herder: Any) -> str:
    """``name: 12,345 records copied (RUNNING) | ...`` for every connector."""
    counts = herder.records_copied()
    parts = []
    for name in herder.connectors():
        status = herder.status.get(name)
        state = status.state.value if status is not None else "UNASSIGNED"
        parts.append(f"{name}: {counts.get(name, 0):,} records copied ({state})")
    return " | ".join(parts)


__all__ = ["ConnectStandalone", "ConnectorRequest", "progress_line"]
