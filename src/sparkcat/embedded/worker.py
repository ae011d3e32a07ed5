"""The parts of one distributed member, started and stopped in order — used by the embedded
API and by ``sparkcat distributed`` (:mod:`sparkcat.cli_distributed`) alike: the embedded
broker when there is no ``bootstrap.servers``, the three internal topics, the Spark engine
(on the application's SparkSession, or its own), the distributed herder, its REST endpoint,
then the group membership.

The REST endpoint always runs: followers forward leader-only writes to the leader over it,
as in Kafka. Without ``rest=True`` or a ``listeners`` key it listens on a free loopback
port only (enough for the processes of one machine); give ``listeners`` (and
``rest.advertised.host.name``) for a group spread over machines.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping
from typing import Any

from sparkcat.runtime.distributed.config import DistributedConfig

log = logging.getLogger(__name__)

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
INTERNAL_LISTENER = "http://127.0.0.1:0"
REST_LISTENER = "http://:8083"


def worker_properties(app_id: str, config: Mapping[str, Any], rest: bool) -> dict[str, str]:
    """The worker config of member ``app_id``: ``config`` over the embedded defaults (group
    ``app_id``, topics ``<app_id>-configs|-offsets|-status``, JsonConverter as in the
    shipped worker files, the listener described in the module docs)."""
    props = {
        "group.id": app_id,
        "config.storage.topic": f"{app_id}-configs",
        "offset.storage.topic": f"{app_id}-offsets",
        "status.storage.topic": f"{app_id}-status",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
    }
    given = string_map(config)
    if "listeners" not in given:
        props["listeners"] = REST_LISTENER if rest else INTERNAL_LISTENER
        if not rest:
            props["rest.advertised.host.name"] = "127.0.0.1"
    props.update(given)
    return props


def string_map(config: Mapping[str, Any]) -> dict[str, str]:
    """A config given in Python values as Kafka's strings (``True`` -> ``"true"``)."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}


class EmbeddedWorker:
    """What was started, to be stopped in reverse order (:meth:`stop` is idempotent)."""

    def __init__(self, config: DistributedConfig) -> None:
        self.config = config
        self.broker: Any = None
        self.configs: Any = None
        self.offsets: Any = None
        self.statuses: Any = None
        self.engine: Any = None
        self.herder: Any = None
        self.rest: Any = None

    def start(self, session: Any, join_timeout_s: float) -> None:
        """Start every part; on failure, stop what was started and raise."""
        try:
            self._start_broker()
            self.start_stores()
            self.start_herder(session)
            if not self.herder.wait_stable(join_timeout_s):
                from sparkcat.api.errors import ConnectError

                raise ConnectError(f"Could not join group {self.config.group_id} within "
                                   f"{join_timeout_s:g} s")  # fmt: skip
        except BaseException:
            self.stop()
            raise

    def _start_broker(self) -> None:
        if not self.config.uses_embedded_broker:
            return
        from sparkcat.kafka.broker import EmbeddedBroker

        self.broker = EmbeddedBroker().start()
        log.info("Started the embedded Kafka broker at %s", self.broker.bootstrap_servers)
        defaults = {
            f"{kind}.storage.replication.factor": "1" for kind in ("config", "offset", "status")
        }
        self.config = DistributedConfig(
            {**defaults, **self.config.originals()}
        ).with_bootstrap_servers(self.broker.bootstrap_servers)

    def start_stores(self) -> None:
        """The three internal topics, read to their ends (ConfigError: a topic Kafka would
        refuse, e.g. a config topic of two partitions)."""
        from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
        from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
        from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

        worker = self.config.strings()
        self.configs = KafkaConfigBackingStore(worker)
        self.configs.start()
        self.offsets = KafkaOffsetBackingStore(worker)
        self.offsets.start()
        self.statuses = KafkaStatusBackingStore(worker)
        self.statuses.start()

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

        self.engine = SparkEngine(self.config.strings(), self.offsets, session=session)
        registry = default_registry(self.config.plugin_path())
        self.herder = DistributedHerder(
            self.config, self.engine, self.offsets, registry, "", self.configs, self.statuses, ""
        )
        self.herder.kafka_cluster_id = cluster_id(self.config.strings())
        app = create_app(self.herder)
        install(app, self.herder)
        self.rest = RestServer(
            app, self.config.get_list("listeners"), self.config.originals()
        ).start()
        host = self.config.get("rest.advertised.host.name") or socket.gethostname()
        port = self.config.get("rest.advertised.port") or self.rest.port
        self.herder.worker_id = f"{host}:{port}"
        self.herder.rest_url = self.config.advertised_url(host, self.rest.port)
        log.info("Connect member %s of group %s (REST at %s, advertised %s)",
                 self.herder.worker_id, self.config.group_id, self.rest.url,
                 self.herder.rest_url)  # fmt: skip
        self.herder.start()

    def stop(self) -> None:
        steps: list[tuple[str, Callable[[], object]]] = [
            ("herder", lambda: self.herder and self.herder.stop()),
            ("REST server", lambda: self.rest and self.rest.stop()),
            ("engine", lambda: self.engine and self.engine.close()),
            ("status store", lambda: self.statuses and (self.statuses.flush(),
                                                         self.statuses.stop())),
            ("offset store", lambda: self.offsets and self.offsets.close()),
            ("config store", lambda: self.configs and self.configs.stop()),
            ("embedded broker", lambda: self.broker and self.broker.stop()),
        ]  # fmt: skip
        for what, step in steps:
            try:
                step()
            except Exception:
                log.exception("Could not stop the %s cleanly", what)
        self.herder = self.rest = self.engine = self.statuses = self.offsets = None
        self.configs = self.broker = None


__all__ = ["EmbeddedWorker", "string_map", "worker_properties"]
