"""Where each sink task reads next, and the commits to consumer group ``connect-<name>``.

The group is only a commit target: tasks read with ``assign()`` on executors, and this
driver-side consumer never subscribes (a join costs seconds on the embedded broker). Offsets
committed here are what ``kafka-consumer-groups`` shows as the lag of the sink.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaException, TopicPartition

from sparkcat.kafka import clients

log = logging.getLogger(__name__)

TopicPartitionKey = tuple[str, int]

# How often the topics a sink reads are listed again, for topics.regex and new partitions;
# while a sink has no partition at all (its topic is not created yet, typically by a source
# starting beside it) it looks every EMPTY_REFRESH_S during its first EAGER_S, then every
# second, so its first records are not seconds late (one metadata request each: cheap).
METADATA_REFRESH_S = 10.0
EMPTY_REFRESH_S = 0.2
EAGER_S = 60.0
LATE_EMPTY_REFRESH_S = 1.0
_SLACK_S = 0.05


def _topic_selector(connector_config: Mapping[str, str]) -> tuple[set[str], re.Pattern[str] | None]:
    topics = {t.strip() for t in connector_config.get("topics", "").split(",") if t.strip()}
    regex = connector_config.get("topics.regex", "").strip()
    return topics, (re.compile(regex) if regex else None)


class SinkPositions:
    """Tracks the next offset per topic-partition and commits them to the connector's group."""

    def __init__(
        self, name: str, connector_config: Mapping[str, str], worker_config: Mapping[str, str]
    ) -> None:
        self.name = name
        self._topics, self._regex = _topic_selector(connector_config)
        config = clients.consumer_config(
            worker_config,
            connector_config,
            client_id=f"connector-consumer-{name}-committer",
            group_id=clients.consumer_group_id(name),
        )
        # consumer.override.group.id, when set, has replaced connect-<name> (as in Kafka).
        self.group = config["group.id"]
        self._consumer = Consumer(config)
        self._positions: dict[TopicPartitionKey, int | None] = {}
        self._listed_at = 0.0
        self._created_at = time.monotonic()

    def refresh(self, force: bool = False) -> None:
        """List topics again (at most every METADATA_REFRESH_S) and learn new partitions."""
        now = time.monotonic()
        # The slack: a caller on the same cadence (the engine's ticker) must not miss every
        # other turn by a few milliseconds.
        if not force and now - self._listed_at < self.refresh_interval(now) - _SLACK_S:
            return
        self._listed_at = now
        # list_topics() without a topic name: naming an unknown topic makes some brokers
        # (the embedded one included) auto-create it.
        metadata = self._consumer.list_topics(timeout=10)
        new = [
            (topic, p)
            for topic, meta in metadata.topics.items()
            if meta.error is None and self._selects(topic)
            for p in meta.partitions
            if (topic, p) not in self._positions
        ]
        if not new:
            return
        committed = self._consumer.committed([TopicPartition(t, p) for t, p in new], timeout=10)
        for tp in committed:
            self._positions[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
        log.info("Sink %s reads %d topic-partition(s)", self.name, len(self._positions))

    def refresh_interval(self, now: float) -> float:
        """Seconds between two listings of the topics (see METADATA_REFRESH_S)."""
        if self._positions:
            return METADATA_REFRESH_S
        return EMPTY_REFRESH_S if now - self._created_at < EAGER_S else LATE_EMPTY_REFRESH_S

    @property
    def empty(self) -> bool:
        """No partition to read yet (the sink's topics do not exist)."""
        return not self._positions

    def _selects(self, topic: str) -> bool:
        if topic in self._topics:
            return True
        return self._regex is not None and self._regex.fullmatch(topic) is not None

    def assignment(self, tasks: int) -> list[list[tuple[str, int, int | None]]]:
        """Spread the partitions over ``tasks`` tasks (sorted round-robin, stable)."""
        per_task: list[list[tuple[str, int, int | None]]] = [[] for _ in range(tasks)]
        for i, (topic, partition) in enumerate(sorted(self._positions)):
            per_task[i % tasks].append((topic, partition, self._positions[(topic, partition)]))
        return per_task

    def commit(self, offsets: list[tuple[str, int, int]]) -> None:
        """Commit ``offsets`` (next offset to read) to the group and read from there on."""
        if not offsets:
            return
        for topic, partition, offset in offsets:
            self._positions[(topic, partition)] = offset
        tps = [TopicPartition(t, p, o) for t, p, o in offsets]
        try:
            self._consumer.commit(offsets=tps, asynchronous=False)
        except KafkaException as exc:
            # The positions above still advance, so no record is re-delivered in this run;
            # the group shows a lagging offset until the next successful commit.
            log.warning(
                "Committing offsets of sink %s to group %s failed: %s", self.name, self.group, exc
            )

    def close(self) -> None:
        self._consumer.close()
