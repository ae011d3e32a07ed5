"""Exactly-once source connectors on the engine (KIP-618): the offsets a connector's leases
commit reach its primary offsets topic only inside the leases' transactions — the worker's
main process never writes them there a second time — and a connector with an
``offsets.storage.topic`` of its own gets a copy in the worker's global topic. Real broker and
local Spark; the offsets topics are read raw, so "transactional" is the record batch's flag."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from tests.support.engine import RecordingListener
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

SEQUENCE = "sparkcat_eos_plugins:SequenceSourceTask"
TOTAL = 400


@pytest.fixture
def worker(
    kafka_broker: Any, plugins_dir: Path, unique_topic: Callable[[str], str]
) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "group.id": f"g-{uuid.uuid4().hex[:8]}",
        "exactly.once.source.support": "enabled",
        "offset.storage.topic": unique_topic("offsets"),
        "offset.storage.partitions": "3",
        "offset.storage.replication.factor": "1",
        "max.batch.ms": "1000",
    }


@pytest.fixture
def engine(spark: Any, worker: dict[str, str], tmp_path: Path) -> Iterator[SparkEngine]:
    store = KafkaOffsetBackingStore(worker)
    store.start()
    engine = SparkEngine(worker, store, session=spark)
    yield engine
    engine.close()
    store.close()


def _sequence(name: str, topic: str, **extra: str) -> ConnectorPlan:
    config = {
        "name": name,
        "connector.class": "sparkcat_eos_plugins:SequenceSourceConnector",
        "topic": topic,
        "records.total": str(TOTAL),
        "batch.size": "40",
        "poll.sleep.ms": "100",
        **extra,
    }
    task = dict(config, **{"task.class": SEQUENCE, "task.id": "0"})
    return ConnectorPlan(name, "source", config, [task])


def _offsets_of(servers: str, topic: str, connector: str) -> list[Any]:
    key = orjson.dumps([connector, {"task": "0"}])
    return [r for r in read_topic(servers, topic).records if r.key == key]


def _data_topic(servers: str, unique_topic: Callable[[str], str]) -> str:
    topic = unique_topic("data")
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def _run_to_the_end(engine: SparkEngine, plan: ConnectorPlan, servers: str, topic: str) -> None:
    listener = RecordingListener()
    engine.start_connector(plan, listener)
    wait_for(lambda: len(read_topic(servers, topic).records) >= TOTAL, 120, "every record")
    wait_for(lambda: listener.records.get(plan.name, 0) >= TOTAL, 30, "the last lease's result")
    engine.stop_connector(plan.name)
    assert not listener.traces and not listener.connector_failures


def test_offsets_reach_the_workers_topic_only_in_transactions(
    engine: SparkEngine, worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    servers, offsets_topic = worker["bootstrap.servers"], worker["offset.storage.topic"]
    topic = _data_topic(servers, unique_topic)
    name = f"eos-{uuid.uuid4().hex[:6]}"
    _run_to_the_end(engine, _sequence(name, topic), servers, topic)
    written = _offsets_of(servers, offsets_topic, name)
    assert written, "no offsets committed"
    assert [r for r in written if not r.transactional] == []
    assert orjson.loads(written[-1].value) == {"n": TOTAL}


def test_a_connectors_own_topic_is_transactional_and_the_worker_gets_a_copy(
    engine: SparkEngine, worker: dict[str, str], unique_topic: Callable[[str], str]
) -> None:
    servers, worker_topic = worker["bootstrap.servers"], worker["offset.storage.topic"]
    topic, own = _data_topic(servers, unique_topic), unique_topic("own-offsets")
    name = f"eos-{uuid.uuid4().hex[:6]}"
    _run_to_the_end(
        engine, _sequence(name, topic, **{"offsets.storage.topic": own}), servers, topic
    )
    in_own = _offsets_of(servers, own, name)
    assert in_own and [r for r in in_own if not r.transactional] == []
    assert orjson.loads(in_own[-1].value) == {"n": TOTAL}
    copies = _offsets_of(servers, worker_topic, name)
    assert copies and orjson.loads(copies[-1].value) == {"n": TOTAL}
