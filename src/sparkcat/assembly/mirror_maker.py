"""The multi-node parts of MirrorMaker's dedicated mode (KIP-710): Kafka's ``MirrorHerder``
and ``MirrorRestServer``.

Every node started with the same ``mm2.properties`` runs, per flow source->target, one
:class:`MirrorHerder`: a :class:`~sparkcat.runtime.distributed.herder.DistributedHerder`
whose group (``group.id``, default ``<source>-mm2``) and config/offset/status topics
(``mm2-configs.<source>.internal``, ...) live on the target cluster, so the nodes of one
flow share its connectors and tasks like the workers of a Connect cluster. Whichever node
becomes the group's leader writes the flow's three connector configs from the file to the
config topic (when they differ from what it holds), as Kafka's ``MirrorHerder`` does on a
successful rebalance.

A follower that runs a connector sends the task configs it generated to the leader. With
``dedicated.mode.enable.internal.rest = true`` each node serves :class:`InternalMirrorRest`
on ``listeners`` (Kafka's internal-only server: ``POST /{source}/{target}/connectors/{c}/tasks``
and ``PUT /{source}/{target}/connectors/{c}/fence``, signed as any inter-worker request,
forwarded on to the leader when they reach a follower), and the url each herder gives its
group is ``<advertised url><source>/<target>``, so a follower's requests land on the
leader's herder of the same flow. Without it (Kafka's default) a node has no url
(``NOTUSED``), a follower cannot reach the leader, and, as in Kafka, it logs the
``NotLeaderException`` advice to enable the internal server and tries again after an
exponential backoff: only a single node, or connectors that land on the leader, run then.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote, unquote

from sparkcat.mirror_maker_config import CONNECTORS, MirrorMakerConfig, SourceAndTarget
from sparkcat.runtime.distributed.herder import DistributedHerder, NotLeaderError
from sparkcat.runtime.herder.state import ManagedConnector

log = logging.getLogger("sparkcat.mirror_maker")

NOT_USED_URL = "NOTUSED"  # Kafka's advertised url of a node without the internal server
NO_INTERNAL_REST_MESSAGE = (
    "This worker is not able to communicate with the leader of the cluster, which is "
    "required for dynamically-reconfiguring connectors. If running MirrorMaker 2 in "
    "dedicated mode, consider enabling inter-worker communication via the "
    "'dedicated.mode.enable.internal.rest' property."
)
# Kafka's DistributedHerder RECONFIGURE_CONNECTOR_TASKS_BACKOFF_{INITIAL,MAX}_MS.
RECONFIGURE_BACKOFF_INITIAL_S = 0.25
RECONFIGURE_BACKOFF_MAX_S = 60.0

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def flow_path(pair: SourceAndTarget) -> str:
    """``<source>/<target>``, each URL-encoded (Kafka's REST namespace of a flow)."""
    return f"{quote(pair.source, safe='')}/{quote(pair.target, safe='')}"


class MirrorHerder(DistributedHerder):
    """One flow's member of its group on the target cluster (see the module docstring).

    ``mirror_config`` and ``pair`` give the connector configs the leader writes;
    ``internal_rest``: whether this node can forward task configs to the leader."""

    def __init__(
        self,
        mirror_config: MirrorMakerConfig,
        pair: SourceAndTarget,
        internal_rest: bool,
        *args: Any,
    ) -> None:
        super().__init__(*args)
        self.mirror_config = mirror_config
        self.pair = pair
        self.internal_rest = internal_rest
        self.was_leader = False
        self.seen_generation = -1
        # connector -> (next attempt, backoff) while a follower cannot forward its configs
        self.backoffs: dict[str, tuple[float, float]] = {}

    def tick(self) -> None:
        """After each successful rebalance (Kafka's ``rebalanceSuccess``): a node that has
        just become the leader configures the connectors."""
        super().tick()
        if self.rebalancing or self.assignment is None:
            return
        if self.group_generation == self.seen_generation:
            return
        self.seen_generation = self.group_generation
        leader = self.is_leader()
        if leader and not self.was_leader:
            log.info("This node %s is now a leader for %s. Configuring connectors...",
                     self.worker_id, self.pair)  # fmt: skip
            self.configure_connectors()
        self.was_leader = leader

    def configure_connectors(self) -> None:
        """Kafka's ``MirrorHerder.configureConnectors``: each connector's config from the
        file, written only when the config topic holds another one."""
        for name in CONNECTORS:
            desired = self.mirror_config.connector_config(self.pair, name)
            if self.configs.snapshot().connector_config(name) == desired:
                log.info("This node is a leader for %s and configuration for %s is already "
                         "up to date.", self.pair, name)  # fmt: skip
                continue
            try:
                self.update_connector_config(name, desired)
                log.info("%s connector configured for %s.", name, self.pair)
            except NotLeaderError:
                log.info("This node lost leadership for %s while trying to update the "
                         "connector configuration for %s. Using existing connector "
                         "configuration.", name, self.pair)  # fmt: skip
            except Exception:
                log.exception("Failed to configure %s connector for %s", name, self.pair)

    def task_configs_pending(self, name: str) -> bool:
        backoff = self.backoffs.get(name)
        if backoff is not None and time.monotonic() < backoff[0]:
            return True
        return super().task_configs_pending(name)

    def apply_task_configs(
        self, managed: ManagedConnector, configs: list[dict[str, str]], force: bool
    ) -> None:
        """As the distributed herder, except on a follower that has no internal server:
        Kafka's error, then another attempt after an exponential backoff."""
        name = managed.name
        changed = (
            force
            or configs != self.snapshot.all_task_configs(name)
            or name in self.snapshot.inconsistent_connectors
        )
        if self.internal_rest or self.is_leader() or not changed:
            self.backoffs.pop(name, None)
            super().apply_task_configs(managed, configs, force)
            return
        managed.applied_config = None  # so a later tick asks the connector again
        previous = self.backoffs.get(name, (0.0, RECONFIGURE_BACKOFF_INITIAL_S / 2))[1]
        delay = min(previous * 2, RECONFIGURE_BACKOFF_MAX_S)
        self.backoffs[name] = (time.monotonic() + delay, delay)
        log.error("Failed to reconfigure connector's tasks (%s), retrying after backoff. %s "
                  "(leader: %s)", name, NO_INTERNAL_REST_MESSAGE, self.leader_url())  # fmt: skip


class InternalMirrorRest:
    """Kafka's ``InternalMirrorResource`` as an ASGI app: ``/{source}/{target}/connectors/
    {c}/tasks`` (POST) and ``.../fence`` (PUT) go to that flow's REST app (the worker's
    routes, with signature checks and forwarding to the leader installed) with the flow's
    prefix taken off the path; anything else is Kafka's 404."""

    def __init__(self) -> None:
        self.flows: dict[tuple[str, str], Any] = {}

    def add(self, pair: SourceAndTarget, herder: DistributedHerder) -> None:
        from sparkcat.runtime.distributed.forwarding import install
        from sparkcat.runtime.rest.app import create_app

        app = create_app(herder)
        install(app, herder)
        self.flows[(pair.source, pair.target)] = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        raw = scope.get("raw_path") or scope["path"].encode()
        parts = raw.decode("latin-1").split("?", 1)[0].split("/", 3)
        # ["", source, target, "connectors/{c}/tasks"]
        if len(parts) < 4 or not _internal(scope["method"], parts[3]):
            await _not_found("Not Found", scope, receive, send)
            return
        source, target = unquote(parts[1]), unquote(parts[2])
        app = self.flows.get((source, target))
        if app is None:
            message = (f"No replication flow found for source '{source}' and target "
                       f"'{target}'")  # fmt: skip
            await _not_found(message, scope, receive, send)
            return
        inner = "/" + parts[3]
        scope = dict(scope, path=unquote(inner), raw_path=inner.encode("latin-1"))
        await app(scope, receive, send)


def _internal(method: str, rest: str) -> bool:
    pieces = rest.rstrip("/").split("/")
    if len(pieces) != 3 or pieces[0] != "connectors" or not pieces[1]:
        return False
    return (method, pieces[2]) in (("POST", "tasks"), ("PUT", "fence"))


async def _not_found(message: str, scope: Scope, receive: Receive, send: Send) -> None:
    from sparkcat.runtime.rest.app import error_response

    await error_response(404, message)(scope, receive, send)


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to start or stop: acknowledge the server's lifespan events."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = [
    "NOT_USED_URL",
    "NO_INTERNAL_REST_MESSAGE",
    "InternalMirrorRest",
    "MirrorHerder",
    "flow_path",
]
