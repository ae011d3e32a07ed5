"""Error handling through Spark: a sink with errors.tolerance=all and a DLQ, restarted midway."""

from __future__ import annotations

import random
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from tests.support.engine import RecordingListener
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

FILE_SINK = "sparkcat.connectors.file:FileStreamSinkTask"
TOTAL, BAD, LEASE_RECORDS = 10_000, 137, 2000


@pytest.fixture
def engine(spark: Any, kafka_broker: Any, plugins_dir: Path, tmp_path: Path) -> Iterator[Any]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "2000",
        "offset.flush.interval.ms": "4000",
    }
    sys.path.insert(0, worker["plugin.path"])
    engine = SparkEngine(worker, MemoryOffsetStore(), session=spark)
    yield engine
    engine.close()
    sys.path.remove(worker["plugin.path"])


def produce(servers: str, topic: str, bad: set[int]) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for i in range(TOTAL):
        value = b'{"n": %d, broken' % i if i in bad else orjson.dumps({"n": i})
        producer.produce(topic, value, None, 0)
        if i % 5000 == 0:
            producer.poll(0)
    assert producer.flush(20) == 0


def dlq_messages(servers: str, topic: str) -> list[Any]:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "dlq-reader"})
    try:
        consumer.assign([KafkaTopicPartition(topic, 0, OFFSET_BEGINNING)])
        messages: list[Any] = []
        while batch := consumer.consume(10000, 1.0):
            messages.extend(m for m in batch if m.error() is None)
        return messages
    finally:
        consumer.close()


def numbers(path: Path) -> list[int]:
    text = path.read_text() if path.exists() else ""
    return [int(m) for m in re.findall(r"\d+", text)]


def test_tolerance_all_with_dlq_through_spark_across_a_restart(
    engine: Any, kafka_broker: Any, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    name, topic, dlq = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("errsink", "errin", "dlq"))
    bad = set(random.Random(11).sample(range(TOTAL), BAD))
    good = [i for i in range(TOTAL) if i not in bad]
    produce(servers, topic, bad)
    out = tmp_path / "sink.txt"
    config = {
        "name": name, "connector.class": "FileStreamSink", "file": str(out), "topics": topic,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
        "max.batch.records": str(LEASE_RECORDS),
    }  # fmt: skip
    plan = ConnectorPlan(name, "sink", config, [dict(config, **{"task.class": FILE_SINK})])
    listener = RecordingListener()

    engine.start_connector(plan, listener)
    wait_for(lambda: len(numbers(out)) >= 3000, 120, "the first records", interval=0.2)
    engine.stop_connector(name)  # a restart in the middle
    engine.start_connector(plan, listener)
    wait_for(lambda: set(numbers(out)) >= set(good), 180, "every good record", interval=0.2)
    wait_for(
        lambda: len(dlq_messages(servers, dlq)) >= BAD,
        60,
        "every bad record in the DLQ",
        interval=0.2,
    )
    engine.stop_connector(name)

    sunk = numbers(out)
    assert sorted(set(sunk)) == good
    assert len(sunk) <= len(good) + LEASE_RECORDS  # at-least-once: at most one lease redone
    messages = dlq_messages(servers, dlq)
    offsets = [int(dict(m.headers())["__connect.errors.offset"]) for m in messages]
    assert sorted(set(offsets)) == sorted(bad)
    assert len(messages) <= BAD + LEASE_RECORDS
    headers = dict(messages[0].headers())
    assert messages[0].value() == b'{"n": %d, broken' % offsets[0]
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.exception.class.name"] == b"sparkcat.api.errors.DataError"
    assert headers["__connect.errors.exception.message"]
    assert b"Traceback" in headers["__connect.errors.exception.stacktrace"]
    assert listener.traces == {} and listener.connector_failures == {}
    metrics = listener.metrics[name]
    assert BAD <= metrics["total-records-skipped"] <= len(messages)
    assert metrics["deadletterqueue-produce-requests"] == len(messages)
