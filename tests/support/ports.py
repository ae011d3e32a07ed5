"""Free TCP ports for servers a test starts in another process.

Binding port 0 and handing the number to a child process races: the kernel gives out the
same ephemeral range to every outgoing connection and every ``bind(0)`` in the meantime (a
JVM starting up binds several), so the child can find its port taken. Ports are therefore
drawn from below the kernel's ephemeral range, which the kernel never assigns on its own,
and never handed out twice in one test session.

Under pytest-xdist each worker process draws from its own slice of that range, so two
workers never hand out the same port to their children.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

_handed_out: set[int] = set()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _xdist_slice(low: int, high: int) -> tuple[int, int]:
    """This xdist worker's share of ``[low, high]`` (the whole range outside xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return low, high
    index = int(worker[2:]) % count
    width = (high - low + 1) // count
    return low + index * width, low + (index + 1) * width - 1


def port_range() -> tuple[int, int]:
    """The ports :func:`free_port` draws from in this process."""
    high = min(_ephemeral_low(), 65536) - 1
    return _xdist_slice(max(10000, high - 12000), high)


def free_port() -> int:
    """A port nothing listens on now and that the kernel will not assign to anyone else."""
    low, high = port_range()
    for _ in range(500):
        port = random.randint(low, high)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free TCP port between {low} and {high}")
