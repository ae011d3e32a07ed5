"""MirrorCheckpointConnector (Kafka's ``org.apache.kafka.connect.mirror``): translates the
committed offsets of the source cluster's consumer groups into checkpoints on the target.

In the worker's main process it creates ``<source>.checkpoints.internal`` on the target
(one partition, compacted) and lists the source's consumer groups that pass the group
filter and have committed offsets for at least one topic that passes the topic filter;
tasks share the groups. Every ``refresh.groups.interval.seconds`` it looks again and asks
for new task configs when the set changed. No groups: no tasks, as in Kafka.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef
from sparkcat.api.connector import Config, Task
from sparkcat.api.source import SourceConnector
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.checkpoint_task import MirrorCheckpointTask, group_offsets
from sparkcat.connectors.mirror.config import (
    CHECKPOINT_CONFIG_DEF,
    CHECKPOINTS_TOPIC_REPLICATION_FACTOR,
    EMIT_CHECKPOINTS_ENABLED,
    EMIT_CHECKPOINTS_INTERVAL_SECONDS,
    EMIT_OFFSET_SYNCS_ENABLED,
    ENABLED,
    REFRESH_GROUPS_ENABLED,
    REFRESH_GROUPS_INTERVAL_SECONDS,
    TASK_CONSUMER_GROUPS,
    TASK_INDEX,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.filters import GroupFilter, TopicFilter

log = logging.getLogger(__name__)


def find_consumer_groups(admin: Any, config: MirrorConfig) -> list[str]:
    """The source groups to checkpoint (Kafka's ``findConsumerGroups``), sorted."""
    group_filter = GroupFilter.from_config(config)
    topic_filter = TopicFilter.from_config(config)
    listing = admin.list_consumer_groups(request_timeout=config.admin_timeout_s)
    result = listing.result(timeout=config.admin_timeout_s)
    groups = []
    for listed in result.valid:
        group = listed.group_id
        if not group_filter(group):
            continue
        offsets = group_offsets(admin, group, config.admin_timeout_s)
        if any(topic_filter(tp.topic) for tp in offsets):
            groups.append(group)
    return sorted(groups)


class MirrorCheckpointConnector(SourceConnector):
    """Emits checkpoints source -> target; see the module docs."""

    def __init__(self) -> None:
        self._config: MirrorConfig | None = None
        self._groups: list[str] = []
        self._admin: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return CHECKPOINT_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return MirrorCheckpointTask

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        result = super().validate(connector_configs)
        if connector_configs.get(ENABLED, "true") == "false":
            return result
        problems = {
            EMIT_CHECKPOINTS_ENABLED: f"MirrorCheckpointConnector can't run with "
            f"{EMIT_CHECKPOINTS_ENABLED} set to false",
            EMIT_OFFSET_SYNCS_ENABLED: "MirrorCheckpointConnector can't run without offset syncs",
        }
        for value in result:
            if value.name in problems and connector_configs.get(value.name) == "false":
                value.add_error_message(problems[value.name])
        return result

    def start(self, props: dict[str, str]) -> None:
        config = MirrorConfig(CHECKPOINT_CONFIG_DEF, props)
        self._config = config
        self._stop.clear()
        if not config.enabled:
            return
        label = config.entity_label()
        self._admin = kafka_io.new_admin(
            kafka_io.client_config(props, "source", "admin", label + "|checkpoint-source-admin")
        )
        target_admin = kafka_io.new_admin(
            kafka_io.client_config(props, "target", "admin", label + "|checkpoint-target-admin")
        )
        kafka_io.create_compacted_topic(
            target_admin,
            config.checkpoints_topic(),
            config.get_short(CHECKPOINTS_TOPIC_REPLICATION_FACTOR),
            config.admin_timeout_s,
        )
        self._groups = find_consumer_groups(self._admin, config)
        interval = config.interval_s(REFRESH_GROUPS_ENABLED, REFRESH_GROUPS_INTERVAL_SECONDS)
        if interval > 0:
            self._refresher = threading.Thread(
                target=self._refresh_loop, args=(config, interval), daemon=True,
                name=f"mm2-refresh-groups-{label}",
            )  # fmt: skip
            self._refresher.start()

    def _refresh_loop(self, config: MirrorConfig, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                groups = find_consumer_groups(self._admin, config)
            except Exception:
                log.warning("Could not list the groups of %s", config.entity_label(), exc_info=True)
                continue
            with self._lock:
                changed, self._groups = groups != self._groups, groups
            if changed and not self._stop.is_set():
                self.context.request_task_reconfiguration()

    def stop(self) -> None:
        self._stop.set()
        refresher, self._refresher = self._refresher, None
        if refresher is not None:
            refresher.join(timeout=5.0)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        with self._lock:
            groups = list(self._groups)
        if config is None or not config.enabled or not groups:
            return []
        if config.interval_s(EMIT_CHECKPOINTS_ENABLED, EMIT_CHECKPOINTS_INTERVAL_SECONDS) < 0:
            return []
        count = min(max_tasks, len(groups))
        # Kafka's ConnectorUtils.groupPartitions: contiguous, nearly equal slices.
        size, extra = divmod(len(groups), count)
        configs, start = [], 0
        for index in range(count):
            end = start + size + (1 if index < extra else 0)
            configs.append(
                {
                    **config.props,
                    TASK_CONSUMER_GROUPS: ",".join(groups[start:end]),
                    TASK_INDEX: str(index),
                }
            )
            start = end
        return configs


__all__ = ["MirrorCheckpointConnector", "find_consumer_groups"]
