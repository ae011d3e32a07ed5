"""SinkPositions against the real broker: how soon a sink learns its topic, and its commits."""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from tests.conftest import KafkaBroker

from sparkcat.engine import sink_positions
from sparkcat.engine.sink_positions import SinkPositions


def _create(servers: str, topic: str, partitions: int = 2) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=30)


def test_sees_a_topic_created_after_it_started_within_the_empty_refresh(
    kafka_broker: KafkaBroker, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("later")
    positions = SinkPositions("s", {"topics": topic}, {"bootstrap.servers": str(kafka_broker)})
    try:
        positions.refresh()
        assert positions.empty
        assert positions.assignment(1) == [[]]
        _create(str(kafka_broker), topic)
        # A sink without partitions lists the topics again after EMPTY_REFRESH_S, not 1 s.
        deadline = time.monotonic() + 10
        while positions.empty and time.monotonic() < deadline:
            time.sleep(sink_positions.EMPTY_REFRESH_S)
            positions.refresh()
        assert not positions.empty
        assert positions.assignment(1) == [[(topic, 0, None), (topic, 1, None)]]
        # Once it has partitions it lists them only every METADATA_REFRESH_S.
        assert positions.refresh_interval(time.monotonic()) == sink_positions.METADATA_REFRESH_S
    finally:
        positions.close()


def test_commits_are_the_next_start_offsets(
    kafka_broker: KafkaBroker, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("commit")
    _create(str(kafka_broker), topic)
    config = {"topics": topic}
    worker = {"bootstrap.servers": str(kafka_broker)}
    first = SinkPositions("sink-commit", config, worker)
    try:
        first.refresh(force=True)
        first.commit([(topic, 1, 7)])
        assert first.assignment(2) == [[(topic, 0, None)], [(topic, 1, 7)]]
    finally:
        first.close()
    # A new worker's positions start from the group's committed offsets.
    again = SinkPositions("sink-commit", config, worker)
    try:
        again.refresh(force=True)
        assert again.assignment(1) == [[(topic, 0, None), (topic, 1, 7)]]
    finally:
        again.close()
