"""The Python twin of Kafka's ``RemoteClusterUtils``/``MirrorClient``, for fail-over.

Point ``properties`` at the cluster you fail over *to* (``bootstrap.servers`` plus librdkafka
security settings, and ``replication.policy.class``/``replication.policy.separator`` when
not the defaults)::

    offsets = translate_offsets({"bootstrap.servers": "backup:9092"}, "primary", "orders-app")
    consumer.assign([TopicPartition(tp.topic, tp.partition, offset) for tp, offset in
                     offsets.items()])

:func:`translate_offsets` reads ``<remote alias>.checkpoints.internal`` to its end and
returns, per remote topic-partition, the last checkpointed offset of the group.
:func:`upstream_clusters` and :func:`replication_hops` look at the heartbeats topics.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.formats import Checkpoint
from sparkcat.connectors.mirror.policy import ReplicationPolicy, replication_policy

log = logging.getLogger(__name__)

_POLICY_KEYS = ("replication.policy.", "forwarding.admin.class")


class MirrorClient:
    """Reads MirrorMaker 2's topics on one cluster (Kafka's ``MirrorClient``)."""

    def __init__(self, properties: Mapping[str, Any]) -> None:
        props = {k: str(v) for k, v in properties.items()}
        self.policy: ReplicationPolicy = replication_policy(props)
        self._conf = kafka_io.to_librdkafka(
            {k: v for k, v in props.items() if not k.startswith(_POLICY_KEYS)}
        )
        self._conf.setdefault("client.id", "mirror-client")
        self._admin: Any = None

    def _topics(self, timeout_s: float = 30.0) -> set[str]:
        if self._admin is None:
            self._admin = kafka_io.new_admin(dict(self._conf))
        return set(kafka_io.topic_partitions(self._admin, timeout_s))

    def heartbeat_topics(self) -> set[str]:
        return {t for t in self._topics() if self.policy.is_heartbeats_topic(t)}

    def checkpoint_topics(self) -> set[str]:
        return {t for t in self._topics() if self.policy.is_checkpoints_topic(t)}

    def upstream_clusters(self) -> set[str]:
        clusters: set[str] = set()
        for topic in self.heartbeat_topics():
            clusters |= self._all_sources(topic)
        return clusters

    def replication_hops(self, upstream_cluster_alias: str) -> int:
        hops = [self._count_hops(t, upstream_cluster_alias) for t in self.heartbeat_topics()]
        found = [h for h in hops if h != -1]
        return min(found) if found else -1

    def remote_topics(self, source: str | None = None) -> set[str]:
        policy = self.policy
        return {
            t
            for t in self._topics()
            if not policy.is_internal_topic(t)
            and policy.topic_source(t) is not None
            and (source is None or policy.topic_source(t) == source)
        }

    def remote_consumer_offsets(
        self, consumer_group_id: str, remote_cluster_alias: str, timeout_s: float
    ) -> dict[TopicPartition, int]:
        topic = self.policy.checkpoints_topic(remote_cluster_alias)
        offsets: dict[TopicPartition, int] = {}
        for message in kafka_io.read_partition(dict(self._conf), topic, timeout_s):
            try:
                checkpoint = Checkpoint.deserialize(message.key(), message.value())
            except Exception:
                log.info("Could not deserialize record. Skipping.")
                continue
            if checkpoint.consumer_group_id == consumer_group_id:
                offsets[checkpoint.topic_partition] = checkpoint.downstream_offset
        return offsets

    def _count_hops(self, topic: str, source_alias: str) -> int:
        hops, visited = 0, set()
        current: str | None = topic
        while current is not None:
            hops += 1
            source = self.policy.topic_source(current)
            if source is None:
                return -1
            if source == source_alias:
                return hops
            if source in visited:
                return -1  # a policy that cannot prevent cycles
            visited.add(source)
            current = self.policy.upstream_topic(current)
        return -1

    def _all_sources(self, topic: str) -> set[str]:
        sources: set[str] = set()
        current: str | None = topic
        source = self.policy.topic_source(topic)
        while source is not None and source not in sources:
            sources.add(source)
            current = self.policy.upstream_topic(current) if current is not None else None
            source = self.policy.topic_source(current) if current is not None else None
        return sources


def translate_offsets(
    properties: Mapping[str, Any],
    remote_cluster_alias: str,
    consumer_group_id: str,
    timeout_s: float = 30.0,
) -> dict[TopicPartition, int]:
    """Where ``consumer_group_id`` of cluster ``remote_cluster_alias`` is, in this cluster's
    topics (Kafka's ``RemoteClusterUtils.translateOffsets``; offsets without metadata)."""
    return MirrorClient(properties).remote_consumer_offsets(
        consumer_group_id, remote_cluster_alias, timeout_s
    )


def upstream_clusters(properties: Mapping[str, Any]) -> set[str]:
    """Every cluster that replicates into this one, directly or not."""
    return MirrorClient(properties).upstream_clusters()


def replication_hops(properties: Mapping[str, Any], upstream_cluster_alias: str) -> int:
    """How many hops away ``upstream_cluster_alias`` is; ``-1`` if it is not upstream."""
    return MirrorClient(properties).replication_hops(upstream_cluster_alias)


def heartbeat_topics(properties: Mapping[str, Any]) -> set[str]:
    return MirrorClient(properties).heartbeat_topics()


def checkpoint_topics(properties: Mapping[str, Any]) -> set[str]:
    return MirrorClient(properties).checkpoint_topics()


__all__ = [
    "MirrorClient",
    "checkpoint_topics",
    "heartbeat_topics",
    "replication_hops",
    "translate_offsets",
    "upstream_clusters",
]
