"""MirrorHeartbeatConnector (Kafka's ``org.apache.kafka.connect.mirror``): one task that
writes a ``Heartbeat`` to the target's ``heartbeats`` topic every
``emit.heartbeats.interval.seconds``. Replicated onward by MirrorSourceConnector, the
heartbeats tell the target which clusters are upstream of it and how many hops away.

Like Kafka's, it runs regardless of ``enabled`` (dedicated mode relies on that) and creates
the heartbeats topic (one partition, compacted) when it starts.
"""

from __future__ import annotations

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Task
from sparkcat.api.source import ExactlyOnceSupport, SourceConnector
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.config import (
    EMIT_HEARTBEATS_ENABLED,
    EMIT_HEARTBEATS_INTERVAL_SECONDS,
    HEARTBEAT_CONFIG_DEF,
    HEARTBEATS_TOPIC_REPLICATION_FACTOR,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.heartbeat_task import MirrorHeartbeatTask


class MirrorHeartbeatConnector(SourceConnector):
    """Emits heartbeats source -> target; see the module docs."""

    def __init__(self) -> None:
        self._config: MirrorConfig | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return HEARTBEAT_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return MirrorHeartbeatTask

    def start(self, props: dict[str, str]) -> None:
        config = MirrorConfig(HEARTBEAT_CONFIG_DEF, props)
        self._config = config
        admin = kafka_io.new_admin(
            kafka_io.client_config(
                props, "target", "admin", config.entity_label() + "|heartbeats-target-admin"
            )
        )
        kafka_io.create_compacted_topic(
            admin,
            config.policy.heartbeats_topic(),
            config.get_short(HEARTBEATS_TOPIC_REPLICATION_FACTOR),
            config.admin_timeout_s,
        )

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None:
            return []
        if config.interval_s(EMIT_HEARTBEATS_ENABLED, EMIT_HEARTBEATS_INTERVAL_SECONDS) < 0:
            return []
        return [dict(config.props)]

    def exactly_once_support(self, config: object) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED


__all__ = ["MirrorHeartbeatConnector"]
