"""The embedded broker and the admin helpers against a real broker (tansu by default)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import TopicPartition
from sparkcat.kafka.admin import (
    KafkaAdminError,
    TopicSpec,
    alter_group_offsets,
    committed_offsets,
    delete_group,
    describe_configs,
    end_offsets,
    end_offsets_probe_config,
    ensure_topics,
    list_topics,
    topic_partitions,
)
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.kafka.clients import admin_config, consumer_config, producer_config

pytestmark = pytest.mark.broker


@pytest.fixture
def worker(kafka_broker: Any) -> dict[str, str]:
    return {"bootstrap.servers": kafka_broker.bootstrap_servers}


@pytest.fixture
def admin(worker: dict[str, str]) -> AdminClient:
    return AdminClient(dict(admin_config(worker, None, "test-admin")))


@pytest.fixture
def topic(admin: AdminClient, unique_topic: Callable[[str], str]) -> str:
    name = unique_topic("t")
    ensure_topics(admin, [TopicSpec(name, partitions=2, replication_factor=1)])
    return name


@pytest.fixture
def producer(worker: dict[str, str]) -> Iterator[Producer]:
    made = Producer(producer_config(worker, None, "test-producer"))
    yield made
    made.flush(10)


def _produce(producer: Producer, topic: str, count: int, partition: int = 0) -> None:
    for i in range(count):
        while True:
            try:
                producer.produce(topic, b"%d" % i, partition=partition)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 5_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


# -- the broker process -------------------------------------------------------------------


def test_broker_starts_answers_and_stops() -> None:
    broker = EmbeddedBroker()
    with broker:
        host, port = broker.bootstrap_servers.split(":")
        assert host == "127.0.0.1"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        assert isinstance(list_topics(admin, timeout_s=10), set)
        process = broker._process
        assert process is not None and process.poll() is None
    assert process.poll() is not None  # stopped, and reaped
    assert not broker.running
    with pytest.raises(ConnectError, match="not running"):
        _ = broker.bootstrap_servers
    with socket.socket() as sock:  # nobody listens on the port any more
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
        sock.bind(("127.0.0.1", int(port)))
    broker.stop()  # idempotent


def test_start_logs_the_address(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="sparkcat.kafka.broker")
    with EmbeddedBroker() as broker:
        expected = f"Started embedded Kafka-compatible broker (tansu) at {broker.bootstrap_servers}"
        assert any(expected in r.getMessage() for r in caplog.records)


def test_missing_binary_is_a_one_line_connect_error(tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="is not an executable") as info:
        EmbeddedBroker(binary=tmp_path / "tansu").start()
    assert "\n" not in str(info.value)


def test_port_in_use_is_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        taken = sock.getsockname()[1]
        with pytest.raises(ConnectError, match=f"port {taken} .* already in use"):
            EmbeddedBroker(port=taken).start()


def test_early_exit_reports_the_output_tail(tmp_path: Path) -> None:
    fake = tmp_path / "tansu"
    fake.write_text("#!/bin/sh\necho 'storage engine exploded' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(ConnectError, match=r"exited with code 3.*storage engine exploded"):
        EmbeddedBroker(binary=fake).start()


def test_broker_dies_with_its_parent(tmp_path: Path) -> None:
    # A parent that is SIGKILLed cannot stop the broker: PR_SET_PDEATHSIG must.
    script = textwrap.dedent(
        """
        import sys, time
        from sparkcat.kafka.broker import EmbeddedBroker
        broker = EmbeddedBroker().start()
        print(broker._process.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    with parent.stdout:
        child_pid = int(parent.stdout.readline())
    os.kill(child_pid, 0)  # alive
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.02)
    assert not _alive(child_pid)


def _alive(pid: int) -> bool:
    # The broker's parent is gone, so init reaps it; a zombie counts as dead.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- data round trip ------------------------------------------------------------------------


def test_produce_consume_round_trip_with_keys_and_headers(
    worker: dict[str, str], topic: str, producer: Producer
) -> None:
    sent: list[tuple[bytes | None, bytes | None, list[tuple[str, str | bytes | None]]]] = [
        (b"k1", b"v1", [("h", b"1")]),
        (None, b"v2", [("h", b"2"), ("h", b"3")]),
        (b"k3", None, []),
    ]
    for key, value, headers in sent:
        producer.produce(topic, value, key=key, headers=headers, partition=1, timestamp=1_000)
    assert producer.flush(10) == 0

    consumer = Consumer(consumer_config(worker, None, "test-consumer", "test-round-trip"))
    try:
        consumer.assign([KafkaTopicPartition(topic, 1, 0)])
        received: list[Message] = []
        deadline = time.monotonic() + 20
        while len(received) < len(sent) and time.monotonic() < deadline:
            for message in consumer.consume(100, timeout=0.5):
                assert message.error() is None
                received.append(message)
    finally:
        consumer.close()
    assert [(m.key(), m.value(), m.headers() or []) for m in received] == sent
    assert [m.offset() for m in received] == [0, 1, 2]
    assert all(m.timestamp()[1] == 1_000 for m in received)


# -- topics ------------------------------------------------------------------------------------


def test_ensure_topics_creates_once_and_is_idempotent(
    admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    name = unique_topic("created")
    spec = TopicSpec(name, 3, 1, configs={"cleanup.policy": "compact"})
    assert ensure_topics(admin, [spec]) == [name]
    assert ensure_topics(admin, [spec]) == []
    assert ensure_topics(admin, [TopicSpec(name, partitions=5)]) == []  # left as it is
    assert name in list_topics(admin)
    assert topic_partitions(admin, name) == [TopicPartition(name, p) for p in range(3)]
    assert describe_configs(admin, name)["cleanup.policy"] == "compact"


def test_topic_partitions_of_a_missing_topic_raises_without_creating_it(
    admin: AdminClient, unique_topic: Callable[[str], str]
) -> None:
    name = unique_topic("missing")
    with pytest.raises(KafkaAdminError, match="does not exist"):
        topic_partitions(admin, name)
    assert name not in list_topics(admin)


# -- end offsets ------------------------------------------------------------------------------


def test_end_offsets_are_exact_after_many_small_records(
    worker: dict[str, str], topic: str, producer: Producer
) -> None:
    produced = 250_000
    _produce(producer, topic, produced, partition=0)
    config = consumer_config(worker, None, "test-end-offsets", "test-end-offsets")
    ends = end_offsets(config, [(topic, 0), (topic, 1)], timeout_s=30)
    assert ends == {TopicPartition(topic, 0): produced, TopicPartition(topic, 1): 0}


def test_end_offsets_with_a_reused_probe_consumer_sees_new_records(
    worker: dict[str, str], topic: str, producer: Producer
) -> None:
    probe = Consumer(end_offsets_probe_config(consumer_config(worker, None, "probe", "probe")))
    try:
        _produce(producer, topic, 1_000, partition=0)
        assert end_offsets(probe, [(topic, 0)]) == {TopicPartition(topic, 0): 1_000}
        _produce(producer, topic, 7, partition=0)
        assert end_offsets(probe, [(topic, 0)]) == {TopicPartition(topic, 0): 1_007}
        assert probe.assignment() == []
    finally:
        probe.close()


# -- consumer group offsets ---------------------------------------------------------------------


def test_group_offsets_commit_read_alter_delete_without_members(
    admin: AdminClient, topic: str, unique_topic: Callable[[str], str]
) -> None:
    group = f"connect-{unique_topic('sink')}"
    assert committed_offsets(admin, group) == {}

    alter_group_offsets(admin, group, {(topic, 0): 100, (topic, 1): 5})
    assert committed_offsets(admin, group) == {
        TopicPartition(topic, 0): 100,
        TopicPartition(topic, 1): 5,
    }
    assert committed_offsets(admin, group, [(topic, 1)]) == {TopicPartition(topic, 1): 5}

    alter_group_offsets(admin, group, {TopicPartition(topic, 0): 42})
    assert committed_offsets(admin, group)[TopicPartition(topic, 0)] == 42

    delete_group(admin, group)
    assert committed_offsets(admin, group) == {}
    delete_group(admin, group)  # a reset of an absent group is not an error
