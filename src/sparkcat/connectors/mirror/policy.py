"""Replication policies: how remote topics are named (Kafka's ``ReplicationPolicy``).

:class:`DefaultReplicationPolicy` names a topic ``t`` of cluster ``A`` ``A.t`` on the target
(``replication.policy.separator`` replaces the dot); :class:`IdentityReplicationPolicy`
keeps the name (except for heartbeats, so that they still show where they came from). Both
behave as Kafka's classes of the same names, including Java's ``String.split`` edge cases.

``replication.policy.class`` takes Kafka's class names, the simple names, or a Python class
(``module:Class`` or a dotted path) that subclasses :class:`ReplicationPolicy`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import Any

from sparkcat.api.errors import ConfigError

log = logging.getLogger(__name__)

REPLICATION_POLICY_CLASS = "replication.policy.class"
REPLICATION_POLICY_SEPARATOR = "replication.policy.separator"
INTERNAL_TOPIC_SEPARATOR_ENABLED = "replication.policy.internal.topic.separator.enabled"
SEPARATOR_DEFAULT = "."
HEARTBEATS_TOPIC = "heartbeats"
_PACKAGE = "org.apache.kafka.connect.mirror."
DEFAULT_POLICY_CLASS = _PACKAGE + "DefaultReplicationPolicy"
IDENTITY_POLICY_CLASS = _PACKAGE + "IdentityReplicationPolicy"


class ReplicationPolicy:
    """The naming contract shared by the connectors and :mod:`.client`.

    Subclasses implement :meth:`format_remote_topic`, :meth:`topic_source` and
    :meth:`upstream_topic`; the other methods have Kafka's default behaviour.
    """

    def configure(self, props: Mapping[str, Any]) -> None:
        """Called once with the connector (or client) config."""

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        raise NotImplementedError

    def topic_source(self, topic: str) -> str | None:
        """The alias of the cluster ``topic`` was replicated from, or ``None`` (a local topic)."""
        raise NotImplementedError

    def upstream_topic(self, topic: str) -> str | None:
        """The name of ``topic`` on the cluster it was replicated from, or ``None``."""
        raise NotImplementedError

    def original_topic(self, topic: str) -> str:
        """The name of ``topic`` on the cluster it was first written to (follows all hops)."""
        seen: set[str] = set()
        while True:
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic or topic in seen:
                return topic
            seen.add(topic)
            topic = upstream

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return f"mm2-offset-syncs.{cluster_alias}.internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.heartbeats_topic() == self.original_topic(topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(".checkpoints.internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(".internal")

    def is_internal_topic(self, topic: str) -> bool:
        kafka_internal = topic.startswith(("__", "."))
        connect_internal = topic.endswith(("-internal", ".internal"))
        return self.is_mm2_internal_topic(topic) or kafka_internal or connect_internal


def _java_split(text: str, separator: str) -> list[str]:
    # Java's String.split drops trailing empty strings; "a." is one part, not two.
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts if parts or not text else []


class DefaultReplicationPolicy(ReplicationPolicy):
    """``<source alias><separator><topic>``; internal topics use the separator too unless
    ``replication.policy.internal.topic.separator.enabled=false``."""

    def __init__(self) -> None:
        self.separator = SEPARATOR_DEFAULT
        self.internal_separator_enabled = True

    def configure(self, props: Mapping[str, Any]) -> None:
        if REPLICATION_POLICY_SEPARATOR in props:
            self.separator = str(props[REPLICATION_POLICY_SEPARATOR])
            if INTERNAL_TOPIC_SEPARATOR_ENABLED in props:
                enabled = str(props[INTERNAL_TOPIC_SEPARATOR_ENABLED]).strip().lower()
                self.internal_separator_enabled = enabled == "true"

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        return source_cluster_alias + self.separator + topic

    def topic_source(self, topic: str) -> str | None:
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = self.topic_source(topic)
        if source is None:
            return None
        return topic[len(source) + len(self.separator) :]

    def _internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def _internal_suffix(self) -> str:
        return self._internal_separator() + "internal"

    def _checkpoints_suffix(self) -> str:
        return self._internal_separator() + "checkpoints" + self._internal_suffix()

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return (
            "mm2-offset-syncs"
            + self._internal_separator()
            + cluster_alias
            + self._internal_suffix()
        )

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return cluster_alias + self._checkpoints_suffix()

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(self._checkpoints_suffix())

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(self._internal_suffix())


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Remote topics keep their names, so cycles cannot be detected from names: use it
    only for one-way flows (migrations). Heartbeats are still renamed, as in Kafka."""

    def __init__(self) -> None:
        super().__init__()
        self.source_cluster_alias: str | None = None

    def configure(self, props: Mapping[str, Any]) -> None:
        super().configure(props)
        if "source.cluster.alias" in props:
            self.source_cluster_alias = str(props["source.cluster.alias"])

    def _looks_like_heartbeat(self, topic: str | None) -> bool:
        return topic is not None and topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_cluster_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self.source_cluster_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


_BUILTIN = {
    DEFAULT_POLICY_CLASS: DefaultReplicationPolicy,
    "DefaultReplicationPolicy": DefaultReplicationPolicy,
    IDENTITY_POLICY_CLASS: IdentityReplicationPolicy,
    "IdentityReplicationPolicy": IdentityReplicationPolicy,
}


def replication_policy(props: Mapping[str, Any]) -> ReplicationPolicy:
    """The configured policy of ``props`` (``replication.policy.class``), configured."""
    name = str(props.get(REPLICATION_POLICY_CLASS) or DEFAULT_POLICY_CLASS).strip()
    policy_class = _BUILTIN.get(name) or _import(name)
    policy = policy_class()
    policy.configure(props)
    return policy


def _import(name: str) -> type[ReplicationPolicy]:
    module_name, _, attr = name.partition(":") if ":" in name else name.rpartition(".")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(
            f"Invalid value {name} for configuration {REPLICATION_POLICY_CLASS}: Class not found"
        ) from exc
    if not (isinstance(found, type) and issubclass(found, ReplicationPolicy)):
        raise ConfigError(
            f"Invalid value {name} for configuration {REPLICATION_POLICY_CLASS}: "
            "not a ReplicationPolicy"
        )
    return found


__all__ = [
    "DEFAULT_POLICY_CLASS",
    "IDENTITY_POLICY_CLASS",
    "DefaultReplicationPolicy",
    "IdentityReplicationPolicy",
    "ReplicationPolicy",
    "replication_policy",
]
