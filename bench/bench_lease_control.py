"""How fast a pause reaches a running lease: network control channel vs the old control file.

    python bench/bench_lease_control.py [--rounds 200] [--relay-leases 400]

Baseline (hand-written here): the removed mechanism — a local control file that the lease
loop stats at most every 100 ms and reads when its mtime changed. Measured: the same
``pause`` through :class:`~sparkcat.engine.control_server.ControlServer` and a lease's
:class:`~sparkcat.runtime.tasks.control.ControlChannel` (HTTP long poll on loopback). Reports the
pause-to-flag latency (median, p95, max) and the cost of one ``stop_requested`` check on
the lease's data path. Then the same pause through a task host's relay
(:mod:`sparkcat.runtime.tasks.host`): one host holding ``--relay-leases`` leases' channels,
which learn the pause from the host's own long poll.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.task_hosts import TaskHosts
from sparkcat.runtime.tasks import control
from sparkcat.runtime.tasks.control import ControlChannel
from sparkcat.runtime.tasks.host import run_host


class FileWatch:
    """The old control file watch: stat every 100 ms, read when the mtime changed."""

    def __init__(self, path: str) -> None:
        self.path, self.next_check, self.mtime, self.stop = path, 0.0, -1, False

    def stop_requested(self, now: float) -> bool:
        if now < self.next_check:
            return self.stop
        self.next_check = now + 0.1
        mtime = os.stat(self.path).st_mtime_ns
        if mtime != self.mtime:
            with open(self.path) as f:
                self.stop = f.read().strip() in ("pause", "stop")
            self.mtime = mtime
        return self.stop


def percentiles(samples: list[float]) -> str:
    samples = sorted(samples)
    p95 = samples[int(len(samples) * 0.95) - 1]
    return f"median {statistics.median(samples):.2f} ms, p95 {p95:.2f} ms, max {samples[-1]:.2f} ms"


def file_latency(rounds: int, work: Path) -> list[float]:
    out = []
    for i in range(rounds):
        path = work / f"c{i}"
        path.write_text("run")
        watch = FileWatch(str(path))
        watch.stop_requested(time.monotonic())
        time.sleep(0.013 * (i % 8))  # land anywhere in the 100 ms polling period
        started = time.monotonic()
        path.write_text("pause")
        while not watch.stop_requested(time.monotonic()):
            time.sleep(0.0002)
        out.append((time.monotonic() - started) * 1000)
    return out


def network_latency(rounds: int) -> tuple[list[float], float]:
    server = ControlServer({"spark.master": "local[2]"})
    out = []
    try:
        for i in range(rounds):
            address = server.open_channel("run")
            channel = ControlChannel(address)
            channel.wait_first_answer(5)
            time.sleep(0.013 * (i % 8))
            started = time.monotonic()
            server.set_state(address, "pause")
            while not channel.stop_requested():
                time.sleep(0.0002)
            out.append((time.monotonic() - started) * 1000)
            channel.close()
            server.close_channel(address)
        channel = ControlChannel(server.open_channel("run"))
        channel.wait_first_answer(5)
        started, n = time.perf_counter(), 0
        while n < 1_000_000:
            channel.stop_requested(0.0)
            n += 1
        check_ns = (time.perf_counter() - started) / n * 1e9
        channel.close()
    finally:
        server.close()
    return out, check_ns


def relay_latency(rounds: int, leases: int) -> list[float]:
    """Pause one channel among ``leases`` others held by one host (all relayed)."""
    server = ControlServer({"spark.master": "local[2]"})
    hosts = TaskHosts(None, server, {})
    threading.Thread(target=run_host, args=(server.base_url, server.token, 0), daemon=True).start()
    while hosts.hosts_up() < 1:
        time.sleep(0.01)
    out = []
    try:
        addresses = [server.new_issue(server.open_channel("run")) for _ in range(leases)]
        while not control._relay or not all(map(control._relay.knows, addresses)):
            time.sleep(0.001)
        others = [ControlChannel(address) for address in addresses]
        for i in range(rounds):
            address = server.new_issue(server.open_channel("run"))
            while not control._relay or not control._relay.knows(address):
                time.sleep(0.0005)  # as a host starts a lease: after the answer that has it
            channel = ControlChannel(address)  # relayed: run_host installed its relay here
            channel.wait_first_answer(5)
            time.sleep(0.013 * (i % 8))
            started = time.monotonic()
            server.set_state(address, "pause")
            while not channel.stop_requested():
                time.sleep(0.0002)
            out.append((time.monotonic() - started) * 1000)
            server.close_channel(address)
        assert not any(o.stop_requested() for o in others)
    finally:
        hosts.close()
        server.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--relay-leases", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        baseline = file_latency(args.rounds, Path(work))
        path = Path(work) / "hot"
        path.write_text("run")
        watch = FileWatch(str(path))
        started = time.perf_counter()
        for _ in range(1_000_000):
            watch.stop_requested(time.monotonic())
        file_check_ns = (time.perf_counter() - started) / 1_000_000 * 1e9
    network, check_ns = network_latency(args.rounds)
    relayed = relay_latency(args.rounds, args.relay_leases)
    print(f"control file (baseline): {percentiles(baseline)}; check {file_check_ns:.0f} ns")
    print(f"network channel:         {percentiles(network)}; check {check_ns:.0f} ns")
    print(f"host relay ({args.relay_leases} leases): {percentiles(relayed)}")
    print(
        f"median latency ratio network/file: "
        f"{statistics.median(network) / statistics.median(baseline):.3f}"
    )


if __name__ == "__main__":
    main()
