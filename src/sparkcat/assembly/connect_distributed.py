"""Kafka's ``ConnectDistributed``: one member of a Connect cluster, as ``sparkcat distributed``
runs it and as the embedded API (``sparkcat.Connect``) runs it in an application.

Start-up order: the embedded broker when there is no ``bootstrap.servers`` (the embedded
API only: the command line refuses it, every worker would get its own broker), the three
internal topics (created when missing, read to their ends), the Spark engine (on the
application's SparkSession, or its own, built in the background), the distributed herder
with its :class:`~sparkcat.runtime.worker.Worker`, its REST endpoint, then the group
membership. Shutdown, in reverse: the herder (this member's work stops, its statuses become
UNASSIGNED, it leaves the group), REST server, engine, status store (flushed), offset store,
config store, broker.

The REST endpoint always runs: followers forward leader-only writes to the leader over it,
as in Kafka.

Exit codes of :meth:`ConnectDistributed.run`: 0 after a graceful stop (SIGINT/SIGTERM, at
any moment of start-up too); 2 for internal topics Kafka would refuse (one line
``sparkcat: <reason>`` on stderr, the last line); 3 when the worker fails later.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.assembly.process import (
    Process,
    advertised_host,
    start_embedded_broker,
    worker_id,
)
from sparkcat.runtime.distributed.config import DistributedConfig

log = logging.getLogger("sparkcat")


class ConnectDistributed:
    """One member: its parts, started in order and stopped in reverse (:meth:`stop` is
    idempotent; the parts are ``None`` once stopped)."""

    def __init__(self, config: DistributedConfig) -> None:
        self.config = config
        self.process = Process()
        self.configs: Any = None
        self.offsets: Any = None
        self.statuses: Any = None
        self.engine: Any = None
        self.herder: Any = None
        self.rest: Any = None

    # -- the command line -------------------------------------------------------------------
    def run(self) -> int:
        """Start, run until SIGINT/SIGTERM, stop (see the module docstring for exit codes)."""
        self.process.install_signal_handlers()
        stop = self.process.stop_event
        try:
            self.start_stores()
        except ConfigError as exc:
            self.stop(announce=False)
            print(f"sparkcat: {exc}", file=sys.stderr, flush=True)
            return 2
        try:
            if stop.is_set():
                return 0
            self.start_herder(None)
            if self.engine.wait_ready(stop):
                stop.wait()
            return 0
        except (ConnectError, OSError) as exc:
            log.error("sparkcat worker failed: %s", exc)
            return 3
        finally:
            self.stop(announce=True)

    # -- the embedded API -------------------------------------------------------------------
    def start(self, session: Any, join_timeout_s: float) -> None:
        """Start every part and wait to join the group; on failure, stop what was started and
        raise."""
        try:
            self.start_broker()
            self.start_stores()
            self.start_herder(session)
            if not self.herder.wait_stable(join_timeout_s):
                raise ConnectError(f"Could not join group {self.config.group_id} within "
                                   f"{join_timeout_s:g} s")  # fmt: skip
        except BaseException:
            self.stop()
            raise

    # -- the parts --------------------------------------------------------------------------
    def start_broker(self) -> None:
        """The embedded broker, when the config names none; the internal topics then get
        replication factor 1 unless the config says otherwise."""
        if not self.config.uses_embedded_broker:
            return
        servers = start_embedded_broker(self.process)
        defaults = {
            f"{kind}.storage.replication.factor": "1" for kind in ("config", "offset", "status")
        }
        self.config = DistributedConfig(
            {**defaults, **self.config.originals()}
        ).with_bootstrap_servers(servers)

    def start_stores(self) -> None:
        """The three internal topics, read to their ends (ConfigError: a topic Kafka would
        refuse, e.g. a config topic of two partitions)."""
        from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
        from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
        from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

        worker = self.config.strings()
        self.configs = configs = KafkaConfigBackingStore(worker)
        self.process.on_shutdown("config store", configs.stop)
        configs.start()
        self.offsets = offsets = KafkaOffsetBackingStore(worker)
        self.process.on_shutdown("offset store", offsets.close)
        offsets.start()
        self.statuses = statuses = KafkaStatusBackingStore(worker)
        self.process.on_shutdown("status store", statuses.flush, statuses.stop)
        statuses.start()

    def start_herder(self, session: Any) -> None:
        """The Spark engine (on ``session``, or a new one when None), the distributed herder
        and its REST endpoint; the herder joins the group."""
        from sparkcat.engine import SparkEngine
        from sparkcat.kafka.admin import cluster_id
        from sparkcat.runtime.distributed.forwarding import install
        from sparkcat.runtime.distributed.herder import DistributedHerder
        from sparkcat.runtime.isolation.plugins import default_registry
        from sparkcat.runtime.rest.app import create_app
        from sparkcat.runtime.rest.server import RestServer

        self.engine = engine = SparkEngine(self.config.strings(), self.offsets, session=session)
        self.process.on_shutdown("engine", engine.close)
        registry = default_registry(self.config.plugin_path())
        self.herder = herder = DistributedHerder(
            self.config, engine, self.offsets, registry, "", self.configs, self.statuses, ""
        )
        herder.kafka_cluster_id = cluster_id(self.config.strings())
        app = create_app(herder)
        install(app, herder)
        self.rest = rest = RestServer(
            app, self.config.get_list("listeners"), self.config.originals()
        ).start()
        self.process.on_shutdown("REST server", rest.stop)
        herder.worker_id = worker_id(self.config, rest.port)
        herder.rest_url = self.config.advertised_url(advertised_host(self.config), rest.port)
        log.info("Connect member %s of group %s (REST at %s, advertised %s)",
                 herder.worker_id, self.config.group_id, rest.url, herder.rest_url)  # fmt: skip
        self.process.on_shutdown("herder", herder.stop)
        herder.start()

    def stop(self, announce: bool = False) -> None:
        """Stop every part started, in reverse order (``announce``: log the shutdown line)."""
        self.process.shutdown(announce)
        self.herder = self.rest = self.engine = self.statuses = self.offsets = None
        self.configs = None


__all__ = ["ConnectDistributed"]
