"""What every mode's process shares: written once for standalone, distributed, MirrorMaker.

- :func:`prepare_process`: logging to stderr in sparkcat's one-line format, and
  ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON`` set to this interpreter unless the user set
  them, so Spark's Python workers run the worker's own environment.
- :class:`Process`: a stop event set by SIGINT/SIGTERM (handlers installed first, so a
  signal at any moment of start-up -- Spark still building included -- stops the process
  as gracefully as one while it runs, with exit code 0), and the shutdown list: every part
  registers how to stop it as it starts, and :meth:`Process.shutdown` stops them in reverse
  order, after one line ``sparkcat is shutting down``.
- :func:`start_embedded_broker` (no ``bootstrap.servers``, or ``embedded``) and
  :func:`worker_id` (Kafka's: the advertised REST ``host:port``).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("sparkcat")

SHUTDOWN_LINE = "sparkcat is shutting down"
_NOISY_LOGGERS = ("py4j", "uvicorn.error")


def prepare_process(quiet: tuple[str, ...] = ()) -> None:
    """Logging (sparkcat's format, on stderr; ``quiet`` loggers at WARNING) and the PySpark
    environment. Called by the command lines, never by the embedded API (an application
    owns its logging and environment)."""
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )
    for noisy in (*_NOISY_LOGGERS, *quiet):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_quiet_py4j_root_records)
    for variable in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ.setdefault(variable, sys.executable)


def _quiet_py4j_root_records(record: logging.LogRecord) -> bool:
    # py4j logs its retries through the root logger (logging.info(...)), so the "py4j"
    # logger's level does not reach them: a traceback at INFO for every retried call.
    return record.levelno >= logging.WARNING or f"{os.sep}py4j{os.sep}" not in record.pathname


class Process:
    """The stop event and the shutdown list of one process (or of one embedded member)."""

    def __init__(self) -> None:
        self.stop_event = threading.Event()
        self._steps: list[tuple[str, tuple[Callable[[], object], ...]]] = []
        self._lock = threading.Lock()

    def install_signal_handlers(self) -> None:
        """SIGINT and SIGTERM set the stop event (only the main thread may install them: an
        application embedding a member keeps its own)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())

    def on_shutdown(self, what: str, *calls: Callable[[], object]) -> None:
        """Stop ``what`` at shutdown by ``calls``, in order (e.g. flush, then close), before
        everything registered earlier."""
        with self._lock:
            self._steps.append((what, calls))

    def shutdown(self, announce: bool = True) -> None:
        """Run the shutdown steps, last registered first; a step that fails is logged and the
        rest still run. Idempotent: the steps run once."""
        with self._lock:
            steps, self._steps = self._steps, []
        if announce:
            log.info(SHUTDOWN_LINE)
        for what, calls in reversed(steps):
            try:
                for call in calls:
                    call()
            except Exception:
                log.exception("Could not stop the %s cleanly", what)


def start_embedded_broker(process: Process) -> str:
    """Start the embedded Kafka-compatible broker, stopped at shutdown; its address."""
    from sparkcat.kafka.broker import EmbeddedBroker

    broker = EmbeddedBroker().start()
    process.on_shutdown("embedded broker", broker.stop)
    log.info("Started the embedded Kafka broker at %s", broker.bootstrap_servers)
    return str(broker.bootstrap_servers)


def advertised_host(config: Any) -> str:
    """``rest.advertised.host.name``, else this machine's host name."""
    return str(config.get("rest.advertised.host.name") or socket.gethostname())


def worker_id(config: Any, port: int) -> str:
    """Kafka's worker id: the advertised REST ``host:port``."""
    advertised_port = config.get("rest.advertised.port") or port
    return f"{advertised_host(config)}:{advertised_port}"


__all__ = [
    "SHUTDOWN_LINE",
    "Process",
    "advertised_host",
    "prepare_process",
    "start_embedded_broker",
    "worker_id",
]
