"""Small, synchronous helpers over ``confluent_kafka.admin.AdminClient``.

Each helper waits for its result (bounded by ``timeout_s``) and raises
:class:`KafkaAdminError` (a :class:`~sparkcat.api.errors.ConnectError`) with the broker's
reason on failure. Partitions are :class:`sparkcat.api.records.TopicPartition`; any
``(topic, partition)`` tuple is accepted as input.

Two facts about the embedded broker (tansu) shape these helpers (tansu 0.6):

* a Metadata request that *names* an unknown topic creates it, so :func:`topic_partitions`
  and :func:`list_topics` only ever ask for all topics;
* ListOffsets(latest) answers the last batch's base offset + 1, not the end of the log, so
  :func:`end_offsets` reads the high watermark from fetch responses instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
)
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # not re-exported in stubs
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import TopicPartition

log = logging.getLogger(__name__)

__all__ = [
    "KafkaAdminError",
    "TopicSpec",
    "alter_group_offsets",
    "cluster_id",
    "committed_offsets",
    "delete_group",
    "describe_configs",
    "end_offsets",
    "end_offsets_probe_config",
    "ensure_topics",
    "list_topics",
    "topic_partitions",
]

_PROBE_GROUP = "sparkcat-end-offsets-probe"


class KafkaAdminError(ConnectError):
    """A Kafka admin operation failed; the message carries the broker's reason."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic to create: ``-1`` partitions/replication factor mean the broker's default."""

    name: str
    partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)


def cluster_id(worker_props: Mapping[str, Any], timeout_s: float = 5.0) -> str | None:
    """The Kafka cluster's id for a worker with these settings (``GET /`` shows it), or
    ``None`` with a WARNING when the cluster cannot say (Kafka's ``lookupKafkaClusterId``
    fails the worker instead; here the worker starts and shows null)."""
    from sparkcat.kafka.clients import admin_config

    try:
        admin = AdminClient(dict(admin_config(worker_props)))
        return str(admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s)
                   .cluster_id)  # fmt: skip
    except Exception:
        log.warning("Could not read the Kafka cluster id", exc_info=True)
        return None


def ensure_topics(
    admin: AdminClient, specs: Iterable[TopicSpec], timeout_s: float = 30.0
) -> list[str]:
    """Create the topics of ``specs`` that do not exist yet; return the names created.

    A topic that exists already (or is created concurrently: ``TOPIC_ALREADY_EXISTS``) is
    left as it is, its partitions and configs unchanged, as Kafka Connect's ``TopicAdmin``.
    """
    wanted = {spec.name: spec for spec in specs}
    missing = [spec for name, spec in wanted.items() if name not in list_topics(admin, timeout_s)]
    if not missing:
        return []
    new_topics = [
        NewTopic(
            spec.name,
            num_partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            config=dict(spec.configs),
        )
        for spec in missing
    ]
    futures = admin.create_topics(new_topics, request_timeout=timeout_s)
    created: list[str] = []
    for name, future in futures.items():
        try:
            future.result(timeout=timeout_s)
        except KafkaException as exc:
            if _code(exc) == KafkaError.TOPIC_ALREADY_EXISTS:
                continue
            raise KafkaAdminError(f"Unable to create topic '{name}': {_reason(exc)}") from exc
        created.append(name)
    return created


def list_topics(admin: AdminClient, timeout_s: float = 30.0) -> set[str]:
    """The names of all topics in the cluster (internal ones included)."""
    return set(_metadata(admin, timeout_s).topics)


def topic_partitions(
    admin: AdminClient, topic: str, timeout_s: float = 30.0
) -> list[TopicPartition]:
    """The partitions of ``topic`` in partition order; raises if the topic does not exist."""
    metadata = _metadata(admin, timeout_s).topics.get(topic)
    if metadata is None:
        raise KafkaAdminError(f"Topic '{topic}' does not exist")
    if metadata.error is not None:
        raise KafkaAdminError(f"Topic '{topic}': {metadata.error.str()}")
    return [TopicPartition(topic, p) for p in sorted(metadata.partitions)]


def describe_configs(admin: AdminClient, topic: str, timeout_s: float = 30.0) -> dict[str, str]:
    """The effective configuration of ``topic`` (every key the broker reports)."""
    resource = ConfigResource(ResourceType.TOPIC, topic)
    future = admin.describe_configs([resource], request_timeout=timeout_s)[resource]
    try:
        entries = future.result(timeout=timeout_s)
    except KafkaException as exc:
        raise KafkaAdminError(f"Unable to describe topic '{topic}': {_reason(exc)}") from exc
    return {name: entry.value for name, entry in entries.items() if entry.value is not None}


def committed_offsets(
    admin: AdminClient,
    group: str,
    partitions: Iterable[tuple[str, int]] | None = None,
    timeout_s: float = 30.0,
) -> dict[TopicPartition, int]:
    """The offsets committed by consumer group ``group``.

    Only partitions with a committed offset are in the result; ``partitions=None`` asks
    for every partition the group committed. A group that does not exist has none.
    """
    wanted = None if partitions is None else [KafkaTopicPartition(t, p) for t, p in partitions]
    request = ConsumerGroupTopicPartitions(group, wanted)
    future = admin.list_consumer_group_offsets([request], request_timeout=timeout_s)[group]
    try:
        result = future.result(timeout=timeout_s)
    except KafkaException as exc:
        if _code(exc) == KafkaError.GROUP_ID_NOT_FOUND:
            return {}
        raise KafkaAdminError(f"Unable to list offsets of group '{group}': {_reason(exc)}") from exc
    offsets: dict[TopicPartition, int] = {}
    for tp in result.topic_partitions or ():
        if tp.error is not None:
            raise KafkaAdminError(
                f"Offset of group '{group}' for {tp.topic}-{tp.partition}: {tp.error}"
            )
        if tp.offset >= 0:
            offsets[TopicPartition(tp.topic, tp.partition)] = tp.offset
    return offsets


def alter_group_offsets(
    admin: AdminClient,
    group: str,
    offsets: Mapping[tuple[str, int], int],
    timeout_s: float = 30.0,
) -> None:
    """Commit ``offsets`` for ``group``, which must have no active members.

    This is how the worker commits a sink connector's offsets for its tasks (which fetch
    with ``assign()``, not as group members) and how the offsets REST API alters them.
    """
    if not offsets:
        return
    partitions = [KafkaTopicPartition(t, p, offset) for (t, p), offset in offsets.items()]
    request = ConsumerGroupTopicPartitions(group, partitions)
    future = admin.alter_consumer_group_offsets([request], request_timeout=timeout_s)[group]
    try:
        result = future.result(timeout=timeout_s)
    except KafkaException as exc:
        raise KafkaAdminError(
            f"Unable to alter offsets of group '{group}': {_reason(exc)}"
        ) from exc
    failed = [
        f"{tp.topic}-{tp.partition}: {tp.error}" for tp in result.topic_partitions or () if tp.error
    ]
    if failed:
        raise KafkaAdminError(f"Unable to alter offsets of group '{group}': {'; '.join(failed)}")


def delete_group(admin: AdminClient, group: str, timeout_s: float = 30.0) -> bool:
    """Delete consumer group ``group``; ``False`` if it did not exist (idempotent reset)."""
    future = admin.delete_consumer_groups([group], request_timeout=timeout_s)[group]
    try:
        future.result(timeout=timeout_s)
    except KafkaException as exc:
        if _code(exc) == KafkaError.GROUP_ID_NOT_FOUND:
            return False
        raise KafkaAdminError(f"Unable to delete group '{group}': {_reason(exc)}") from exc
    return True


def end_offsets_probe_config(consumer_config: Mapping[str, str]) -> dict[str, str]:
    """A consumer config for :func:`end_offsets`, derived from any consumer config.

    Partition EOF events on (that is how the probe sees the end), a 10 ms fetch wait so
    that an empty partition answers at once, a small prefetch (only the log's tail is
    read), no commits and no static membership.
    """
    config = dict(consumer_config)
    config.pop("group.instance.id", None)
    config.setdefault("group.id", _PROBE_GROUP)
    config.update(
        {
            "enable.partition.eof": "true",
            "enable.auto.commit": "false",
            "fetch.wait.max.ms": "10",
            "fetch.queue.backoff.ms": "10",
            "queued.max.messages.kbytes": "1024",
        }
    )
    return config


def end_offsets(
    consumer_or_config: Consumer | Mapping[str, str],
    partitions: Iterable[tuple[str, int]],
    timeout_s: float = 30.0,
) -> dict[TopicPartition, int]:
    """The end offset (high watermark: the offset the next record will get) per partition.

    Correct on tansu, where ListOffsets(latest) and ``get_watermark_offsets()`` lag behind
    by up to one produce batch: the probe assigns each partition at the offset ListOffsets
    reports (at or before the true end) and reads until librdkafka reports partition EOF,
    whose offset is the high watermark of a fetch response -- the broker's own, correct,
    number. On Kafka the first fetch is already at the end; on tansu it reads at most the
    last batch (a few ms).

    ``consumer_or_config``: a consumer config (a probe consumer is created and closed), or
    a consumer built from :func:`end_offsets_probe_config` to reuse across calls; its
    assignment is replaced and removed afterwards. Unknown topics are auto-created by
    tansu: pass existing partitions only.
    """
    wanted = [TopicPartition(t, p) for t, p in partitions]
    if not wanted:
        return {}
    if isinstance(consumer_or_config, Mapping):
        owned, consumer = True, Consumer(end_offsets_probe_config(consumer_or_config))
    else:
        owned, consumer = False, consumer_or_config
    try:
        deadline = time.monotonic() + timeout_s
        starts = [_listed_end(consumer, tp, deadline) for tp in wanted]
        consumer.assign(starts)
        return _read_to_eof(consumer, set(wanted), deadline, timeout_s)
    finally:
        if owned:
            consumer.close()
        else:
            consumer.unassign()


def _listed_end(consumer: Consumer, tp: TopicPartition, deadline: float) -> KafkaTopicPartition:
    # Where to start reading: the ListOffsets answer (at or before the true end). Asked
    # explicitly because assign(OFFSET_END) lets librdkafka send it only after a ~0.5 s
    # retry timer when the leader connection is new.
    timeout = max(deadline - time.monotonic(), 0.001)
    try:
        _, high = consumer.get_watermark_offsets(
            KafkaTopicPartition(tp.topic, tp.partition), timeout=timeout, cached=False
        )
    except KafkaException as exc:
        raise KafkaAdminError(f"Unable to list offsets of {tp}: {_reason(exc)}") from exc
    return KafkaTopicPartition(tp.topic, tp.partition, max(high, 0))


def _read_to_eof(
    consumer: Consumer, pending: set[TopicPartition], deadline: float, timeout_s: float
) -> dict[TopicPartition, int]:
    result: dict[TopicPartition, int] = {}
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            missing = ", ".join(sorted(str(tp) for tp in pending))
            raise KafkaAdminError(f"Timed out after {timeout_s:g} s reading the end of {missing}")
        # consume() waits for the whole timeout unless num_messages arrive: keep it short.
        for message in consumer.consume(num_messages=10_000, timeout=min(remaining, 0.01)):
            error = message.error()
            if error is None:
                continue
            if error.code() != KafkaError._PARTITION_EOF:
                raise KafkaAdminError(f"Unable to read end offsets: {error.str()}")
            tp = TopicPartition(message.topic() or "", message.partition() or 0)
            if tp in pending:
                pending.discard(tp)
                result[tp] = message.offset() or 0
    return result


def _metadata(admin: AdminClient, timeout_s: float) -> Any:
    try:
        return admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise KafkaAdminError(f"Unable to read cluster metadata: {_reason(exc)}") from exc


def _code(exc: KafkaException) -> int | None:
    error = exc.args[0] if exc.args else None
    return error.code() if isinstance(error, KafkaError) else None


def _reason(exc: KafkaException) -> str:
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
