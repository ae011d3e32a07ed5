"""KIP-558 topic tracking in a distributed group, on the real config and status topics: the
topics a task used are ``status-topic-<topic>:connector-<name>`` records that every worker
reads (``runtime/herder/topics.py``, ``runtime/distributed/work.py``).

The engine is a double that keeps the plans it is given; the test plays its part by calling
the herder's ``on_topics`` as the Spark engine does after each lease.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition
from tests.support.group_member import group_member, run_here

from sparkcat.runtime.rest.errors import ConnectRestError

pytestmark = pytest.mark.broker

MARKER = "status-topic-end-of-read:connector-"


def _topic_records(worker: dict[str, str]) -> list[tuple[str, bytes | None]]:
    """The ``status-topic-`` records of the status topic, read with a plain consumer up to a
    marker written now (the broker may report a record's offset in its high watermark only
    a moment after acking it): a tombstone for a topic status no connector has."""
    from confluent_kafka import Producer

    topic, servers = worker["status.storage.topic"], worker["bootstrap.servers"]
    marker = f"{MARKER}{uuid.uuid4().hex}"
    producer = Producer({"bootstrap.servers": servers})
    producer.produce(topic, key=marker.encode(), value=None, partition=0)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"read-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        records = []
        while True:
            message = consumer.poll(10)
            assert message is not None and not message.error(), message
            key = (message.key() or b"").decode()
            if key == marker:
                return records
            if key.startswith("status-topic-") and not key.startswith(MARKER):
                records.append((key, message.value()))
    finally:
        consumer.close()


def _expected_value(topic: str, connector: str, task: int, value: bytes | None) -> bytes:
    """Kafka's value bytes for this topic status, with the timestamp ``value`` carries."""
    assert value is not None
    stamp = orjson.loads(value)["topic"]["discoverTimestamp"]
    assert isinstance(stamp, int) and stamp > 1_600_000_000_000
    return (
        f'{{"topic":{{"name":"{topic}","connector":"{connector}","task":{task},'
        f'"discoverTimestamp":{stamp}}}}}'
    ).encode()


def _source(tmp_path: Path) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "tasks.max": "1",
            "file": str(tmp_path / "in.txt"), "topic": "orders"}  # fmt: skip


def test_a_used_topic_is_one_status_record_that_every_worker_answers(
    worker: dict[str, str], tmp_path: Path
) -> None:
    with group_member(worker, "w1:8083") as runner:
        runner.create_connector("c", _source(tmp_path))
        run_here(runner, "c")
        # The engine reports the topics of every lease; a known topic is not written again.
        runner.on_topics("c", 0, ["orders"])
        runner.on_topics("c", 0, ["orders"])
        runner.on_topics("c", 0, ["orders", "audit"])
        runner.status.flush()  # type: ignore[attr-defined]
        records = _topic_records(worker)
        assert [key for key, _ in records] == [
            "status-topic-orders:connector-c",
            "status-topic-audit:connector-c",
        ]
        for (key, value), topic in zip(records, ("orders", "audit"), strict=True):
            assert value == _expected_value(topic, "c", 0, value), key
        assert runner.connector_active_topics("c") == {"c": {"topics": ["audit", "orders"]}}
        # Another worker, and this one after a restart: the same answer from the topic.
        with group_member(worker, "w2:8083") as other, group_member(worker, "w1:8083") as restarted:
            for member in (other, restarted):
                assert member.connector_active_topics("c") == {"c": {"topics": ["audit", "orders"]}}
            # The restarted worker runs the task again: it knows the topics, writes none.
            run_here(restarted, "c")
            restarted.on_topics("c", 0, ["orders", "audit"])
            restarted.status.flush()  # type: ignore[attr-defined]
            assert len(_topic_records(worker)) == 2


def test_reset_on_any_worker_tombstones_the_topics_and_the_next_use_records_them_again(
    worker: dict[str, str], tmp_path: Path
) -> None:
    with group_member(worker, "w1:8083") as runner, group_member(worker, "w2:8083") as other:
        runner.create_connector("c", _source(tmp_path))
        run_here(runner, "c")
        runner.on_topics("c", 0, ["orders"])
        runner.status.flush()  # type: ignore[attr-defined]
        other.status.read_to_end()  # type: ignore[attr-defined]
        other.reset_connector_active_topics("c")
        other.status.flush()  # type: ignore[attr-defined]
        assert _topic_records(worker)[-1] == ("status-topic-orders:connector-c", None)
        runner.status.read_to_end()  # type: ignore[attr-defined]
        assert runner.connector_active_topics("c") == {"c": {"topics": []}}
        runner.on_topics("c", 0, ["orders"])
        runner.status.flush()  # type: ignore[attr-defined]
        key, value = _topic_records(worker)[-1]
        assert key == "status-topic-orders:connector-c"
        assert value == _expected_value("orders", "c", 0, value)


def test_deleting_the_connector_tombstones_its_topics_once_its_tasks_stopped(
    worker: dict[str, str], tmp_path: Path
) -> None:
    with group_member(worker, "w1:8083") as runner:
        runner.create_connector("c", _source(tmp_path))
        run_here(runner, "c")
        runner.on_topics("c", 0, ["orders"])
        runner.delete_connector("c")
        runner.tick()
        assert "c" in runner.worker.engine.stopped  # type: ignore[attr-defined]
        runner.on_topics("c", 0, ["late"])  # a lease that ended after the stop
        runner.status.flush()  # type: ignore[attr-defined]
        records = _topic_records(worker)
        assert [key for key, _ in records] == ["status-topic-orders:connector-c"] * 2
        assert records[-1][1] is None
        assert runner.connector_active_topics("c") == {"c": {"topics": []}}


def test_tracking_disabled_writes_nothing_and_the_endpoints_answer_403(
    worker: dict[str, str], tmp_path: Path
) -> None:
    with group_member({**worker, "topic.tracking.enable": "false"}, "w1:8083") as runner:
        runner.create_connector("c", _source(tmp_path))
        run_here(runner, "c")
        runner.on_topics("c", 0, ["orders"])
        runner.status.flush()  # type: ignore[attr-defined]
        assert _topic_records(worker) == []
        for call in (runner.connector_active_topics, runner.reset_connector_active_topics):
            with pytest.raises(ConnectRestError) as refused:
                call("c")
            assert (refused.value.status, str(refused.value)) == (
                403,
                "Topic tracking is disabled.",
            )
