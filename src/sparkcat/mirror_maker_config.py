"""Kafka's ``connect-mirror-maker.properties`` resolved as ``MirrorMakerConfig`` does.

``clusters = A, B`` names the clusters; ``A.<key>`` are cluster A's settings (client keys
such as ``A.bootstrap.servers`` also become ``producer.``/``consumer.``/``admin.`` defaults);
``A->B.<key>`` configure the flow A->B (``A->B.enabled = true`` turns it on); other keys are
global. A flow source->target exists when it is enabled or heartbeats are (they are by
default), so a one-way A->B setup also runs B->A's heartbeat connector, as in Kafka.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sparkcat.api.errors import ConfigError
from sparkcat.connectors.mirror.config import ALL_CONFIG_NAMES

ENABLE_INTERNAL_REST_CONFIG = "dedicated.mode.enable.internal.rest"
LISTENERS_DEFAULT = "http://:8083"
BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")
_PACKAGE = "org.apache.kafka.connect.mirror."
_CLIENT_KEY = re.compile(r"bootstrap\.servers|security\.protocol|ssl\..*|sasl\..*")
_CLIENT_PREFIXED = re.compile(r"^(consumer|producer|admin).*")
# Framework keys every Kafka connector config defines (ConnectorConfig), kept from the file.
_CONNECTOR_KEYS = frozenset(
    {"tasks.max", "key.converter", "value.converter", "header.converter", "transforms",
     "predicates", "config.action.reload", "errors.retry.timeout", "errors.retry.delay.max.ms",
     "errors.tolerance", "errors.log.enable", "errors.log.include.messages",
     "exactly.once.support", "transaction.boundary", "max.batch.ms", "max.batch.records"}
)  # fmt: skip
_WORKER_PREFIXES = (
    "offset.storage", "config.storage", "status.storage", "key.converter", "value.converter",
    "header.converter", "task", "worker", "replication.policy", "spark.", "max.batch",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SourceAndTarget:
    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


class MirrorMakerConfig:
    """The resolved settings of an ``mm2.properties`` file."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.raw = {k: str(v) for k, v in props.items()}
        clusters = [c.strip() for c in self.raw.get("clusters", "").split(",") if c.strip()]
        if not clusters:
            raise ConfigError(
                'Missing required configuration "clusters" which has no default value.'
            )
        self.clusters = list(dict.fromkeys(clusters))

    def enable_internal_rest(self) -> bool:
        """``dedicated.mode.enable.internal.rest`` (default false): whether the nodes serve
        the internal REST endpoints through which followers reach the leader."""
        return _bool(self.raw.get(ENABLE_INTERNAL_REST_CONFIG), False)

    def internal_rest_props(self) -> dict[str, str]:
        """The internal server's settings (Kafka's ``RestServerConfig.forInternal`` over the
        file's top-level keys): ``listeners`` (default ``http://:8083``), the
        ``listeners.https.*`` TLS keys and ``rest.advertised.*``."""
        props = dict(self.raw)
        props.setdefault("listeners", LISTENERS_DEFAULT)
        props.pop("admin.listeners", None)  # the internal server has no admin resources
        return props

    def cluster_pairs(self) -> list[SourceAndTarget]:
        heartbeats = _bool(self.raw.get("emit.heartbeats.enabled"), True)
        pairs = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                prefix = f"{source}->{target}."
                enabled = _bool(self.raw.get(prefix + "enabled"), False)
                beats = _bool(self.raw.get(prefix + "emit.heartbeats.enabled"), heartbeats)
                if enabled or beats:
                    pairs.append(SourceAndTarget(source, target))
        return pairs

    def cluster_props(self, cluster: str) -> dict[str, str]:
        """``<cluster>.*`` stripped, with client keys copied to the client prefixes."""
        props = _stripped(self.raw, cluster + ".")
        for key, value in list(props.items()):
            if _CLIENT_KEY.fullmatch(key):
                for kind in ("producer", "consumer", "admin"):
                    props.setdefault(f"{kind}.{key}", value)
        for key, value in self.raw.items():
            if _CLIENT_KEY.fullmatch(key):
                for kind in ("producer", "consumer", "admin"):
                    props.setdefault(f"{kind}.{key}", value)
                props.setdefault(key, value)
        return props

    def worker_config(self, pair: SourceAndTarget) -> dict[str, str]:
        """The worker that runs ``pair``'s connectors: it produces to the target."""
        props = self.cluster_props(pair.target)
        props.update({k: v for k, v in self.raw.items() if k.startswith(_WORKER_PREFIXES)})
        props.update({k: v for k, v in self.raw.items() if k.startswith("config.providers")})
        props.setdefault("client.id", str(pair))
        props.setdefault("group.id", f"{pair.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{pair.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{pair.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{pair.source}.internal")
        for kind in ("key", "value", "header"):
            props.setdefault(f"{kind}.converter", BYTE_ARRAY)
        return props

    def connector_config(self, pair: SourceAndTarget, connector: str) -> dict[str, str]:
        """``connector``'s config for ``pair`` (Kafka's ``connectorBaseConfig``)."""
        names = ALL_CONFIG_NAMES | _CONNECTOR_KEYS
        props = {k: v for k, v in self.raw.items() if k in names}
        props.update(
            {
                k: v
                for k, v in self.raw.items()
                if k.startswith(("config.providers", "replication.policy"))
            }
        )
        for side, cluster in (("source", pair.source), ("target", pair.target)):
            cluster_props = self.cluster_props(cluster)
            for key, value in cluster_props.items():
                if _CLIENT_PREFIXED.match(key):
                    props[f"{side}.{key}"] = value
                else:
                    props[f"{side}.cluster.{key}"] = value
        props.setdefault("name", connector)
        props.setdefault("connector.class", _PACKAGE + connector)
        props.setdefault("source.cluster.alias", pair.source)
        props.setdefault("target.cluster.alias", pair.target)
        props.update(_stripped(self.raw, f"{pair}."))
        props.setdefault("enabled", "false")
        return props


def _stripped(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {
        k[len(prefix) :]: v
        for k, v in props.items()
        if k.startswith(prefix) and len(k) > len(prefix)
    }


def _bool(value: str | None, default: bool) -> bool:
    # Java's Boolean.parseBoolean: anything but "true" (any case) is false.
    return default if value is None else value.strip().lower() == "true"


__all__ = ["CONNECTORS", "ENABLE_INTERNAL_REST_CONFIG", "MirrorMakerConfig", "SourceAndTarget"]
