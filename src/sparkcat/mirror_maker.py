"""Dedicated mode: ``sparkcat mirror-maker mm2.properties [--clusters A,B]``.

Kafka's ``connect-mirror-maker.sh``: for each flow source->target of the file (see
:mod:`sparkcat.mirror_maker_config`) one standalone-style worker (herder + engine) runs the
flow's MirrorSourceConnector, MirrorCheckpointConnector and MirrorHeartbeatConnector,
producing to the target; all workers share one SparkSession. ``--clusters`` keeps only the
flows whose target is listed. As in Kafka, a flow's source offsets and statuses live in
topics of its target cluster, ``mm2-offsets.<source>.internal`` and
``mm2-status.<source>.internal`` (``offset.storage.topic``/``status.storage.topic`` and their
``.partitions``/``.replication.factor`` keys override them), so Kafka's tools read them and a
restarted (or killed) MirrorMaker resumes from the last committed offsets. Connector configs
come from the file at every start and are not written to ``mm2-configs.<source>.internal``:
one process per file runs every flow (KIP-710's several cooperating nodes are not
supported). Exit codes as ``sparkcat standalone``: 2 for a bad command line or file (one line
on stderr, nothing started), 0 after SIGINT/SIGTERM.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.assembly.process import Process, prepare_process
from sparkcat.kafka.properties import load_properties
from sparkcat.mirror_maker_config import CONNECTORS, MirrorMakerConfig, SourceAndTarget
from sparkcat.runtime.distributed.config import DistributedConfig

log = logging.getLogger("sparkcat.mirror_maker")

USAGE = "usage: sparkcat mirror-maker MM2.properties [--clusters ALIAS[,ALIAS...]]"


class UsageError(Exception):
    """A bad command line or file: exit code 2."""


def parse_args(
    args: Sequence[str],
) -> list[tuple[SourceAndTarget, DistributedConfig, MirrorMakerConfig]]:
    """The flows to run, each with its worker config; ``UsageError`` when unusable."""
    args = list(args)
    if not args or args[0].startswith("-"):
        raise UsageError(USAGE)
    path, rest = args[0], args[1:]
    targets: set[str] | None = None
    if rest[:1] == ["--clusters"] and len(rest) == 2:
        targets = {c.strip() for c in rest[1].split(",") if c.strip()}
    elif rest:
        raise UsageError(USAGE)
    try:
        config = MirrorMakerConfig(load_properties(path))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ConfigError as exc:
        raise UsageError(f"invalid MirrorMaker config {path}: {exc}") from exc
    flows = []
    for pair in config.cluster_pairs():
        if targets is not None and pair.target not in targets:
            continue
        worker = config.worker_config(pair)
        if not worker.get("bootstrap.servers"):
            raise UsageError(
                f"invalid MirrorMaker config {path}: no {pair.target}.bootstrap.servers"
            )
        try:
            flows.append((pair, DistributedConfig(worker), config))
        except ConfigError as exc:
            raise UsageError(f"invalid MirrorMaker config {path}: {exc}") from exc
    if not flows:
        raise UsageError(f"no replication flow in {path}: set e.g. A->B.enabled = true")
    return flows


def run_mirror_maker(args: Sequence[str]) -> int:
    try:
        flows = parse_args(args)
    except UsageError as exc:
        print(f"sparkcat: {exc}", file=sys.stderr)
        return 2
    prepare_process()
    return MirrorMaker(flows).run()


class MirrorMaker:
    """The running flows: one herder and engine per flow on one SparkSession, the process
    parts (signals, shutdown order) of :mod:`sparkcat.assembly.process`."""

    def __init__(
        self, flows: list[tuple[SourceAndTarget, DistributedConfig, MirrorMakerConfig]]
    ) -> None:
        self.flows = flows
        self.process = Process()

    def run(self) -> int:
        self.process.install_signal_handlers()
        try:
            self.start()
            log.info("MirrorMaker running %s", ", ".join(str(p) for p, _, _ in self.flows))
            self.process.stop_event.wait()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("MirrorMaker failed: %s", exc)
            return 3
        finally:
            self.process.shutdown()

    def start(self) -> None:
        """The shared SparkSession, then per flow its stores, engine and herder, which runs
        the flow's connectors; each part is stopped at shutdown in reverse order."""
        from sparkcat.engine.session import build_session

        session = build_session(self.flows[0][1].strings())
        self.process.on_shutdown("SparkSession", session.stop)
        for pair, worker, config in self.flows:
            herder = self._start_flow(pair, worker, session)
            for connector in CONNECTORS:
                herder.create_connector(
                    connector, config.connector_config(pair, connector), None, None
                )
            herder.mark_ready()

    def _start_flow(self, pair: SourceAndTarget, worker: DistributedConfig, session: Any) -> Any:
        from sparkcat.engine import SparkEngine
        from sparkcat.runtime.isolation.plugins import default_registry
        from sparkcat.runtime.standalone.herder import StandaloneHerder
        from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
        from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

        props = worker.strings()
        offsets = KafkaOffsetBackingStore(props, client_id=f"{pair}|offsets")
        self.process.on_shutdown(f"offset store of {pair}", offsets.close)
        statuses = KafkaStatusBackingStore(props, client_id=f"{pair}|statuses")
        self.process.on_shutdown(f"status store of {pair}", statuses.flush, statuses.stop)
        offsets.start()
        statuses.start()
        engine = SparkEngine(props, offsets, session=session)
        self.process.on_shutdown(f"engine of {pair}", engine.close)
        registry = default_registry(worker.plugin_path())
        return StandaloneHerder(worker, engine, offsets, registry, str(pair), statuses)


__all__ = ["USAGE", "MirrorMaker", "parse_args", "run_mirror_maker"]
