"""The composition root: ``sparkcat standalone WORKER.properties [CONNECTOR ...]``
(``sparkcat distributed WORKER.properties`` is :mod:`sparkcat.cli_distributed`).

Also installed as ``connect-standalone`` (Kafka's script name, same arguments) and answers
``sparkcat --version``. Connector files are Java ``.properties`` (with ``name``), a flat JSON
object of strings (with ``name``), or a JSON create request
``{"name", "config", "initial_state", "initial_offsets"}`` whose ``config.name``, if given,
must match ``name``.

Exit codes: 0 after a graceful shutdown (SIGINT/SIGTERM); 2 for a usage error or an
unreadable/invalid worker or connector file — one line ``sparkcat: <reason>`` on stderr and
nothing started (connector configs are validated before the broker and Spark start); 3 when
a connector fails to be created after start-up (Kafka's code). Kafka uses exit code 1 for
usage errors; 2 is the Unix convention for bad arguments.

Start-up order: logging, ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON`` (this interpreter
unless set), the embedded broker when ``bootstrap.servers`` is absent or ``embedded``, the
file offset store, the Spark engine, the herder, the REST server, the connectors, then a
progress line on stderr whenever the counts change. Shutdown: REST server, engine (stops
queries gracefully), offset store, broker.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sparkcat
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.cli_support import setup_logging as _setup_logging
from sparkcat.kafka import admin as kafka_admin
from sparkcat.kafka.properties import load_properties
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    ensure_valid,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger("sparkcat")
USAGE = "usage: sparkcat standalone WORKER.properties [CONNECTOR.properties|CONNECTOR.json ...]"
PROGRESS_INTERVAL_S = 5.0


class UsageError(Exception):
    """A bad command line or an unreadable/invalid file: exit code 2, one line on stderr."""


@dataclass(frozen=True, slots=True)
class ConnectorRequest:
    """One connector file, read and checked."""

    name: str
    config: dict[str, str | None]  # a JSON null stays None: validation rejects it as Kafka does
    initial_state: str | None = None
    initial_offsets: Any = None


def read_connector_file(path: str) -> ConnectorRequest:
    """Parse a connector file (``.properties`` or JSON); ``UsageError`` if it is unusable."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read connector config {path}: {exc.strerror or exc}") from exc
    if path.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"invalid JSON in connector config {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise UsageError(f"connector config {path} must be a JSON object")
        return _request_from_json(path, data)
    try:
        from sparkcat.kafka.properties import parse_properties

        props = parse_properties(text)
    except ConfigError as exc:
        raise UsageError(f"invalid connector config {path}: {exc}") from exc
    return _request(path, props.get("name"), props)


def _request_from_json(path: str, data: dict[str, Any]) -> ConnectorRequest:
    if isinstance(data.get("config"), dict):
        config = {k: _string(v) for k, v in data["config"].items()}
        request = _request(path, data.get("name"), config)
        return ConnectorRequest(
            request.name, request.config, data.get("initial_state"), data.get("initial_offsets")
        )
    return _request(path, data.get("name"), {k: _string(v) for k, v in data.items()})


def _string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _request(path: str, name: Any, config: Mapping[str, str | None]) -> ConnectorRequest:
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"connector config {path} has no 'name'")
    try:
        config = check_connector_name(name.strip(), config)
    except ConnectError as exc:
        raise UsageError(f"invalid connector config {path}: {exc}") from exc
    return ConnectorRequest(name.strip(), config)


def load_worker_config(path: str) -> WorkerConfig:
    try:
        props = load_properties(path)
    except OSError as exc:
        raise UsageError(f"cannot read worker config {path}: {exc.strerror or exc}") from exc
    except ConfigError as exc:
        raise UsageError(f"invalid worker config {path}: {exc}") from exc
    try:
        return WorkerConfig(props)
    except ConfigError as exc:
        raise UsageError(f"invalid worker config {path}: {exc}") from exc


def prevalidate(worker: WorkerConfig, requests: list[tuple[str, ConnectorRequest]]) -> None:
    """Validate every connector config before anything starts (``UsageError`` if invalid)."""
    registry = default_registry(worker.plugin_path())
    seen: set[str] = set()
    for path, request in requests:
        if request.name in seen:
            raise UsageError(f"connector config {path}: connector {request.name} is defined twice")
        seen.add(request.name)
        try:
            ensure_valid(validate_connector_config(request.config, registry, worker))
        except ConnectError as exc:
            # Kafka's text: a header line ending in ':', one line per error, a pointer to the
            # validate endpoint (dropped: the command line has no endpoint to point at).
            header, *errors = str(exc).splitlines()[:-1] or [str(exc)]
            reason = " ".join([header, "; ".join(errors)]) if errors else header
            raise UsageError(f"invalid connector config {path}: {reason}") from exc


def parse_standalone_args(args: Sequence[str]) -> tuple[WorkerConfig, list[ConnectorRequest]]:
    if not args or args[0].startswith("-"):
        raise UsageError(USAGE)
    worker = load_worker_config(args[0])
    requests = [(path, read_connector_file(path)) for path in args[1:]]
    prevalidate(worker, requests)
    return worker, [request for _, request in requests]


def main(argv: Sequence[str] | None = None) -> int:
    """``sparkcat standalone ...`` / ``sparkcat --version``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"sparkcat {sparkcat.__version__}")
        return 0
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if args[:1] in (["connectors"], ["plugins"]):
        from sparkcat.cli_manage import manage_main

        return manage_main(args)
    if args[:1] == ["jvm-archive"]:
        from sparkcat.cli_jvm_archive import jvm_archive_main

        return jvm_archive_main(args[1:])
    if args[:1] == ["mirror-maker"]:
        from sparkcat.mirror_maker import run_mirror_maker

        return run_mirror_maker(args[1:])
    if args[:1] == ["distributed"]:
        from sparkcat.cli_distributed import run_distributed

        return run_distributed(args[1:])
    if not args or args[0] != "standalone":
        command = f"unknown command '{args[0]}'; " if args else ""
        print(f"sparkcat: {command}{USAGE}", file=sys.stderr)
        return 2
    return run_standalone(args[1:])


def standalone_main(argv: Sequence[str] | None = None) -> int:
    """``connect-standalone WORKER.properties [CONNECTOR ...]``."""
    return run_standalone(list(sys.argv[1:] if argv is None else argv))


def run_standalone(args: Sequence[str]) -> int:
    try:
        worker, requests = parse_standalone_args(args)
    except UsageError as exc:
        print(f"sparkcat: {exc}", file=sys.stderr)
        return 2
    _setup_logging()
    for variable in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ.setdefault(variable, sys.executable)
    return _Worker(worker).run(requests)


class _Worker:
    """The running standalone worker: what was started, to be stopped in reverse order."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.broker: Any = None
        self.offsets: Any = None
        self.engine: Any = None
        self.rest: Any = None
        self.herder: Any = None
        self.stop_event = threading.Event()

    def run(self, requests: list[ConnectorRequest]) -> int:
        # First: a SIGINT/SIGTERM at any moment of the start-up stops the worker as gracefully
        # as one while it runs (exit 0), instead of killing it halfway through.
        self._install_signal_handlers()
        try:
            self._start()
            if self.stop_event.is_set():
                return 0
            failed = self._create(requests)
            if failed:
                return 3
            # Spark builds in the background while the REST API and the connectors come up;
            # the worker is ready (GET /health 200) once it runs, and exits if it cannot.
            if not self.engine.wait_ready(self.stop_event):
                return 0
            self.herder.mark_ready()  # GET /health: 503 until here
            self._report_progress()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("sparkcat worker failed: %s", exc)
            return 3
        finally:
            self._shutdown()

    def _start(self) -> None:
        if self.config.uses_embedded_broker:
            from sparkcat.kafka.broker import EmbeddedBroker

            self.broker = EmbeddedBroker().start()
            log.info("Started the embedded Kafka broker at %s", self.broker.bootstrap_servers)
            self.config = self.config.with_bootstrap_servers(self.broker.bootstrap_servers)
        from sparkcat.runtime.stores.offsets import FileOffsetStore

        self.offsets = FileOffsetStore(self.config.get_string("offset.storage.file.filename"))
        from sparkcat.engine import SparkEngine  # lazily: it imports pyspark

        self.engine = SparkEngine(self.config.strings(), self.offsets)
        from sparkcat.runtime.rest.app import create_app
        from sparkcat.runtime.rest.server import RestServer
        from sparkcat.runtime.standalone.herder import StandaloneHerder

        registry = default_registry(self.config.plugin_path())
        self.herder = StandaloneHerder(self.config, self.engine, self.offsets, registry, "")
        self.herder.kafka_cluster_id = kafka_admin.cluster_id(self.config.strings())
        self.rest = RestServer(
            create_app(self.herder), self.config.get_list("listeners"), self.config.originals()
        ).start()
        self.herder.worker_id = _worker_id(self.config, self.rest.port)
        log.info("REST server listening at %s", self.rest.url)

    def _create(self, requests: list[ConnectorRequest]) -> bool:
        failed = False
        for request in requests:
            try:
                self.herder.create_connector(
                    request.name, request.config, request.initial_state, request.initial_offsets
                )
                log.info("Created connector %s", request.name)
            except ConnectError as exc:
                log.error("Failed to create connector %s: %s", request.name, exc)
                failed = True
        return failed

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())

    def _report_progress(self) -> None:
        last = ""
        while not self.stop_event.wait(PROGRESS_INTERVAL_S):
            line = progress_line(self.herder)
            if line and line != last:
                print(f"[sparkcat] {line}", file=sys.stderr, flush=True)
                last = line

    def _shutdown(self) -> None:
        log.info("sparkcat is shutting down")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("REST server", lambda: self.rest and self.rest.stop()),
            ("engine", lambda: self.engine and self.engine.close()),
            ("offset store", lambda: self.offsets and (self.offsets.flush(), self.offsets.close())),
            ("embedded broker", lambda: self.broker and self.broker.stop()),
        ]
        for what, step in steps:
            try:
                step()
            except Exception:
                log.exception("Could not stop the %s cleanly", what)


def progress_line(herder: Any) -> str:
    """``name: 12,345 records copied (RUNNING) | ...`` for every connector."""
    counts = herder.records_copied()
    parts = []
    for name in herder.connectors():
        status = herder.status.get(name)
        state = status.state.value if status is not None else "UNASSIGNED"
        parts.append(f"{name}: {counts.get(name, 0):,} records copied ({state})")
    return " | ".join(parts)


def _worker_id(config: WorkerConfig, port: int) -> str:
    """Kafka's worker id: the advertised REST ``host:port``."""
    host = config.get("rest.advertised.host.name") or socket.gethostname()
    advertised_port = config.get("rest.advertised.port") or port
    return f"{host}:{advertised_port}"


if __name__ == "__main__":
    sys.exit(main())
