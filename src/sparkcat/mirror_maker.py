"""Dedicated mode: ``sparkcat mirror-maker mm2.properties [--clusters B [C ...]]``.

Kafka's ``connect-mirror-maker.sh``: for each flow source->target of the file (see
:mod:`sparkcat.mirror_maker_config`) this node runs one distributed herder (Kafka's
``MirrorHerder``, :mod:`sparkcat.assembly.mirror_maker`) with its own Spark engine, all on one
SparkSession. ``--clusters`` keeps only the flows whose target is listed (names separated by
spaces, as Kafka's option takes them, or commas).

Every node started with the same file joins, per flow, the group ``<source>-mm2`` on the
target cluster, whose config, offset and status topics are ``mm2-configs.<source>.internal``,
``mm2-offsets.<source>.internal`` and ``mm2-status.<source>.internal`` there (the worker keys
``group.id``, ``*.storage.topic`` and their ``.partitions``/``.replication.factor`` override
them, per flow as ``A->B.<key>``, or through ``<target>.<key>``): the nodes share the flow's
connectors and tasks, and when one leaves or dies its work moves to the others, resuming
from the offsets committed to ``mm2-offsets``. The group's leader writes the connector
configs from the file. Followers send their connectors' task configs to the leader over the
internal REST server (``dedicated.mode.enable.internal.rest = true``, on ``listeners``); a
single node needs none. Exit codes as ``sparkcat standalone``: 2 for a bad command line or
file (one line on stderr, nothing started), 0 after SIGINT/SIGTERM, 3 when start-up fails.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.assembly.process import Process, advertised_host, prepare_process, worker_id
from sparkcat.kafka.properties import load_properties
from sparkcat.mirror_maker_config import MirrorMakerConfig, SourceAndTarget
from sparkcat.runtime.distributed.config import DistributedConfig

log = logging.getLogger("sparkcat.mirror_maker")

USAGE = "usage: sparkcat mirror-maker MM2.properties [--clusters ALIAS [ALIAS ...]]"

Flow = tuple[SourceAndTarget, DistributedConfig, MirrorMakerConfig]


class UsageError(Exception):
    """A bad command line or file: exit code 2."""


def _targets(rest: list[str]) -> set[str] | None:
    """``--clusters B C`` or ``--clusters B,C`` (None: every cluster)."""
    if not rest:
        return None
    if rest[0] != "--clusters" or len(rest) < 2:
        raise UsageError(USAGE)
    targets = {c.strip() for arg in rest[1:] for c in arg.split(",") if c.strip()}
    if not targets:
        raise UsageError(USAGE)
    return targets


def parse_args(args: Sequence[str]) -> list[Flow]:
    """The flows to run, each with its worker config; ``UsageError`` when unusable."""
    args = list(args)
    if not args or args[0].startswith("-"):
        raise UsageError(USAGE)
    path = args[0]
    targets = _targets(args[1:])
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
    """This node's flows: one herder and engine per flow on one SparkSession, the internal
    REST server when enabled, and the process parts (signals, shutdown order) of
    :mod:`sparkcat.assembly.process`."""

    def __init__(self, flows: list[Flow]) -> None:
        self.flows = flows
        self.config = flows[0][2]
        self.process = Process()
        self.herders: dict[SourceAndTarget, Any] = {}
        self.internal: Any = None  # InternalMirrorRest, with the internal server
        self.advertised_url = ""
        self.node = f"{advertised_host({})}/{os.getpid()}"

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
        """The shared SparkSession, the internal REST server, then per flow its stores,
        engine and herder, which joins the flow's group; each part is stopped at shutdown in
        reverse order (the herders first: their work stops and they leave their groups)."""
        from sparkcat.engine.session import build_session

        session = build_session(self.flows[0][1].strings())
        self.process.on_shutdown("SparkSession", session.stop)
        if self.config.enable_internal_rest():
            self._start_internal_rest()
        for pair, worker, _ in self.flows:
            if self.process.stop_event.is_set():
                return
            self._start_flow(pair, worker, session)

    def _start_internal_rest(self) -> None:
        """Kafka's ``MirrorRestServer`` on ``listeners``; the node's url from it."""
        from sparkcat.assembly.mirror_maker import InternalMirrorRest
        from sparkcat.runtime.rest.server import RestServer

        props = self.config.internal_rest_props()
        self.internal = InternalMirrorRest()
        rest = RestServer(self.internal, props["listeners"], props).start()
        self.process.on_shutdown("internal REST server", rest.stop)
        self.node = worker_id(props, rest.port)
        self.advertised_url = _advertised_url(props, rest.port)
        log.info("Internal REST server at %s (advertised %s)", rest.url, self.advertised_url)

    def _start_flow(self, pair: SourceAndTarget, worker: DistributedConfig, session: Any) -> None:
        from sparkcat.assembly.mirror_maker import NOT_USED_URL, MirrorHerder, flow_path
        from sparkcat.engine import SparkEngine
        from sparkcat.kafka.admin import cluster_id
        from sparkcat.runtime.isolation.plugins import default_registry
        from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
        from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
        from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

        props = worker.strings()
        configs = KafkaConfigBackingStore(props)
        self.process.on_shutdown(f"config store of {pair}", configs.stop)
        configs.start()
        offsets = KafkaOffsetBackingStore(props, client_id=f"{pair}|offsets")
        self.process.on_shutdown(f"offset store of {pair}", offsets.close)
        offsets.start()
        statuses = KafkaStatusBackingStore(props, client_id=f"{pair}|statuses")
        self.process.on_shutdown(f"status store of {pair}", statuses.flush, statuses.stop)
        statuses.start()
        engine = SparkEngine(props, offsets, session=session)
        self.process.on_shutdown(f"engine of {pair}", engine.close)
        registry = default_registry(worker.plugin_path())
        url = self.advertised_url + flow_path(pair) if self.internal else NOT_USED_URL
        # Kafka names the worker of every node "<source>-><target>"; the node is added, as
        # the statuses must tell the nodes of one flow apart.
        herder = MirrorHerder(
            self.config, pair, self.internal is not None,
            worker, engine, offsets, registry, f"{pair}@{self.node}", configs, statuses, url,
        )  # fmt: skip
        herder.kafka_cluster_id = cluster_id(props)
        if self.internal is not None:
            self.internal.add(pair, herder)
        self.herders[pair] = herder
        self.process.on_shutdown(f"herder of {pair}", herder.stop)
        herder.start()
        log.info("Herder of %s started as %s (group %s)", pair, herder.worker_id,
                 worker.group_id)  # fmt: skip


def _advertised_url(props: dict[str, str], port: int) -> str:
    """Kafka's ``RestServer.advertisedUrl``: ``rest.advertised.listener|host.name|port``
    over the first listener's scheme, this host and the bound port, with a trailing ``/``."""
    listener = props["listeners"].split(",")[0].strip()
    scheme = props.get("rest.advertised.listener") or (
        listener.split("://", 1)[0].lower() if "://" in listener else "http"
    )
    port_shown = props.get("rest.advertised.port") or port
    return f"{scheme}://{advertised_host(props)}:{port_shown}/"


__all__ = ["USAGE", "MirrorMaker", "UsageError", "parse_args", "run_mirror_maker"]
