"""``sparkcat distributed WORKER.properties`` (also ``connect-distributed``): one worker of a
cluster (docs/distributed.md).

Exit codes: 0 after a graceful shutdown (SIGINT/SIGTERM: this worker's work stops, its
statuses become UNASSIGNED, it leaves the group and the others take its share); 2 for a
usage error, an unreadable or invalid worker file, or internal topics Kafka would refuse
(e.g. a config topic with more than one partition) — one line ``sparkcat: <reason>`` on
stderr and nothing left running; 3 when the worker fails later.

Start-up order: the three internal topics (created when missing, read to the end), the
Spark engine (it builds in the background), the REST server, then the group membership.
``bootstrap.servers`` must name a real cluster: ``embedded`` would give every worker its own
broker.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sparkcat.api.errors import ConfigError, ConnectError

log = logging.getLogger("sparkcat")
USAGE = "usage: sparkcat distributed WORKER.properties"


def distributed_main(argv: Sequence[str] | None = None) -> int:
    """``connect-distributed WORKER.properties``."""
    return run_distributed(list(sys.argv[1:] if argv is None else argv))


def _fail(message: str) -> int:
    print(f"sparkcat: {message}", file=sys.stderr, flush=True)
    return 2


def run_distributed(args: Sequence[str]) -> int:
    if len(args) != 1 or args[0].startswith("-"):
        return _fail(USAGE)
    from sparkcat.runtime.distributed.config import DistributedConfig
    from sparkcat.runtime.properties import load_properties

    path = args[0]
    try:
        config = DistributedConfig(load_properties(path))
    except OSError as exc:
        return _fail(f"cannot read worker config {path}: {exc.strerror or exc}")
    except ConfigError as exc:
        return _fail(f"invalid worker config {path}: {exc}")
    if config.uses_embedded_broker:
        return _fail(
            f"invalid worker config {path}: bootstrap.servers must name the Kafka cluster the "
            "workers share (embedded gives each worker its own broker)"
        )
    from sparkcat.cli_support import setup_logging

    setup_logging()
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python: group membership only
    for variable in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ.setdefault(variable, sys.executable)
    return _DistributedWorker(config).run()


class _DistributedWorker:
    """What was started, to be stopped in reverse order."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.offsets: Any = None
        self.statuses: Any = None
        self.configs: Any = None
        self.engine: Any = None
        self.rest: Any = None
        self.herder: Any = None
        self.stop_event = threading.Event()

    def run(self) -> int:
        try:
            self._start_stores()
        except ConfigError as exc:
            self._shutdown()
            return _fail(str(exc))  # the last line, after the shutdown's log lines
        try:
            self._start_worker()
            self._install_signal_handlers()
            self.engine.wait_ready()
            self.stop_event.wait()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("sparkcat worker failed: %s", exc)
            return 3
        finally:
            self._shutdown()

    def _start_stores(self) -> None:
        from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
        from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
        from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

        worker = self.config.strings()
        self.configs = KafkaConfigBackingStore(worker)
        self.configs.start()
        self.offsets = KafkaOffsetBackingStore(worker)
        self.offsets.start()
        self.statuses = KafkaStatusBackingStore(worker)
        self.statuses.start()

    def _start_worker(self) -> None:
        from sparkcat.cli_support import cluster_id
        from sparkcat.engine import SparkEngine  # lazily: it imports pyspark
        from sparkcat.runtime.distributed.forwarding import install
        from sparkcat.runtime.distributed.herder import DistributedHerder
        from sparkcat.runtime.isolation.plugins import default_registry
        from sparkcat.runtime.rest.app import create_app
        from sparkcat.runtime.rest.server import RestServer

        self.engine = SparkEngine(self.config.strings(), self.offsets)
        registry = default_registry(self.config.plugin_path())
        self.herder = DistributedHerder(
            self.config, self.engine, self.offsets, registry, "", self.configs, self.statuses, ""
        )
        self.herder.kafka_cluster_id = cluster_id(self.config)
        app = create_app(self.herder)
        install(app, self.herder)
        self.rest = RestServer(app, self.config.get_list("listeners")).start()
        host = self.config.get("rest.advertised.host.name") or socket.gethostname()
        port = self.config.get("rest.advertised.port") or self.rest.port
        self.herder.worker_id = f"{host}:{port}"
        self.herder.rest_url = self.config.advertised_url(host, self.rest.port)
        log.info("REST server listening at %s (advertised %s)", self.rest.url,
                 self.herder.rest_url)  # fmt: skip
        self.herder.start()

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())

    def _shutdown(self) -> None:
        log.info("sparkcat is shutting down")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("herder", lambda: self.herder and self.herder.stop()),
            ("REST server", lambda: self.rest and self.rest.stop()),
            ("engine", lambda: self.engine and self.engine.close()),
            ("status store", lambda: self.statuses and (self.statuses.flush(),
                                                         self.statuses.stop())),
            ("offset store", lambda: self.offsets and self.offsets.close()),
            ("config store", lambda: self.configs and self.configs.stop()),
        ]  # fmt: skip
        for what, step in steps:
            try:
                step()
            except Exception:
                log.exception("Could not stop the %s cleanly", what)


__all__ = ["distributed_main", "run_distributed"]
