"""MirrorSourceConnector (Kafka's ``org.apache.kafka.connect.mirror``): replicates the
source cluster's topics into remote topics on the target cluster.

In the worker's main process the connector lists the source topics that pass the topic
filter (and are neither internal nor replicated from the target, so flows A->B and B->A
never loop), creates each missing remote topic with the source's partition count (and,
with ``sync.topic.configs.enabled``, its explicitly set configs), adds partitions when the
source grew, and creates the offset-syncs topic. Every ``refresh.topics.interval.seconds``
it looks again and asks for new task configs when the set of topic-partitions changed.
Tasks get the topic-partitions round-robin, as in Kafka.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka.admin import NewPartitions, NewTopic  # type: ignore[attr-defined]

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Task
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import TopicPartition
from sparkcat.api.source import ExactlyOnceSupport, SourceConnector
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.config import (
    EMIT_OFFSET_SYNCS_ENABLED,
    HEARTBEATS_REPLICATION_ENABLED,
    OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR,
    REFRESH_TOPICS_ENABLED,
    REFRESH_TOPICS_INTERVAL_SECONDS,
    REPLICATION_FACTOR,
    SOURCE_CONFIG_DEF,
    SYNC_TOPIC_CONFIGS_ENABLED,
    TASK_INDEX,
    TASK_TOPIC_PARTITIONS,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.filters import ConfigPropertyFilter, TopicFilter
from sparkcat.connectors.mirror.source_task import MirrorSourceTask

log = logging.getLogger(__name__)


def encode_topic_partition(tp: TopicPartition) -> str:
    """Kafka's ``TopicPartition.toString``: ``topic-partition``."""
    return f"{tp.topic}-{tp.partition}"


def decode_topic_partition(text: str) -> TopicPartition:
    topic, _, partition = text.strip().rpartition("-")
    return TopicPartition(topic, int(partition))


def is_cycle(config: MirrorConfig, topic: str) -> bool:
    """Whether ``topic`` (or a topic it was replicated from) came from the target cluster."""
    policy, seen = config.policy, set()
    while True:
        source = policy.topic_source(topic)
        if source is None:
            return False
        if source == config.target_alias:
            return True
        upstream = policy.upstream_topic(topic)
        # Identity-like policies cannot tell; stop rather than loop.
        if upstream is None or upstream == topic or upstream in seen:
            return False
        seen.add(upstream)
        topic = upstream


def should_replicate_topic(config: MirrorConfig, topic_filter: TopicFilter, topic: str) -> bool:
    """Kafka's ``MirrorSourceConnector.shouldReplicateTopic``."""
    policy = config.policy
    heartbeats = config.get_boolean(HEARTBEATS_REPLICATION_ENABLED) and policy.is_heartbeats_topic(
        topic
    )
    return (
        (topic_filter(topic) or heartbeats)
        and not policy.is_internal_topic(topic)
        and not is_cycle(config, topic)
    )


class MirrorSourceConnector(SourceConnector):
    """Replicates topics source -> target; see the module docs."""

    def __init__(self) -> None:
        self._config: MirrorConfig | None = None
        self._known: list[TopicPartition] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        self._source_admin: Any = None
        self._target_admin: Any = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return MirrorSourceTask

    def start(self, props: dict[str, str]) -> None:
        config = MirrorConfig(SOURCE_CONFIG_DEF, props)
        self._config = config
        self._stop.clear()
        if not config.enabled:
            return
        label = config.entity_label()
        self._source_admin = kafka_io.new_admin(
            kafka_io.client_config(props, "source", "admin", label + "|replication-source-admin")
        )
        self._target_admin = kafka_io.new_admin(
            kafka_io.client_config(props, "target", "admin", label + "|replication-target-admin")
        )
        self._create_offset_syncs_topic(config)
        self._known = self._refresh(config)
        interval = config.interval_s(REFRESH_TOPICS_ENABLED, REFRESH_TOPICS_INTERVAL_SECONDS)
        if interval > 0:
            self._refresher = threading.Thread(
                target=self._refresh_loop, args=(config, interval), daemon=True,
                name=f"mm2-refresh-topics-{label}",
            )  # fmt: skip
            self._refresher.start()
        log.info("Started %s with %d topic-partitions.", label, len(self._known))

    def stop(self) -> None:
        self._stop.set()
        refresher, self._refresher = self._refresher, None
        if refresher is not None:
            refresher.join(timeout=5.0)
        self._source_admin = self._target_admin = None

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        with self._lock:
            known = list(self._known)
        if config is None or not config.enabled or not known:
            return []
        count = min(max_tasks, len(known))
        assigned: list[list[TopicPartition]] = [[] for _ in range(count)]
        for index, tp in enumerate(known):
            assigned[index % count].append(tp)
        return [
            {
                **config.props,
                TASK_TOPIC_PARTITIONS: ",".join(map(encode_topic_partition, tps)),
                TASK_INDEX: str(index),
            }
            for index, tps in enumerate(assigned)
        ]

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        # Kafka: exactly-once only when the task's consumer reads committed records.
        level = config.get("source.consumer.isolation.level") or config.get(
            "consumer.isolation.level"
        )
        if level == "read_committed":
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        for partition, offset in offsets:
            if offset is None:
                continue
            for key in ("cluster", "topic"):
                if not isinstance(partition.get(key), str):
                    raise ConnectError(f"Source partition {partition} must have a string '{key}'")
            number = partition.get("partition")
            if not isinstance(number, int) or isinstance(number, bool) or number < 0:
                raise ConnectError(f"Source partition {partition} needs a 'partition' >= 0")
            value = offset.get("offset")
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConnectError(f"Offset {offset} for {partition} needs an 'offset' >= 0")
        return True

    # ----------------------------------------------------------------- topics
    def _create_offset_syncs_topic(self, config: MirrorConfig) -> None:
        if not config.get_boolean(EMIT_OFFSET_SYNCS_ENABLED):
            return
        admin = self._source_admin if config.offset_syncs_on_source else self._target_admin
        replication = config.get_short(OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)
        kafka_io.create_compacted_topic(
            admin, config.offset_syncs_topic(), replication, config.admin_timeout_s
        )

    def _refresh_loop(self, config: MirrorConfig, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                found = self._refresh(config)
            except Exception:
                log.warning(
                    "Could not refresh the topics of %s", config.entity_label(), exc_info=True
                )
                continue
            with self._lock:
                changed = set(found) != set(self._known)
                self._known = found
            if changed and not self._stop.is_set():
                log.info(
                    "Topic-partitions of %s changed: reconfiguring tasks", config.entity_label()
                )
                self.context.request_task_reconfiguration()

    def _refresh(self, config: MirrorConfig) -> list[TopicPartition]:
        """The source topic-partitions to replicate, with their remote topics made ready."""
        timeout = config.admin_timeout_s
        topic_filter = TopicFilter.from_config(config)
        source = {
            topic: count
            for topic, count in sorted(
                kafka_io.topic_partitions(self._source_admin, timeout).items()
            )
            if should_replicate_topic(config, topic_filter, topic)
        }
        target = kafka_io.topic_partitions(self._target_admin, timeout)
        remote = {
            topic: config.policy.format_remote_topic(config.source_alias, topic) for topic in source
        }
        missing = [topic for topic in source if remote[topic] not in target]
        grown = [t for t in source if remote[t] in target and source[t] > target[remote[t]]]
        self._create_remote_topics(config, missing, source)
        if grown:
            new_partitions = [NewPartitions(remote[t], source[t]) for t in grown]
            for name, future in self._target_admin.create_partitions(new_partitions).items():
                try:
                    future.result(timeout=timeout)
                    log.info("Increased size of %s", name)
                except Exception as exc:
                    log.warning("Could not create topic-partitions for %s: %s", name, exc)
        return [TopicPartition(topic, p) for topic, count in source.items() for p in range(count)]

    def _create_remote_topics(
        self, config: MirrorConfig, topics: list[str], counts: dict[str, int]
    ) -> None:
        if not topics:
            return
        timeout = config.admin_timeout_s
        configs: dict[str, dict[str, str]] = {}
        if config.get_boolean(SYNC_TOPIC_CONFIGS_ENABLED):
            keep = ConfigPropertyFilter.from_config(config)
            configs = kafka_io.topic_configs(self._source_admin, topics, keep, timeout)
        replication = config.get_int(REPLICATION_FACTOR)
        new = [
            NewTopic(
                config.policy.format_remote_topic(config.source_alias, topic),
                counts[topic],
                replication,
                config=configs.get(topic, {}),
            )
            for topic in topics
        ]
        try:
            kafka_io.create_topics(self._target_admin, new, timeout)
        except ConnectError:
            # Kafka logs and carries on: the next refresh tries again.
            log.warning("Could not create remote topics %s", [t.topic for t in new], exc_info=True)


__all__ = ["MirrorSourceConnector", "decode_topic_partition", "encode_topic_partition"]
