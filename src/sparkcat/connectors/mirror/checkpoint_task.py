"""MirrorCheckpointTask: checkpoints for its consumer groups, and (optionally) their
translated offsets committed on the target.

At the start of each lease the task reads the offset-syncs topic (see
:mod:`.offset_sync`) and its own checkpoints topic to their ends. Every
``emit.checkpoints.interval.seconds`` (measured from the newest checkpoint record, so the
pace holds across leases) it lists each group's committed offsets on the source, translates
those of topics that pass the topic filter, and emits a ``Checkpoint`` per partition whose
translation is new: the downstream offset moved forward, or the group rewound upstream.
Checkpoints name the remote topic (``A.t``; a topic that came from the target gets its
original name back), as Kafka's do.

With ``sync.group.offsets.enabled`` the latest checkpoints are also committed to the same
group on the target, only forward, and only to a group that is idle there: the groups are
described on the target first and only ``Empty`` or ``Dead`` (unknown) ones get offsets.
Kafka's task also sends offsets for a group with members and relies on the broker to refuse
them; not every Kafka-protocol broker does, and an active consumer's position must never be
moved under it, so such a group is skipped here.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from sparkcat.api.data import BYTES_SCHEMA
from sparkcat.api.records import SourceRecord, TopicPartition
from sparkcat.api.source import SourceTask
from sparkcat.connectors.mirror import kafka_io
from sparkcat.connectors.mirror.config import (
    CHECKPOINT_CONFIG_DEF,
    EMIT_CHECKPOINTS_ENABLED,
    EMIT_CHECKPOINTS_INTERVAL_SECONDS,
    SYNC_GROUP_OFFSETS_ENABLED,
    SYNC_GROUP_OFFSETS_INTERVAL_SECONDS,
    TASK_CONSUMER_GROUPS,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.filters import TopicFilter
from sparkcat.connectors.mirror.formats import Checkpoint
from sparkcat.connectors.mirror.offset_sync import OffsetSyncStore

log = logging.getLogger(__name__)

_MAX_WAIT_S = 1.0


_IDLE = frozenset({ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD})


def idle_groups(admin: Any, groups: list[str], timeout_s: float) -> set[str]:
    """Those of ``groups`` without members on ``admin``'s cluster (``Empty``, or ``Dead``:
    not known there); a group that cannot be described counts as busy."""
    if not groups:
        return set()
    idle = set()
    futures = admin.describe_consumer_groups(groups, request_timeout=timeout_s)
    for group, future in futures.items():
        try:
            state = future.result(timeout=timeout_s).state
        except KafkaException as exc:
            log.warning("Could not describe group %s on the target: %s", group, exc)
            continue
        if state in _IDLE:
            idle.add(group)
        else:
            log.info("Not syncing the offsets of group %s: it is %s on the target "
                     "(consumers are using it)", group, state.name)  # fmt: skip
    return idle


def group_offsets(
    admin: Any, group: str, timeout_s: float
) -> dict[TopicPartition, tuple[int, str]]:
    """The committed ``(offset, metadata)`` of ``group`` per partition (none: ``{}``)."""
    request = [ConsumerGroupTopicPartitions(group)]
    future = admin.list_consumer_group_offsets(request, request_timeout=timeout_s)[group]
    result = future.result(timeout=timeout_s)
    return {
        TopicPartition(tp.topic, tp.partition): (tp.offset, tp.metadata or "")
        for tp in result.topic_partitions or []
        if tp.offset >= 0 and tp.error is None
    }


class MirrorCheckpointTask(SourceTask):
    """Emits checkpoints for ``task.assigned.groups``; see the module docs."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._config: MirrorConfig | None = None
        self._groups: list[str] = []
        self._syncs = OffsetSyncStore()
        self._checkpoints: dict[str, dict[TopicPartition, Checkpoint]] = {}
        self._source_admin: Any = None
        self._target_admin: Any = None
        self._topic_filter: TopicFilter | None = None
        self._interval_s = 60.0
        self._next_due = 0.0  # wall clock, seconds
        self._sync_interval_s = -1.0
        self._next_sync = 0.0

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = self._config = MirrorConfig(CHECKPOINT_CONFIG_DEF, props)
        self._groups = [g for g in props.get(TASK_CONSUMER_GROUPS, "").split(",") if g]
        self._topic_filter = TopicFilter.from_config(config)
        self._interval_s = config.interval_s(
            EMIT_CHECKPOINTS_ENABLED, EMIT_CHECKPOINTS_INTERVAL_SECONDS
        )
        self._sync_interval_s = config.interval_s(
            SYNC_GROUP_OFFSETS_ENABLED, SYNC_GROUP_OFFSETS_INTERVAL_SECONDS
        )
        label, timeout = config.entity_label(), config.admin_timeout_s
        self._source_admin = kafka_io.new_admin(
            kafka_io.client_config(props, "source", "admin", label + "|checkpoint-source-admin")
        )
        self._target_admin = kafka_io.new_admin(
            kafka_io.client_config(props, "target", "admin", label + "|checkpoint-target-admin")
        )
        side: kafka_io.Side = "source" if config.offset_syncs_on_source else "target"
        syncs_conf = kafka_io.client_config(
            props, side, "consumer", f"{label}|offset-syncs-{side}-consumer"
        )
        self._syncs.load(kafka_io.read_partition(syncs_conf, config.offset_syncs_topic(), timeout))
        target_conf = kafka_io.client_config(
            props, "target", "consumer", label + "|checkpoints-target-consumer"
        )
        newest = self._load_checkpoints(
            kafka_io.read_partition(target_conf, config.checkpoints_topic(), timeout)
        )
        self._next_due = newest / 1000.0 + self._interval_s if newest else 0.0

    def _load_checkpoints(self, messages: list[Any]) -> int:
        """Remember the latest checkpoint per group and partition; the newest timestamp."""
        newest, mine = 0, set(self._groups)
        for message in messages:
            try:
                checkpoint = Checkpoint.deserialize(message.key(), message.value())
            except Exception:
                continue
            if checkpoint.consumer_group_id in mine:
                newest = max(newest, message.timestamp()[1])
                group = self._checkpoints.setdefault(checkpoint.consumer_group_id, {})
                group[checkpoint.topic_partition] = checkpoint
        return newest

    def poll(self) -> list[SourceRecord] | None:
        wait = self._next_due - time.time()
        if self._interval_s < 0 or wait > 0:
            self._stopped.wait(min(max(wait, 0.0), _MAX_WAIT_S) if wait > 0 else _MAX_WAIT_S)
            if self._interval_s < 0 or time.time() < self._next_due:
                return None
        if self._stopped.is_set():
            return None
        self._next_due = time.time() + self._interval_s
        timestamp = int(time.time() * 1000)
        records = []
        for group in self._groups:
            try:
                records.extend(self._records_for_group(group, timestamp))
            except KafkaException as exc:
                log.warning("Could not checkpoint group %s: %s", group, exc)
        if self._sync_interval_s >= 0 and time.time() >= self._next_sync:
            self._next_sync = time.time() + self._sync_interval_s
            self.sync_group_offsets()
        return records or None

    def _records_for_group(self, group: str, timestamp: int) -> list[SourceRecord]:
        config = self._config
        assert config is not None and self._topic_filter is not None
        upstream = group_offsets(self._source_admin, group, config.admin_timeout_s)
        latest = self._checkpoints.setdefault(group, {})
        records = []
        for tp, (offset, metadata) in sorted(upstream.items()):
            if not self._topic_filter(tp.topic):
                continue
            downstream = self._syncs.translate_downstream(tp, offset)
            if downstream is None or downstream < 0:
                continue
            checkpoint = Checkpoint(group, self._rename(tp), offset, downstream, metadata)
            last = latest.get(checkpoint.topic_partition)
            if last is not None and not (
                offset < last.upstream_offset or downstream > last.downstream_offset
            ):
                continue
            latest[checkpoint.topic_partition] = checkpoint
            records.append(
                SourceRecord(
                    checkpoint.connect_partition(),
                    {"offset": 0},
                    config.checkpoints_topic(),
                    0,
                    BYTES_SCHEMA,
                    checkpoint.record_key(),
                    BYTES_SCHEMA,
                    checkpoint.record_value(),
                    timestamp,
                )
            )
        return records

    def _rename(self, tp: TopicPartition) -> TopicPartition:
        config = self._config
        assert config is not None
        policy = config.policy
        if policy.topic_source(tp.topic) == config.target_alias:
            return TopicPartition(policy.original_topic(tp.topic), tp.partition)
        return TopicPartition(
            policy.format_remote_topic(config.source_alias, tp.topic), tp.partition
        )

    def sync_group_offsets(self) -> None:
        """Commit the latest checkpoints to the groups on the target (see the module docs)."""
        config = self._config
        assert config is not None
        timeout = config.admin_timeout_s
        wanted_groups = [group for group, checkpoints in self._checkpoints.items() if checkpoints]
        try:
            idle = idle_groups(self._target_admin, wanted_groups, timeout)
        except KafkaException as exc:
            log.warning("Could not describe groups on %s: %s", config.target_alias, exc)
            return
        for group, checkpoints in self._checkpoints.items():
            if group not in idle:
                continue
            try:
                current = group_offsets(self._target_admin, group, timeout)
            except KafkaException as exc:
                log.warning("Could not list the offsets of group %s on the target: %s", group, exc)
                continue
            # Only forward: a consumer on the target may have gone further already.
            wanted = [
                KafkaTopicPartition(tp.topic, tp.partition, cp.downstream_offset)
                for tp, cp in sorted(checkpoints.items())
                if current.get(tp, (-1, ""))[0] < cp.downstream_offset
            ]
            if not wanted:
                continue
            request = [ConsumerGroupTopicPartitions(group, wanted)]
            try:
                future = self._target_admin.alter_consumer_group_offsets(
                    request, request_timeout=timeout
                )
                result = future[group].result(timeout=timeout)
            except KafkaException as exc:
                log.warning("Unable to sync offsets of group %s: %s", group, exc)
                continue
            # The broker refuses partition by partition (a member joined meanwhile:
            # UNKNOWN_MEMBER_ID), inside a successful response.
            refused = [tp for tp in result.topic_partitions or [] if tp.error is not None]
            if refused:
                log.warning("Unable to sync offsets of group %s (%s): consumers are probably "
                            "using it on the target", group, refused[0].error)  # fmt: skip
            else:
                log.info("Synced offsets of group %s on %s", group, config.target_alias)

    def stop(self) -> None:
        self._stopped.set()


__all__ = ["MirrorCheckpointTask", "group_offsets", "idle_groups"]
