"""``sparkcat mirror-maker mm2.properties`` as a user runs it, between two embedded brokers:
A (the session's broker) -> B (a second one). Records produced on A appear byte-exact on B in
``A.<topic>``; a consumer group's offsets on A come out as checkpoints on B that
``translate_offsets`` reads, and are committed to the idle group on B; heartbeats arrive on B.
SIGTERM stops it (exit 0, nothing left running); a restart resumes from the offsets stored in
``mm2-offsets.A.internal`` on B, so records produced meanwhile arrive and none is copied
twice. ``kill -9`` in the middle of mirroring loses nothing either: the restart copies again
at most what was copied after the last offset commit (one lease)."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.support.mirror import (
    commit,
    committed,
    content,
    create,
    produce,
    read_to_end,
    second_broker,
    signature,
)
from tests.support.worker_process import (
    SPARKCAT,
    START_TIMEOUT_S,
    Proc,
    WorkerProcess,
    kill_leftovers,
    session_members,
    wait_for,
    write_properties,
)

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror.client import translate_offsets
from sparkcat.connectors.mirror.formats import Heartbeat
from sparkcat.runtime.stores.offsets import parse_offset_key, parse_offset_value

__all__ = ["second_broker"]  # the fixture, used by name

PARTITIONS = 3


class MirrorMakerProcess(WorkerProcess):
    """``sparkcat mirror-maker FILE`` in its own session (it has no REST API)."""

    def __init__(self, properties: Path, log_path: Path) -> None:
        self.url = ""
        self.worker_props = properties
        self.connectors: list[Path] = []
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self.seen: dict[tuple[int, int], Proc] = {}

    def start(self) -> MirrorMakerProcess:
        with self.log_path.open("ab") as log:
            log.write(f"\n===== start {time.strftime('%H:%M:%S')} =====\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "mirror-maker", str(self.worker_props)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                cwd=self.worker_props.parent,
            )  # fmt: skip
        self.returncode = None
        return self

    def cleanup(self) -> None:
        if self.proc is not None and not self.exited():
            self.remember_processes()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill_group()
        if self.proc is not None:
            kill_leftovers(list(self.seen.values()) + session_members(self.pid))


def mm2_properties(path: Path, a: str, b: str, topic: str, **extra: str) -> Path:
    return write_properties(
        path,
        {
            "clusters": "A, B",
            "A.bootstrap.servers": a,
            "B.bootstrap.servers": b,
            "A->B.enabled": "true",
            "A->B.topics": topic,
            "replication.factor": "1",
            "checkpoints.topic.replication.factor": "1",
            "heartbeats.topic.replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "config.storage.replication.factor": "1",
            "emit.checkpoints.interval.seconds": "1",
            # An offset sync per record: checkpoints translate exactly (the default 100 would
            # round a group's offset down to the last sync + 1).
            "offset.lag.max": "0",
            "sync.group.offsets.enabled": "true",
            "sync.group.offsets.interval.seconds": "1",
            "offset.flush.interval.ms": "1000",
            "spark.master": "local[8,2]",
            **extra,
        },
    )


def mirrored(
    b: str, topic: str, count: int, worker: WorkerProcess, parts: int = PARTITIONS
) -> list[Any]:
    """Every record of ``A.<topic>`` on B once there are at least ``count``."""

    def enough() -> list[Any] | None:
        found = read_to_end(b, f"A.{topic}", parts)
        return found if len(found) >= count else None

    found: list[Any] = wait_for(
        enough, START_TIMEOUT_S, f"{count} records in A.{topic}", interval=1.0, worker=worker
    )
    return found


def stored_offsets(b: str, topic: str) -> dict[int, int]:
    """The last offset per partition of ``topic`` that MirrorSourceConnector stored in
    ``mm2-offsets.A.internal`` on B (Kafka's key and value layout)."""
    offsets: dict[int, int] = {}
    for message in read_to_end(b, "mm2-offsets.A.internal", 25):
        key = parse_offset_key(message.key())
        value = parse_offset_value(message.value())
        if key is None or value is None or key[0] != "MirrorSourceConnector":
            continue
        if key[1] == {"cluster": "A", "topic": topic, "partition": key[1].get("partition")}:
            offsets[key[1]["partition"]] = value["offset"]
    return offsets


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_mirror_maker_mirrors_checkpoints_and_resumes_after_sigterm(
    kafka_broker: Any, second_broker: str, tmp_path: Path
) -> None:
    a, b = str(kafka_broker), second_broker
    topic, group = f"orders-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:8]}"
    create(a, (topic, PARTITIONS))
    produce(a, topic, PARTITIONS, 200)
    commit(a, group, topic, {0: 50, 1: 200, 2: 7})
    props = mm2_properties(tmp_path / "mm2.properties", a, b, topic)
    mm = MirrorMakerProcess(props, tmp_path / "mm2.log").start()
    try:
        first = mirrored(b, topic, 600, mm)
        original = read_to_end(a, topic, PARTITIONS)
        assert sorted(map(signature, first)) == sorted(map(signature, original))

        remote = f"A.{topic}"
        expected = {TopicPartition(remote, 0): 50, TopicPartition(remote, 1): 200,
                    TopicPartition(remote, 2): 7}  # fmt: skip
        wait_for(lambda: translate_offsets({"bootstrap.servers": b}, "A", group, 10) == expected,
                 60, "checkpoints of the group", interval=1.0, worker=mm)  # fmt: skip
        wait_for(lambda: committed(b, group, remote, PARTITIONS) == [50, 200, 7],
                 60, "the group's offsets synced to B", interval=1.0, worker=mm)  # fmt: skip
        beats = [Heartbeat.deserialize(m.key(), m.value()) for m in read_to_end(b, "heartbeats", 1)]
        assert ("A", "B") in {(h.source_cluster_alias, h.target_cluster_alias) for h in beats}

        produce(a, topic, PARTITIONS, 100, first=200)
        mirrored(b, topic, 900, mm)
        mm.remember_processes()
        assert mm.terminate() == 0
        assert mm.survivors(30) == []
        assert stored_offsets(b, topic) == {0: 299, 1: 299, 2: 299}
        statuses = {m.key() for m in read_to_end(b, "mm2-status.A.internal", 5)}
        assert b"status-connector-MirrorSourceConnector" in statuses
        assert not list(tmp_path.glob("mm2-offsets*")), "no offsets file in dedicated mode"

        produce(a, topic, PARTITIONS, 100, first=300)
        mm.start()
        after = mirrored(b, topic, 1200, mm)
        time.sleep(5)  # anything copied twice would arrive now
        after = read_to_end(b, remote, PARTITIONS)
        original = read_to_end(a, topic, PARTITIONS)
        copies = Counter(map(content, after))
        assert set(copies) == set(map(content, original))
        assert sum(copies.values()) - len(copies) == 0, "records copied twice"
        assert sorted(map(signature, after)) == sorted(map(signature, original))
        assert mm.terminate() == 0
    finally:
        mm.cleanup()


class SteadyProducer(threading.Thread):
    """Produces ``rate`` records/s round-robin over the partitions until stopped; ``sent``
    counts the records acknowledged."""

    def __init__(self, servers: str, topic: str, parts: int, rate: int) -> None:
        super().__init__(daemon=True)
        self.servers, self.topic, self.parts, self.rate = servers, topic, parts, rate
        self.stop_event = threading.Event()
        self.sent = 0

    def run(self) -> None:
        per_tick = max(self.rate // 20, 1)
        sequence = 0
        while not self.stop_event.is_set():
            produce(self.servers, self.topic, self.parts, per_tick, first=sequence)
            sequence += per_tick
            self.sent = sequence * self.parts
            self.stop_event.wait(0.05)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_kill_9_mid_mirror_then_restart_loses_nothing(
    kafka_broker: Any, second_broker: str, tmp_path: Path
) -> None:
    a, b = str(kafka_broker), second_broker
    topic = f"payments-{uuid.uuid4().hex[:8]}"
    remote = f"A.{topic}"
    create(a, (topic, 2))
    producer = SteadyProducer(a, topic, 2, 4000)
    props = mm2_properties(tmp_path / "mm2.properties", a, b, topic)
    mm = MirrorMakerProcess(props, tmp_path / "mm2.log").start()
    producer.start()
    try:
        # Mid-mirror: offsets were committed at least twice and records keep flowing.
        wait_for(lambda: sum(stored_offsets(b, topic).values()) > 2 * 4000, START_TIMEOUT_S,
                 "offsets committed", interval=1.0, worker=mm)  # fmt: skip
        mm.kill_group()
        committed_at_kill = stored_offsets(b, topic)
        copied_at_kill = len(read_to_end(b, remote, 2))
        wait_for(lambda: producer.sent > copied_at_kill + 8000, 60, "more records on A")
        producer.stop_event.set()
        producer.join(30)

        mm.start()
        total = producer.sent
        mirrored(b, topic, total, mm, 2)
        time.sleep(3)
        after = read_to_end(b, remote, 2)
        original = read_to_end(a, topic, 2)
        assert len(original) == total
        copies = Counter(map(content, after))
        assert set(copies) == set(map(content, original)), "records lost"
        duplicates = sum(copies.values()) - len(copies)
        # The restart copies again what was copied after the last commit, nothing more.
        uncommitted = copied_at_kill - sum(o + 1 for o in committed_at_kill.values())
        print(f"kill -9: {copied_at_kill} copied, {uncommitted} past the last commit, "
              f"{duplicates} copied twice of {total}")  # fmt: skip
        assert duplicates <= uncommitted
        assert mm.terminate() == 0
    finally:
        producer.stop_event.set()
        mm.cleanup()
