"""Two ``sparkcat mirror-maker --clusters B`` nodes on one ``mm2.properties`` (KIP-710), between
two embedded brokers A and B: both join the flow's group ``A-mm2`` on B and share the flow's
connectors and tasks (the status topic ``mm2-status.A.internal`` names both nodes, the
followers' task configs reaching the leader over the internal REST server); records arrive
byte-exact. ``kill -9`` of one node moves its work to the other, which mirrors on: every
record produced on A, before and after the kill, arrives on B."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_mirror_maker import (
    MirrorMakerProcess,
    SteadyProducer,
    mm2_properties,
    stored_offsets,
)
from tests.support.mirror import content, create, read_to_end, second_broker
from tests.support.worker_process import SPARKCAT, START_TIMEOUT_S, wait_for

__all__ = ["second_broker"]  # the fixture, used by name

PARTITIONS = 4
RATE = 2000  # records/s produced on A while the nodes mirror


class Node(MirrorMakerProcess):
    """``sparkcat mirror-maker FILE --clusters B``."""

    def start(self) -> Node:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(SPARKCAT), "mirror-maker", str(self.worker_props), "--clusters", "B"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                cwd=self.worker_props.parent,
            )  # fmt: skip
        self.returncode = None
        return self


def running_on(b: str) -> dict[str, str]:
    """The worker id of each RUNNING connector and task, as ``mm2-status.A.internal`` on B
    says last (Kafka's status records: key ``status-task-<c>-<n>``, JSON value)."""
    last: dict[str, dict[str, Any] | None] = {}
    for message in read_to_end(b, "mm2-status.A.internal", 5):
        value = message.value()
        last[message.key().decode()] = json.loads(value) if value else None
    return {
        key: status["worker_id"]
        for key, status in last.items()
        if status is not None and status.get("state") == "RUNNING"
    }


def task_owners(b: str) -> set[str]:
    return {w for key, w in running_on(b).items() if key.startswith("status-task-")}


def owned_by(b: str, count: int) -> set[str] | None:
    """The nodes running the flow's tasks, once they are ``count``."""
    owners = task_owners(b)
    return owners if len(owners) == count else None


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_two_nodes_share_the_flow_and_one_takes_over_after_kill_9(
    kafka_broker: Any, second_broker: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    a, b = str(kafka_broker), second_broker
    topic = f"shipments-{uuid.uuid4().hex[:8]}"
    remote = f"A.{topic}"
    create(a, (topic, PARTITIONS))
    props = mm2_properties(
        tmp_path / "mm2.properties", a, b, topic,
        **{
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": "http://127.0.0.1:0",
            "rest.advertised.host.name": "127.0.0.1",
            "tasks.max": "4",
            "spark.master": "local[4,2]",
            # The group on B: a dead node is noticed within 6 s, its work moved 1 s later.
            "B.session.timeout.ms": "6000",
            "B.heartbeat.interval.ms": "1000",
            "B.scheduled.rebalance.max.delay.ms": "1000",
        },
    )  # fmt: skip
    producer = SteadyProducer(a, topic, PARTITIONS, RATE)
    first = Node(props, tmp_path / "node1.log").start()
    second = Node(props, tmp_path / "node2.log").start()
    producer.start()
    try:
        owners = wait_for(lambda: owned_by(b, 2), START_TIMEOUT_S, "tasks on both nodes",
                          interval=1.0, worker=first)  # fmt: skip
        print(f"tasks split over {sorted(owners)} after {time.monotonic() - started:.0f} s")
        # Mid-mirror: both nodes' tasks have committed offsets to mm2-offsets.A.internal.
        wait_for(lambda: len(stored_offsets(b, topic)) == PARTITIONS, 60,
                 "offsets of every partition", interval=1.0, worker=first)  # fmt: skip

        victim, survivor = second, first
        victim.remember_processes()
        victim.kill_group()
        killed_at = time.monotonic()
        wait_for(lambda: producer.sent > RATE * 2 + len(read_to_end(b, remote, PARTITIONS)),
                 60, "records produced after the kill")  # fmt: skip
        producer.stop_event.set()
        producer.join(30)
        total = producer.sent

        def all_arrived() -> list[Any] | None:
            found = read_to_end(b, remote, PARTITIONS)
            return found if len({content(m) for m in found}) >= total else None

        wait_for(all_arrived, 90, f"all {total} records on B", interval=1.0, worker=survivor)
        print(f"every record on B {time.monotonic() - killed_at:.0f} s after kill -9")
        after, original = read_to_end(b, remote, PARTITIONS), read_to_end(a, topic, PARTITIONS)
        assert len(original) == total
        copies = Counter(map(content, after))
        # content: partition, key, value, timestamp and headers, byte for byte.
        assert set(copies) == set(map(content, original)), "records lost or altered"
        # Every task's last status is the survivor's (one of the two nodes seen before).
        assert wait_for(lambda: owned_by(b, 1), 30, "every task on the survivor",
                        interval=1.0, worker=survivor) < owners  # fmt: skip
        print(f"{total} records, {sum(copies.values()) - len(copies)} copied twice; "
              f"run {time.monotonic() - started:.0f} s")  # fmt: skip
        assert survivor.terminate() == 0
    finally:
        producer.stop_event.set()
        first.cleanup()
        second.cleanup()
