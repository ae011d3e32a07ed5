"""The offsets API (KIP-875) and ``initial_offsets`` (KIP-995) with exactly-once source
support enabled: every offset the leader writes to a connector's primary offsets topic is
inside a committed transaction of task 0's transactional id (Kafka's
``Worker.modifySourceConnectorOffsets``), a connector with an ``offsets.storage.topic`` of its
own is read and written there (the worker's topic gets a copy), and a zombie of task 0 is
fenced. Real stores on the broker; the log is read raw, so "transactional" is the record
batch's own flag."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from confluent_kafka import KafkaException, Producer

from sparkcat.runtime.distributed.herder import DistributedHerder
from sparkcat.runtime.tasks.exactly_once import transactional_id
from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

pytestmark = pytest.mark.broker


@pytest.fixture
def eos_worker(worker: dict[str, str]) -> dict[str, str]:
    worker["exactly.once.source.support"] = "enabled"
    return worker


@pytest.fixture
def eos_leader(
    eos_worker: dict[str, str], leader: DistributedHerder
) -> Iterator[DistributedHerder]:
    yield leader


def _source(tmp_path: Any, **extra: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "tasks.max": "1",
            "file": str(tmp_path / "in.txt"), "topic": "t", **extra}  # fmt: skip


def _records_of(servers: str, topic: str, connector: str) -> list[Any]:
    prefix = orjson.dumps([connector])[:-1]  # b'["name"'
    return [r for r in read_topic(servers, topic).records if (r.key or b"").startswith(prefix)]


def test_offsets_written_by_the_rest_api_are_transactional(
    eos_leader: DistributedHerder, eos_worker: dict[str, str], tmp_path: Any
) -> None:
    servers, topic = eos_worker["bootstrap.servers"], eos_worker["offset.storage.topic"]
    partition = {"filename": str(tmp_path / "in.txt")}
    eos_leader.create_connector(
        "src", _source(tmp_path), "STOPPED", [{"partition": partition, "offset": {"position": 7}}]
    )
    eos_leader.alter_connector_offsets(
        "src", {"offsets": [{"partition": partition, "offset": {"position": 3}}]}
    )
    assert eos_leader.connector_offsets("src") == {
        "offsets": [{"partition": partition, "offset": {"position": 3}}]
    }
    eos_leader.reset_connector_offsets("src")
    assert eos_leader.connector_offsets("src") == {"offsets": []}
    written = _records_of(servers, topic, "src")
    values = [None if r.value is None else orjson.loads(r.value) for r in written]
    assert values == [{"position": 7}, {"position": 3}, None]
    assert all(r.transactional for r in written)


def test_a_connector_with_its_own_offsets_topic_is_read_and_written_there(
    eos_leader: DistributedHerder,
    eos_worker: dict[str, str],
    unique_topic: Callable[[str], str],
    tmp_path: Any,
) -> None:
    servers, worker_topic = eos_worker["bootstrap.servers"], eos_worker["offset.storage.topic"]
    own = unique_topic("own-offsets")
    partition = {"filename": str(tmp_path / "in.txt")}
    config = _source(tmp_path, **{"offsets.storage.topic": own})
    eos_leader.create_connector(
        "own", config, "STOPPED", [{"partition": partition, "offset": {"position": 11}}]
    )
    in_own = _records_of(servers, own, "own")
    assert [orjson.loads(r.value) for r in in_own] == [{"position": 11}]
    assert all(r.transactional for r in in_own)
    # The worker's global topic gets a copy (best effort, as Kafka's secondary store).
    copies = _records_of(servers, worker_topic, "own")
    assert [orjson.loads(r.value) for r in copies if r.value] == [{"position": 11}]
    # A later change in the connector's own topic alone is what GET answers.
    producer = Producer({"bootstrap.servers": servers, "partitioner": "murmur2_random"})
    producer.produce(own, orjson.dumps({"position": 12}), orjson.dumps(["own", partition]))
    assert producer.flush(30) == 0
    assert eos_leader.connector_offsets("own") == {
        "offsets": [{"partition": partition, "offset": {"position": 12}}]
    }


def test_a_zombie_of_task_0_cannot_commit_after_the_offsets_changed(
    eos_leader: DistributedHerder, eos_worker: dict[str, str], tmp_path: Any
) -> None:
    servers = eos_worker["bootstrap.servers"]
    eos_leader.create_connector("z", _source(tmp_path), "STOPPED")
    zombie = Producer(
        {
            "bootstrap.servers": servers,
            "transactional.id": transactional_id(eos_worker["group.id"], "z", 0),
            "linger.ms": 0,
        }
    )
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce("t", b"late")
    zombie.flush(30)
    partition = {"filename": str(tmp_path / "in.txt")}
    eos_leader.alter_connector_offsets(
        "z", {"offsets": [{"partition": partition, "offset": {"position": 1}}]}
    )
    with pytest.raises(KafkaException):
        zombie.commit_transaction(5)
