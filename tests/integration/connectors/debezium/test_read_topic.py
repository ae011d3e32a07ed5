"""The tests' topic reader: ``expected=0`` means the topic holds nothing, not "the first
fetch came back empty"."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Producer
from tests.support.cdc_servers import read_topic

pytestmark = pytest.mark.broker


def test_expected_zero_still_reads_what_the_topic_holds(kafka_broker: Any) -> None:
    servers = kafka_broker.bootstrap_servers
    topic = f"read-topic-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": servers})
    for i in range(3):
        producer.produce(topic, b'{"i":%d}' % i, None, 0)
    assert producer.flush(10) == 0
    assert read_topic(servers, topic, 0, timeout_s=10) == [(None, {"i": i}) for i in range(3)]


def test_a_missing_or_empty_topic_reads_as_empty(kafka_broker: Any) -> None:
    topic = f"read-topic-{uuid.uuid4().hex[:8]}"
    assert read_topic(kafka_broker.bootstrap_servers, topic, 0, timeout_s=3) == []
