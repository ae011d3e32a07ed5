"""Config keys of the MirrorMaker 2 connectors, with Kafka's names and defaults.

Kafka's ``MirrorConnectorConfig`` (shared keys), ``MirrorSourceConfig``,
``MirrorCheckpointConfig`` and ``MirrorHeartbeatConfig``. Client settings for the two
clusters are given as ``source.cluster.<key>``/``target.cluster.<key>`` (bootstrap servers,
security) and ``[source.|target.]{consumer,producer,admin}.<key>``; see :mod:`.kafka_io`.
"""

from __future__ import annotations

from typing import Any

from sparkcat import __version__
from sparkcat.api.config import AbstractConfig, ConfigDef, ConfigType, Importance, ValidString
from sparkcat.connectors.mirror.policy import (
    DEFAULT_POLICY_CLASS,
    INTERNAL_TOPIC_SEPARATOR_ENABLED,
    REPLICATION_POLICY_CLASS,
    REPLICATION_POLICY_SEPARATOR,
    SEPARATOR_DEFAULT,
    ReplicationPolicy,
    replication_policy,
)

VERSION = __version__

ENABLED = "enabled"
SOURCE_CLUSTER_ALIAS = "source.cluster.alias"
SOURCE_CLUSTER_ALIAS_DEFAULT = "source"
TARGET_CLUSTER_ALIAS = "target.cluster.alias"
TARGET_CLUSTER_ALIAS_DEFAULT = "target"
ADMIN_TASK_TIMEOUT_MILLIS = "admin.timeout.ms"
FORWARDING_ADMIN_CLASS = "forwarding.admin.class"
TOPIC_FILTER_CLASS = "topic.filter.class"
GROUP_FILTER_CLASS = "group.filter.class"
CONFIG_PROPERTY_FILTER_CLASS = "config.property.filter.class"
OFFSET_SYNCS_TOPIC_LOCATION = "offset-syncs.topic.location"
EMIT_OFFSET_SYNCS_ENABLED = "emit.offset-syncs.enabled"
TASK_INDEX = "task.index"

TOPICS = "topics"
TOPICS_DEFAULT = ".*"
TOPICS_EXCLUDE = "topics.exclude"
TOPICS_EXCLUDE_DEFAULT = ".*[\\-\\.]internal, .*\\.replica, __.*"
CONFIG_PROPERTIES_EXCLUDE = "config.properties.exclude"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (
    "follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, "
    "message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, "
    "unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas"
)
CONSUMER_POLL_TIMEOUT_MILLIS = "consumer.poll.timeout.ms"
REFRESH_TOPICS_ENABLED = "refresh.topics.enabled"
REFRESH_TOPICS_INTERVAL_SECONDS = "refresh.topics.interval.seconds"
SYNC_TOPIC_CONFIGS_ENABLED = "sync.topic.configs.enabled"
SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS = "sync.topic.configs.interval.seconds"
SYNC_TOPIC_ACLS_ENABLED = "sync.topic.acls.enabled"
SYNC_TOPIC_ACLS_INTERVAL_SECONDS = "sync.topic.acls.interval.seconds"
REPLICATION_FACTOR = "replication.factor"
OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR = "offset-syncs.topic.replication.factor"
OFFSET_LAG_MAX = "offset.lag.max"
HEARTBEATS_REPLICATION_ENABLED = "heartbeats.replication.enabled"
TASK_TOPIC_PARTITIONS = "task.assigned.partitions"

GROUPS = "groups"
GROUPS_DEFAULT = ".*"
GROUPS_EXCLUDE = "groups.exclude"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
CHECKPOINTS_TOPIC_REPLICATION_FACTOR = "checkpoints.topic.replication.factor"
REFRESH_GROUPS_ENABLED = "refresh.groups.enabled"
REFRESH_GROUPS_INTERVAL_SECONDS = "refresh.groups.interval.seconds"
EMIT_CHECKPOINTS_ENABLED = "emit.checkpoints.enabled"
EMIT_CHECKPOINTS_INTERVAL_SECONDS = "emit.checkpoints.interval.seconds"
SYNC_GROUP_OFFSETS_ENABLED = "sync.group.offsets.enabled"
SYNC_GROUP_OFFSETS_INTERVAL_SECONDS = "sync.group.offsets.interval.seconds"
TASK_CONSUMER_GROUPS = "task.assigned.groups"

EMIT_HEARTBEATS_ENABLED = "emit.heartbeats.enabled"
EMIT_HEARTBEATS_INTERVAL_SECONDS = "emit.heartbeats.interval.seconds"
HEARTBEATS_TOPIC_REPLICATION_FACTOR = "heartbeats.topic.replication.factor"

_B, _S, _I, _L, _SH, _LIST, _C = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.SHORT,
    ConfigType.LIST,
    ConfigType.CLASS,
)
_LOW, _MEDIUM, _HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH
_LOCATION = ValidString.in_(SOURCE_CLUSTER_ALIAS_DEFAULT, TARGET_CLUSTER_ALIAS_DEFAULT)

# (name, type, default, importance, documentation); Kafka's wording, shortened.
_Key = tuple[str, ConfigType, Any, Importance, str]
_BASE: list[_Key] = [
    (ENABLED, _B, True, _LOW, "Whether to replicate source->target."),
    (SOURCE_CLUSTER_ALIAS, _S, None, _HIGH, "Alias of source cluster"),
    (TARGET_CLUSTER_ALIAS, _S, TARGET_CLUSTER_ALIAS_DEFAULT, _HIGH, "Alias of target cluster."),
    (ADMIN_TASK_TIMEOUT_MILLIS, _L, 60000, _LOW, "Timeout for administrative tasks."),
    (REPLICATION_POLICY_CLASS, _C, DEFAULT_POLICY_CLASS, _LOW,
     "Class which defines the remote topic naming convention."),
    (REPLICATION_POLICY_SEPARATOR, _S, SEPARATOR_DEFAULT, _LOW,
     "Separator used in remote topic naming convention."),
    (INTERNAL_TOPIC_SEPARATOR_ENABLED, _B, True, _LOW,
     "Whether to use replication.policy.separator in the names of the checkpoints and "
     "offset-syncs topics."),
    (FORWARDING_ADMIN_CLASS, _C, "org.apache.kafka.clients.admin.ForwardingAdmin", _LOW,
     "Accepted for compatibility; sparkcat always uses its own admin client."),
    ("security.protocol", _S, "PLAINTEXT", _MEDIUM, "Protocol used to communicate with brokers."),
]  # fmt: skip

_OFFSET_SYNCS: list[_Key] = [
    (OFFSET_SYNCS_TOPIC_LOCATION, _S, SOURCE_CLUSTER_ALIAS_DEFAULT, _LOW,
     "The location (source/target) of the offset-syncs topic."),
    (TOPIC_FILTER_CLASS, _C, "org.apache.kafka.connect.mirror.DefaultTopicFilter", _LOW,
     "TopicFilter to use. Selects topics to replicate."),
    (CONSUMER_POLL_TIMEOUT_MILLIS, _L, 1000, _LOW, "Timeout when polling source cluster."),
]  # fmt: skip

_SOURCE: list[_Key] = [
    (TOPICS, _LIST, TOPICS_DEFAULT, _HIGH, "Topics to replicate. Supports comma-separated "
     "topic names and regexes."),
    (TOPICS_EXCLUDE, _LIST, TOPICS_EXCLUDE_DEFAULT, _HIGH, "Excluded topics. Supports "
     "comma-separated topic names and regexes. Excludes take precedence over includes."),
    (CONFIG_PROPERTIES_EXCLUDE, _LIST, CONFIG_PROPERTIES_EXCLUDE_DEFAULT, _HIGH,
     "Topic config properties that should not be replicated."),
    (CONFIG_PROPERTY_FILTER_CLASS, _C,
     "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter", _LOW,
     "ConfigPropertyFilter to use. Selects topic config properties to replicate."),
    (REFRESH_TOPICS_ENABLED, _B, True, _LOW, "Whether to periodically check for new topics "
     "and partitions."),
    (REFRESH_TOPICS_INTERVAL_SECONDS, _L, 600, _LOW, "Frequency of topic refresh."),
    (SYNC_TOPIC_CONFIGS_ENABLED, _B, True, _LOW, "Whether to copy topic configurations "
     "from the source cluster (at topic creation)."),
    (SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS, _L, 600, _LOW, "Frequency of topic config sync."),
    (SYNC_TOPIC_ACLS_ENABLED, _B, True, _LOW, "Accepted; topic ACLs are not synced."),
    (SYNC_TOPIC_ACLS_INTERVAL_SECONDS, _L, 600, _LOW, "Frequency of topic ACL sync."),
    (REPLICATION_FACTOR, _I, 2, _LOW, "Replication factor for newly created remote topics."),
    (OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, _SH, 3, _LOW,
     "Replication factor for offset-syncs topic."),
    (OFFSET_LAG_MAX, _L, 100, _LOW, "How out-of-sync a remote partition can be before it is "
     "resynced."),
    (EMIT_OFFSET_SYNCS_ENABLED, _B, True, _LOW, "Whether to store the new offset of the "
     "replicated records in offset-syncs topic or not."),
    (HEARTBEATS_REPLICATION_ENABLED, _B, True, _LOW, "Whether to replicate the heartbeats "
     "topics even when the topic filter does not include them."),
]  # fmt: skip

_CHECKPOINT: list[_Key] = [
    (GROUPS, _LIST, GROUPS_DEFAULT, _HIGH, "Consumer groups to replicate. Supports "
     "comma-separated group IDs and regexes."),
    (GROUPS_EXCLUDE, _LIST, GROUPS_EXCLUDE_DEFAULT, _HIGH, "Exclude groups. Supports "
     "comma-separated group IDs and regexes. Excludes take precedence over includes."),
    (GROUP_FILTER_CLASS, _C, "org.apache.kafka.connect.mirror.DefaultGroupFilter", _LOW,
     "GroupFilter to use. Selects consumer groups to replicate."),
    (REFRESH_GROUPS_ENABLED, _B, True, _LOW, "Whether to periodically check for new "
     "consumer groups."),
    (REFRESH_GROUPS_INTERVAL_SECONDS, _L, 600, _LOW, "Frequency of group refresh."),
    (EMIT_CHECKPOINTS_ENABLED, _B, True, _LOW, "Whether to replicate consumer offsets to "
     "target cluster."),
    (EMIT_CHECKPOINTS_INTERVAL_SECONDS, _L, 60, _LOW, "Frequency of checkpoints."),
    (SYNC_GROUP_OFFSETS_ENABLED, _B, False, _LOW, "Whether to periodically write the "
     "translated offsets to __consumer_offsets topic in target cluster, as long as no active "
     "consumers in that group are connected to the target cluster"),
    (SYNC_GROUP_OFFSETS_INTERVAL_SECONDS, _L, 60, _LOW, "Frequency of consumer group offset "
     "sync."),
    (CHECKPOINTS_TOPIC_REPLICATION_FACTOR, _SH, 3, _LOW, "Replication factor for "
     "checkpoints topic."),
]  # fmt: skip

_HEARTBEAT: list[_Key] = [
    (EMIT_HEARTBEATS_ENABLED, _B, True, _LOW, "Whether to emit heartbeats to target cluster."),
    (EMIT_HEARTBEATS_INTERVAL_SECONDS, _L, 1, _LOW, "Frequency of heartbeats."),
    (HEARTBEATS_TOPIC_REPLICATION_FACTOR, _SH, 3, _LOW, "Replication factor for heartbeats "
     "topic."),
]  # fmt: skip


def _config_def(*groups: list[_Key]) -> ConfigDef:
    definition = ConfigDef()
    for group in groups:
        for name, kind, default, importance, doc in group:
            validator = _LOCATION if name == OFFSET_SYNCS_TOPIC_LOCATION else None
            if name == SOURCE_CLUSTER_ALIAS:
                # Required, as in Kafka: no default.
                definition.define(name, kind, importance=importance, documentation=doc)
                continue
            definition.define(name, kind, default, validator, importance, doc)
    return definition


SOURCE_CONFIG_DEF = _config_def(_BASE, _OFFSET_SYNCS, _SOURCE)
CHECKPOINT_CONFIG_DEF = _config_def(_BASE, _OFFSET_SYNCS, _CHECKPOINT)
HEARTBEAT_CONFIG_DEF = _config_def(_BASE, _HEARTBEAT)
ALL_CONFIG_NAMES = frozenset(
    set(SOURCE_CONFIG_DEF.names()) | set(CHECKPOINT_CONFIG_DEF.names())
    | set(HEARTBEAT_CONFIG_DEF.names())
)  # fmt: skip


class MirrorConfig(AbstractConfig):
    """A parsed connector or task config with Kafka's derived values."""

    def __init__(self, definition: ConfigDef, props: dict[str, str]) -> None:
        super().__init__(definition, props)
        self.props = dict(props)
        self.policy: ReplicationPolicy = replication_policy(self.originals_strings())

    @property
    def source_alias(self) -> str:
        return self.get_string(SOURCE_CLUSTER_ALIAS)

    @property
    def target_alias(self) -> str:
        return self.get_string(TARGET_CLUSTER_ALIAS)

    @property
    def enabled(self) -> bool:
        return self.get_boolean(ENABLED)

    @property
    def admin_timeout_s(self) -> float:
        return self.get_long(ADMIN_TASK_TIMEOUT_MILLIS) / 1000.0

    def interval_s(self, enabled_key: str, seconds_key: str) -> float:
        """Kafka's ``*.interval.seconds``; negative when ``*.enabled`` is false."""
        return float(self.get_long(seconds_key)) if self.get_boolean(enabled_key) else -1.0

    @property
    def offset_syncs_on_source(self) -> bool:
        return self.get_string(OFFSET_SYNCS_TOPIC_LOCATION) == SOURCE_CLUSTER_ALIAS_DEFAULT

    def offset_syncs_topic(self) -> str:
        """On the source cluster it is named after the target, and the other way round."""
        other = self.target_alias if self.offset_syncs_on_source else self.source_alias
        return self.policy.offset_syncs_topic(other)

    def checkpoints_topic(self) -> str:
        return self.policy.checkpoints_topic(self.source_alias)

    def entity_label(self) -> str:
        return f"{self.source_alias}->{self.target_alias}|{self.props.get('name', '')}"


__all__ = [
    "ALL_CONFIG_NAMES",
    "CHECKPOINT_CONFIG_DEF",
    "HEARTBEAT_CONFIG_DEF",
    "SOURCE_CONFIG_DEF",
    "VERSION",
    "MirrorConfig",
]
