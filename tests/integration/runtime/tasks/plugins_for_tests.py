"""Test-only tasks for the lease tests (imported as ``plugins_for_tests:<Class>``).

Leases run in the test's own process, so the tasks record what happened to them in
module-level lists keyed by the ``events.key`` / ``sink.key`` task config.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import Any

from sparkcat.api.data import STRING_SCHEMA
from sparkcat.api.records import SinkRecord, SourceRecord, TopicPartition
from sparkcat.api.sink import SinkTask
from sparkcat.api.source import RecordMetadata, SourceTask

EVENTS: dict[str, list[tuple[int, str]]] = defaultdict(list)
"""events.key -> [(instance id, event)], in call order."""

SUNK: dict[str, list[SinkRecord]] = defaultdict(list)
"""sink.key -> records given to put()."""

COMMITTED: dict[str, list[tuple[SourceRecord, RecordMetadata | None]]] = defaultdict(list)
"""events.key -> commit_record() calls."""


class RecordingSourceTask(SourceTask):
    """Emits ``records.per.poll`` records per poll up to ``total`` (then polls return
    ``None``), source partition ``{"task": "t"}`` and offset ``{"n": i}``; values are the
    strings ``rec-<i>``. ``fail.in=start|poll`` raises there (``poll`` after
    ``fail.after.polls`` successful polls)."""

    def version(self) -> str:
        return "1.0"

    def _event(self, event: str) -> None:
        EVENTS[self._key].append((id(self), event))

    def initialize(self, context: Any) -> None:
        super().initialize(context)
        self._key = context.configs()["events.key"]
        self._event("initialize")

    def start(self, props: dict[str, str]) -> None:
        self._event("start")
        self._topic: str | None = props.get("topic")
        self._per_poll = int(props.get("records.per.poll", "10"))
        self._total = int(props.get("total", "1000000000"))
        self._fail = props.get("fail.in", "")
        self._fail_after = int(props.get("fail.after.polls", "0"))
        self._polls = 0
        self._map_values = props.get("map.values", "false") == "true"
        if self._fail == "start":
            raise RuntimeError("start failed on purpose")
        stored = self.context.offset_storage_reader().offset({"task": "t"})
        self._next = int(stored["n"]) + 1 if stored else 0

    def poll(self) -> list[SourceRecord] | None:
        self._event("poll")
        if self._fail == "poll" and self._polls >= self._fail_after:
            raise RuntimeError("poll failed on purpose")
        self._polls += 1
        if self._next >= self._total:
            time.sleep(0.01)
            return None
        records = []
        for _ in range(min(self._per_poll, self._total - self._next)):
            n = self._next
            self._next += 1
            if self._map_values:
                value: Any = {"n": n}
                schema = None
            else:
                value, schema = f"rec-{n}", STRING_SCHEMA
            records.append(
                SourceRecord({"task": "t"}, {"n": n}, self._topic, None, None, None, schema, value)  # type: ignore[arg-type]
            )
        return records

    def commit(self) -> None:
        self._event("commit")

    def stop(self) -> None:
        self._event("stop")

    def stopped(self) -> None:
        self._event("stopped")


class CommitRecordSourceTask(RecordingSourceTask):
    """Also records every ``commit_record`` call."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        COMMITTED[self._key].append((record, metadata))


class RecordingSinkTask(SinkTask):
    """Keeps what ``put`` receives in :data:`SUNK`. ``fail.in=put|start`` raises there;
    ``commit.after`` requests a commit once that many records arrived; ``rewind.to`` rewinds
    every partition to that offset in ``open``; ``approve`` limits ``pre_commit``'s offsets
    to that value."""

    def version(self) -> str:
        return "1.0"

    def _event(self, event: str) -> None:
        EVENTS[self._key].append((id(self), event))

    def start(self, props: dict[str, str]) -> None:
        self._key = props["sink.key"]
        self._event("start")
        self._fail = props.get("fail.in", "")
        self._commit_after = int(props.get("commit.after", "0"))
        self._rewind = props.get("rewind.to")
        self._approve = props.get("approve")
        if self._fail == "start":
            raise RuntimeError("start failed on purpose")

    def open(self, partitions: Collection[TopicPartition]) -> None:
        self._event(f"open {sorted(partitions)}")
        if self._rewind is not None:
            self.context.offset({tp: int(self._rewind) for tp in partitions})

    def put(self, records: list[SinkRecord]) -> None:
        if self._fail == "put" and records:
            raise RuntimeError("put failed on purpose")
        SUNK[self._key].extend(records)
        if self._commit_after and len(SUNK[self._key]) >= self._commit_after:
            self.context.request_commit()

    def pre_commit(
        self, current_offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        self._event("pre_commit")
        if self._approve is not None:
            return {tp: int(self._approve) for tp in current_offsets}
        return dict(current_offsets)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._event("close")

    def stop(self) -> None:
        self._event("stop")


def read_topic(servers: str, topic: str, expected: int, timeout_s: float = 20.0) -> list[Any]:
    """Every message of ``topic`` (all partitions, from the beginning), once ``expected``
    arrived or ``timeout_s`` passed, ordered by (partition, offset)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": servers,
            "group.id": "lease-tests-reader",
            "enable.auto.commit": "false",
            "fetch.queue.backoff.ms": "10",
        }
    )
    try:
        partitions = consumer.list_topics(timeout=10).topics[topic].partitions
        consumer.assign(
            [KafkaTopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(partitions)]
        )
        messages: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while len(messages) < expected and time.monotonic() < deadline:
            messages.extend(m for m in consumer.consume(10000, 0.2) if m.error() is None)
        # A short grace period shows extra (duplicate) messages too.
        messages.extend(m for m in consumer.consume(10000, 0.3) if m.error() is None)
        return sorted(messages, key=lambda m: (m.partition(), m.offset()))
    finally:
        consumer.close()
