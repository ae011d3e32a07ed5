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
import sys
import threading
from collections.abc import Sequence
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
    from sparkcat.kafka.properties import load_properties
    from sparkcat.runtime.distributed.config import DistributedConfig

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
    """One member (the same assembly as the embedded API's), run until a signal stops it."""

    def __init__(self, config: Any) -> None:
        from sparkcat.embedded.worker import EmbeddedWorker

        self.member = EmbeddedWorker(config)
        self.stop_event = threading.Event()

    def run(self) -> int:
        # First: a SIGINT/SIGTERM at any moment of the start-up stops the worker as gracefully
        # as one while it runs (exit 0), instead of killing it halfway through.
        self._install_signal_handlers()
        try:
            self.member.start_stores()
        except ConfigError as exc:
            self.member.stop()
            return _fail(str(exc))  # the last line, after the shutdown's log lines
        try:
            if self.stop_event.is_set():
                return 0
            self.member.start_herder(None)
            if self.member.engine.wait_ready(self.stop_event):
                self.stop_event.wait()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("sparkcat worker failed: %s", exc)
            return 3
        finally:
            log.info("sparkcat is shutting down")
            self.member.stop()

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())


__all__ = ["distributed_main", "run_distributed"]
