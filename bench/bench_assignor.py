"""The group leader's cost of one rebalance: IncrementalCooperativeAssignor against EagerAssignor.

    python bench/bench_assignor.py [--workers N] [--connectors N] [--tasks N] [--rounds N]
                                   [--no-append]

What the leader does in one rebalance, end to end: decode every member's JoinGroup metadata
(sessioned v2, carrying its current assignment), assign, and encode every member's SyncGroup
assignment. Two situations: a steady group (every member rejoins with a balanced assignment,
nothing moves) and a worker joining an otherwise steady group (the leader revokes the
surplus). The baseline is Kafka's EagerAssignor on the same members (plain round-robin of
everything; what the incremental algorithm's bookkeeping is compared with), timed in
alternating rounds so a shared machine's load hits both alike. Results are printed and
appended to ``bench/RESULTS.md`` (``## Distributed assignor``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from sparkcat.runtime.distributed.assignor import (
    ClusterConfigSnapshot,
    EagerAssignor,
    IncrementalCooperativeAssignor,
)
from sparkcat.runtime.distributed.protocol import (
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_metadata,
    serialize_metadata,
)
from sparkcat.runtime.rest.entities import ConnectorTaskId

Members = dict[str, bytes]


def steady_members(workers: int, snapshot: ClusterConfigSnapshot) -> Members:
    """Each worker's v2 metadata after a balanced round-robin assignment."""
    owned: dict[str, tuple[list[str], list[ConnectorTaskId]]] = {
        f"worker-{i:03d}": ([], []) for i in range(workers)
    }
    names = sorted(owned)
    for i, connector in enumerate(snapshot.connectors()):
        owned[names[i % workers]][0].append(connector)
    tasks = [t for c in snapshot.connectors() for t in snapshot.tasks(c)]
    for i, task in enumerate(tasks):
        owned[names[i % workers]][1].append(task)
    result = {}
    for name, (connectors, task_ids) in owned.items():
        assignment = ExtendedAssignment(
            2,
            0,
            names[0],
            "http://leader:8083/",
            snapshot.offset,
            tuple(connectors),
            tuple(task_ids),
        )
        state = ExtendedWorkerState(f"http://{name}:8083/", snapshot.offset, assignment)
        result[name] = serialize_metadata(state, 2)
    return result


def one_rebalance(
    assign: Callable[..., object], members: Members, snapshot: ClusterConfigSnapshot
) -> float:
    started = time.perf_counter()
    states = {m: deserialize_metadata(data) for m, data in members.items()}
    result = assign(min(states), "sessioned", states, snapshot, lambda: snapshot, 1, 2)
    result.serialize()  # type: ignore[attr-defined]
    return time.perf_counter() - started


def measure(members: Members, snapshot: ClusterConfigSnapshot, rounds: int) -> tuple[float, float]:
    incremental_total = eager_total = 0.0
    for _ in range(rounds):
        # A fresh assignor per round: its state must reflect the previous generation (1).
        incremental = IncrementalCooperativeAssignor(300_000)
        incremental.previous_generation_id = 1
        incremental_total += one_rebalance(incremental.perform_assignment, members, snapshot)
        eager_total += one_rebalance(EagerAssignor().perform_assignment, members, snapshot)
    return incremental_total / rounds, eager_total / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--connectors", type=int, default=500)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()

    snapshot = ClusterConfigSnapshot(
        1000, {f"connector-{i:04d}": args.tasks for i in range(args.connectors)}
    )
    steady = steady_members(args.workers, snapshot)
    joined = dict(steady)
    joined["worker-zzz"] = serialize_metadata(ExtendedWorkerState("http://new:8083/", 1000), 2)
    rows = []
    for label, members in (("steady group", steady), ("one worker joins", joined)):
        incremental, eager = measure(members, snapshot, args.rounds)
        rows.append((label, incremental, eager))

    total_tasks = args.connectors * args.tasks
    load = os.getloadavg()[0]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"### {stamp}, {args.workers} workers, {args.connectors} connectors x {args.tasks} "
        f"tasks ({total_tasks} tasks), {args.rounds} rounds, Python {platform.python_version()}, "
        f"load average {load:.1f}",
        "",
        "| rebalance | incremental (ms) | eager baseline (ms) | incremental / eager |",
        "|---|---:|---:|---:|",
    ]
    for label, incremental, eager in rows:
        lines.append(
            f"| {label} | {incremental * 1000:.1f} | {eager * 1000:.1f} | "
            f"**{incremental / eager:.2f}x** |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_append:
        results = Path(__file__).with_name("RESULTS.md")
        content = results.read_text()
        if "## Distributed assignor" not in content:
            content += (
                "\n## Distributed assignor\n\n`bench/bench_assignor.py` — the leader's work in "
                "one rebalance (decode members' v2 metadata, assign, encode assignments): "
                "Kafka's IncrementalCooperativeAssignor against EagerAssignor (round-robin of "
                "everything) on the same members, alternating rounds.\n"
            )
        results.write_text(content + "\n" + text)


if __name__ == "__main__":
    main()
