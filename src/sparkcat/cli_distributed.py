"""``sparkcat distributed WORKER.properties`` (also ``connect-distributed``): one worker of a
cluster (docs/distributed.md).

Exit codes: 0 after a graceful shutdown (SIGINT/SIGTERM: this worker's work stops, its
statuses become UNASSIGNED, it leaves the group and the others take its share); 2 for a
usage error, an unreadable or invalid worker file, or internal topics Kafka would refuse
(e.g. a config topic with more than one partition) — one line ``sparkcat: <reason>`` on
stderr and nothing left running; 3 when the worker fails later.

This module reads the command line and the worker file; the member itself, its start-up and
shutdown order and its signal handling are :mod:`sparkcat.assembly.connect_distributed`.
``bootstrap.servers`` must name a real cluster: ``embedded`` would give every worker its own
broker.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from sparkcat.api.errors import ConfigError

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
    from sparkcat.assembly.connect_distributed import ConnectDistributed
    from sparkcat.assembly.process import prepare_process

    prepare_process(quiet=("kafka",))  # kafka-python: group membership only
    return ConnectDistributed(config).run()


__all__ = ["distributed_main", "run_distributed"]
