"""A Connect group member in a process of its own, for tests that freeze it (SIGSTOP) as an
overloaded or suspended worker would be: one JSON line per rebalance callback on stdout, with
the monotonic clock (system-wide on Linux, so the test can compare it with its own).

    python frozen_member.py WORKER_PROPS_JSON CONNECTORS_JSON
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Collection
from typing import Any

from sparkcat.runtime.distributed.assignor import ClusterConfigSnapshot
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.membership import WorkerGroupMember


def _emit(event: str, connectors: Collection[str], tasks: Collection[Any]) -> None:
    line = {"event": event, "connectors": sorted(connectors), "tasks": sorted(map(str, tasks)),
            "at": time.monotonic()}  # fmt: skip
    print(json.dumps(line), flush=True)


class _Listener:
    def on_assigned(self, assignment: Any, generation: int) -> None:
        _emit("assigned", assignment.connectors, assignment.tasks)

    def on_revoked(self, leader: str | None, connectors: Collection[str], tasks: Any) -> None:
        _emit("revoked", connectors, tasks)


def main() -> None:
    config = DistributedConfig(json.loads(sys.argv[1]))
    connectors = json.loads(sys.argv[2])
    member = WorkerGroupMember(
        config, "http://frozen:1/", lambda: ClusterConfigSnapshot(10, connectors), _Listener()
    )
    member.start()
    while True:
        member.poll(0.2)


if __name__ == "__main__":
    main()
