"""The offsets API (KIP-875), ``initial_offsets`` (KIP-995) and deletion on a distributed
herder with the real config, offsets and status stores on the broker, without Spark (no
connector runs): what the leader writes is what another worker's stores read."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import NotFoundError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.herder import DistributedHerder, NotLeaderError
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore

pytestmark = pytest.mark.broker

NOT_STOPPED = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
    "done for the specified connector by issuing a 'PUT' request to the "
    "'/connectors/{}/stop' endpoint"
)


def _source(tmp_path: Any) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "tasks.max": "1",
            "file": str(tmp_path / "in.txt"), "topic": "t"}  # fmt: skip


def test_source_offsets_written_by_the_leader_are_read_by_another_worker(
    leader: DistributedHerder, worker: dict[str, str], tmp_path: Any
) -> None:
    partition = {"filename": str(tmp_path / "in.txt")}
    info = leader.create_connector(
        "src", _source(tmp_path), "STOPPED", [{"partition": partition, "offset": {"position": 7}}]
    )
    assert info.offsets_status == "The offsets for this connector have been set successfully"
    assert leader.configs.snapshot().target_state("src").value == "STOPPED"  # type: ignore[union-attr]
    other = KafkaOffsetBackingStore(DistributedConfig(worker).strings())
    other.start()
    try:
        assert other.get_all("src") == [(partition, {"position": 7})]
        message = leader.alter_connector_offsets(
            "src", {"offsets": [{"partition": partition, "offset": {"position": 3}}]}
        )
        assert message == "The offsets for this connector have been altered successfully"
        other.read_to_end()
        assert other.get_all("src") == [(partition, {"position": 3})]
        assert leader.connector_offsets("src") == {
            "offsets": [{"partition": partition, "offset": {"position": 3}}]
        }
        message = leader.reset_connector_offsets("src")
        assert message == "The offsets for this connector have been reset successfully"
        other.read_to_end()
        assert other.get_all("src") == []
    finally:
        other.close()


def test_only_a_stopped_connector_on_the_leader(leader: DistributedHerder, tmp_path: Any) -> None:
    leader.create_connector("run", _source(tmp_path))
    body = {"offsets": [{"partition": {"filename": "x"}, "offset": None}]}
    with pytest.raises(BadRequestError, match="STOPPED") as refused:
        leader.alter_connector_offsets("run", body)
    assert str(refused.value) == NOT_STOPPED.format("run")
    with pytest.raises(BadRequestError):
        leader.reset_connector_offsets("run")
    with pytest.raises(NotFoundError, match=r"^Connector nope not found$"):
        leader.reset_connector_offsets("nope")
    with pytest.raises(NotFoundError, match=r"^Connector nope not found$"):
        leader.connector_offsets("nope")
    leader.member = SimpleNamespace(is_leader=False, leader_url="http://w:2/", rejoin_needed=False)
    with pytest.raises(NotLeaderError) as forwarded:
        leader.reset_connector_offsets("run")
    assert forwarded.value.leader_url == "http://w:2/"
    assert leader.connector_offsets("run") == {"offsets": []}  # any worker answers a GET
    with pytest.raises(NotLeaderError):
        leader.create_connector("other", _source(tmp_path), "STOPPED", [])


def test_sink_offsets_are_the_consumer_groups(
    leader: DistributedHerder, kafka_broker: Any, unique_topic: Callable[[str], str],
    tmp_path: Any,
) -> None:  # fmt: skip
    topic = unique_topic("in")
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    kafka_admin.ensure_topics(admin, [kafka_admin.TopicSpec(topic, 1, 1, {})])
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    config = {"connector.class": "FileStreamSink", "tasks.max": "1",
              "file": str(tmp_path / "out.txt"), "topics": topic}  # fmt: skip
    info = leader.create_connector(
        "snk", config, "STOPPED", [{"partition": partition, "offset": {"kafka_offset": 5}}]
    )
    assert info.offsets_status == "The offsets for this connector have been set successfully"
    assert _committed(kafka_broker.bootstrap_servers, "connect-snk", topic) == 5
    expected = {"offsets": [{"partition": partition, "offset": {"kafka_offset": 5}}]}
    assert leader.connector_offsets("snk") == expected
    leader.alter_connector_offsets(
        "snk", {"offsets": [{"partition": partition, "offset": {"kafka_offset": 2}}]}
    )
    assert _committed(kafka_broker.bootstrap_servers, "connect-snk", topic) == 2
    assert leader.reset_connector_offsets("snk") == (
        "The offsets for this connector have been reset successfully"
    )
    assert leader.connector_offsets("snk") == {"offsets": []}


def _committed(servers: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group})
    try:
        [found] = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        return int(found.offset)
    finally:
        consumer.close()


def test_delete_writes_both_tombstones_and_a_reader_forgets_the_connector(
    leader: DistributedHerder, worker: dict[str, str], tmp_path: Any
) -> None:
    leader.create_connector("gone", _source(tmp_path), "PAUSED")
    leader.delete_connector("gone")
    records = _records(worker["bootstrap.servers"], worker["config.storage.topic"])
    assert records[-2:] == [("connector-gone", None), ("target-state-gone", None)], records
    reader = KafkaConfigBackingStore(DistributedConfig(worker).strings())
    reader.start()
    try:
        snap = reader.snapshot()
        assert not snap.contains("gone") and snap.target_state("gone") is None
    finally:
        reader.stop()


def _records(servers: str, topic: str) -> list[tuple[str, bytes | None]]:
    """Every record of the one-partition ``topic``, read until none arrives for 3 s."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"r-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out = []
        while (message := consumer.poll(3)) is not None:
            assert not message.error(), message.error()
            out.append(((message.key() or b"").decode(), message.value()))
        return out
    finally:
        consumer.close()
