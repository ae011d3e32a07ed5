"""Workers' group membership against the real broker (tansu): a group of protocol type
``connect``, the broker's leader choice, the leader's assignments, rebalances when a member
leaves or dies, and CONFIG_MISMATCH.

Timing: tansu answers a JoinGroup only after session.timeout.ms / 2, so every rebalance
takes ~2 s with the 4 s session timeout used on tansu (6 s, Kafka's default
group.min.session.timeout.ms, against an external Kafka: see tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.membership import IgnoreRebalances
from tests.support.waiting import wait_for

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.distributed.assignor import ClusterConfigSnapshot
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.membership import WorkerGroupMember
from sparkcat.runtime.distributed.protocol import ExtendedAssignment
from sparkcat.runtime.rest.entities import ConnectorTaskId

CONNECTORS = {"a": 3, "b": 3}


def worker_config(broker: Any, group: str, **props: str) -> DistributedConfig:
    # Short sessions keep rebalances quick; a real Kafka accepts no less than 6 s by default.
    session_ms = "4000" if broker.embedded else "6000"
    return DistributedConfig({
        "bootstrap.servers": broker.bootstrap_servers, "group.id": group,
        "key.converter": "JsonConverter", "value.converter": "JsonConverter",
        "config.storage.topic": "c", "offset.storage.topic": "o",
        "status.storage.topic": "s", "session.timeout.ms": session_ms,
        "heartbeat.interval.ms": "1000", "rebalance.timeout.ms": "20000",
        "scheduled.rebalance.max.delay.ms": "3000", **props,
    })  # fmt: skip


class Worker:
    """A herder stand-in: polls its member on its own thread, tracks what it runs, and
    schedules the rejoin an assignment's ``delay`` asks for (as Kafka's herder does)."""

    def __init__(self, broker: Any, group: str, name: str, offset: int = 10, **props: str):
        self.name = name
        self.offset = offset
        self.lock = threading.Lock()
        self.connectors: set[str] = set()
        self.tasks: set[ConnectorTaskId] = set()
        self.assignments: list[ExtendedAssignment] = []
        self.revocations: list[tuple[list[str], list[ConnectorTaskId]]] = []
        self.errors: list[BaseException] = []
        self.rejoin_at: float | None = None
        config = worker_config(broker, group, **props)
        self.member = WorkerGroupMember(config, f"http://{name}:8083/", self.snapshot, self)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"herder-{name}", daemon=True)

    def snapshot(self) -> ClusterConfigSnapshot:
        return ClusterConfigSnapshot(self.offset, dict(CONNECTORS))

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None:
        with self.lock:
            self.assignments.append(assignment)
            if assignment.failed:
                # CONFIG_MISMATCH: read the config topic up to the leader's offset, rejoin.
                self.offset = max(self.offset, assignment.config_offset)
                return
            self.connectors = set(assignment.connectors)
            self.tasks = set(assignment.tasks)
            if assignment.revoked_connectors or assignment.revoked_tasks:
                # Kafka's herder: after a revocation, rejoin for the follow-up assignment.
                self.member.request_rejoin()
            if assignment.delay > 0:
                self.rejoin_at = time.monotonic() + assignment.delay / 1000

    def on_revoked(
        self, leader: str | None, connectors: Collection[str], tasks: Collection[ConnectorTaskId]
    ) -> None:
        with self.lock:
            self.revocations.append((list(connectors), list(tasks)))
            self.connectors -= set(connectors)
            self.tasks -= set(tasks)

    def start(self) -> Worker:
        self.member.start()
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self.rejoin_at is not None and time.monotonic() >= self.rejoin_at:
                    self.rejoin_at = None
                    self.member.request_rejoin()
                self.member.poll(0.2)
        except BaseException as e:  # surfaced by the test
            if not self._stop.is_set():
                self.errors.append(e)

    def stop(self) -> None:
        self._stop.set()
        self.member.stop()
        self._thread.join(10)

    def crash(self) -> None:
        """Stop heartbeating without leaving the group (like kill -9)."""
        self._stop.set()
        client = self.member._client
        assert client is not None
        client.close()
        self._thread.join(10)

    def view(self) -> tuple[set[str], set[ConnectorTaskId]]:
        with self.lock:
            return set(self.connectors), set(self.tasks)


ALL_TASKS = {ConnectorTaskId(c, i) for c, n in CONNECTORS.items() for i in range(n)}


def covered_once(workers: list[Worker]) -> bool:
    views = [w.view() for w in workers]
    connectors = [c for cs, _ in views for c in cs]
    tasks = [t for _, ts in views for t in ts]
    return sorted(connectors) == sorted(CONNECTORS) and sorted(tasks, key=str) == sorted(
        ALL_TASKS, key=str
    )


def balanced(workers: list[Worker]) -> bool:
    views = [w.view() for w in workers]
    sizes = [len(ts) for _, ts in views]
    csizes = [len(cs) for cs, _ in views]
    return covered_once(workers) and max(sizes) - min(sizes) <= 1 and max(csizes) - min(csizes) <= 1


@pytest.fixture
def group() -> str:
    return f"connect-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def workers(kafka_broker: Any, group: str) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def make(name: str, **kwargs: Any) -> Worker:
        worker = Worker(kafka_broker, group, name, **kwargs).start()
        started.append(worker)
        return worker

    yield make
    for worker in started:
        if not worker._stop.is_set():
            worker.stop()
    for worker in started:
        assert worker.errors == [], worker.errors


def assert_one_leader(workers: list[Worker]) -> None:
    leaders = {w.member.leader_id for w in workers}
    assert len(leaders) == 1
    (leader,) = leaders
    assert leader in {w.member.member_id for w in workers}
    assert sum(w.member.is_leader for w in workers) == 1
    urls = {w.member.leader_url for w in workers}
    assert urls == {next(w for w in workers if w.member.is_leader).member.leader_url}


@pytest.mark.slow
def test_two_members_share_the_work(workers: Callable[..., Worker]) -> None:
    w1, w2 = workers("w1"), workers("w2")
    wait_for(lambda: balanced([w1, w2]), 60, "a balanced assignment")
    assert_one_leader([w1, w2])
    assert w1.member.generation_id == w2.member.generation_id >= 0
    assert w1.member.protocol_version == 2  # sessioned
    leader = w1 if w1.member.is_leader else w2
    follower = w2 if leader is w1 else w1
    for connector in CONNECTORS:
        owner = w1 if connector in w1.view()[0] else w2
        assert leader.member.owner_url("a" if connector == "a" else "b") == owner.member._rest_url
    assert follower.member.owner_url("a") is None  # only the leader knows owners
    assert all(not a.failed and a.config_offset == 10 for a in w1.assignments + w2.assignments)
    assert w1.revocations == [] and w2.revocations == []


@pytest.mark.slow
def test_joining_member_takes_only_the_surplus(workers: Callable[..., Worker]) -> None:
    """No stop-the-world: when a third worker joins, the others give up only what moves."""
    w1, w2 = workers("w1"), workers("w2")
    wait_for(lambda: balanced([w1, w2]), 60, "a balanced assignment over two")
    before = {w.name: w.view() for w in (w1, w2)}
    w3 = workers("w3")
    wait_for(lambda: balanced([w1, w2, w3]), 60, "a balanced assignment over three")
    revoked = [r for w in (w1, w2) for r in w.revocations]
    assert sum(len(tasks) for _, tasks in revoked) == 2  # 3 + 3 tasks -> 2 + 2 (+ 2 on w3)
    assert sum(len(connectors) for connectors, _ in revoked) == 0  # 1 + 1 -> stays
    for w in (w1, w2):
        connectors, tasks = w.view()
        assert connectors == before[w.name][0] and tasks <= before[w.name][1]
    assert len(w3.view()[1]) == 2


@pytest.mark.slow
def test_three_members_balanced_and_leaver_reassigned_after_delay(
    workers: Callable[..., Worker],
) -> None:
    w1, w2, w3 = workers("w1"), workers("w2"), workers("w3")
    wait_for(lambda: balanced([w1, w2, w3]), 90, "a balanced assignment over three")
    assert_one_leader([w1, w2, w3])
    assert sorted(len(w.view()[1]) for w in (w1, w2, w3)) == [2, 2, 2]
    stayed = {w.name: w.view() for w in (w1, w2)}

    w3.stop()  # leaves the group: its work is lost, held for scheduled.rebalance.max.delay.ms
    wait_for(lambda: any(a.delay > 0 for a in w1.assignments + w2.assignments), 30, "a delay")
    assert not covered_once([w1, w2])
    wait_for(lambda: covered_once([w1, w2]), 60, "lost work reassigned after the delay")
    # Work that did not move kept running: nothing of w1's or w2's was revoked.
    for w in (w1, w2):
        connectors, tasks = stayed[w.name]
        now_c, now_t = w.view()
        assert connectors <= now_c and tasks <= now_t


@pytest.mark.slow
def test_member_that_stops_heartbeating_is_replaced(workers: Callable[..., Worker]) -> None:
    w1, w2 = workers("w1"), workers("w2")
    wait_for(lambda: balanced([w1, w2]), 60, "a balanced assignment")
    w2.crash()  # no LeaveGroup: the broker notices after session.timeout.ms
    wait_for(lambda: covered_once([w1]), 90, "w2's work on w1")
    assert w1.member.is_leader
    # Held back for scheduled.rebalance.max.delay.ms first, as Kafka does.
    assert any(a.delay > 0 for a in w1.assignments)


@pytest.mark.slow
def test_config_mismatch_makes_members_resync(workers: Callable[..., Worker]) -> None:
    w1 = workers("w1", offset=5)
    wait_for(lambda: covered_once([w1]), 60, "w1 alone")
    assert w1.member.is_leader
    # w2 has read further in the config topic than the leader.
    w2 = workers("w2", offset=9)
    wait_for(lambda: balanced([w1, w2]), 90, "a balanced assignment after resync")
    mismatched = [a for a in w1.assignments + w2.assignments if a.failed]
    leader_was_behind = any(a.failed for a in w1.assignments)
    if w1.member.is_leader or leader_was_behind:
        assert mismatched and all(a.config_offset == 9 for a in mismatched)
    assert w1.offset == 9
    assert [a for a in w1.assignments + w2.assignments if not a.failed][-1].config_offset == 9


@pytest.mark.slow
def test_eager_protocol_revokes_everything_each_rebalance(workers: Callable[..., Worker]) -> None:
    w1 = workers("w1", **{"connect.protocol": "eager"})
    wait_for(lambda: covered_once([w1]), 60, "w1 alone")
    assert w1.member.protocol_version == 0
    w2 = workers("w2", **{"connect.protocol": "eager"})
    wait_for(lambda: balanced([w1, w2]), 60, "a balanced eager assignment")
    revoked_connectors, revoked_tasks = w1.revocations[0]
    assert sorted(revoked_connectors) == sorted(CONNECTORS) and len(revoked_tasks) == 6


@pytest.mark.slow
def test_wakeup_and_stop_end_a_blocked_poll(kafka_broker: Any, group: str) -> None:
    config = worker_config(kafka_broker, group)
    member = WorkerGroupMember(
        config, "http://w:8083/", lambda: ClusterConfigSnapshot(0), IgnoreRebalances()
    )
    member.start()
    errors: list[BaseException] = []

    def poll(seconds: float) -> float:
        started = time.monotonic()
        try:
            member.poll(seconds)
        except BaseException as e:
            errors.append(e)
        return time.monotonic() - started

    while member.assignment is None:  # the first poll joins (and returns on the callback)
        poll(30)
    assert member.is_leader and member.generation_id >= 0

    timer = threading.Timer(0.5, member.wakeup)
    timer.start()
    assert poll(30) < 5
    # A poll blocked in a join ends quietly when another thread stops the member.
    member.request_rejoin()
    threading.Timer(0.5, member.stop).start()
    assert poll(30) < 10
    assert errors == []
    assert member.member_id == ""


def test_a_login_kafka_python_cannot_do_is_refused_at_start(kafka_broker: Any, group: str) -> None:
    """Kerberos (Kafka's default SASL mechanism) is refused naming the key, before any
    connection (tests/unit/runtime/distributed/test_security.py has the mapping)."""
    props = {"security.protocol": "SASL_PLAINTEXT"}
    config = worker_config(kafka_broker, group, **props)
    member = WorkerGroupMember(
        config, "http://w:8083/", lambda: ClusterConfigSnapshot(0), IgnoreRebalances()
    )
    with pytest.raises(ConfigError, match=r"configuration sasl\.mechanism: .* supports PLAIN"):
        member.start()


@pytest.mark.slow
def test_a_member_that_fell_out_of_the_group_stops_its_work_at_once(
    kafka_broker: Any, group: str, workers: Callable[..., Worker]
) -> None:
    """A worker frozen past session.timeout.ms (SIGSTOP) loses its generation; its work moves.
    Resumed, it learns so from its first heartbeat and revokes everything it held at once,
    not after it rejoined (tansu holds a JoinGroup for session.timeout.ms / 2)."""
    session = {"session.timeout.ms": "10000"}
    w1 = workers("w1", **session)
    props = worker_config(kafka_broker, group, **session).originals()
    script = Path(__file__).with_name("frozen_member.py")
    frozen = subprocess.Popen(
        [sys.executable, str(script), json.dumps(props), json.dumps(CONNECTORS)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[4],
    )  # fmt: skip
    events: list[dict[str, Any]] = []
    threading.Thread(
        target=lambda: events.extend(json.loads(line) for line in frozen.stdout or ()),
        daemon=True,
    ).start()
    try:
        wait_for(lambda: any(e["tasks"] for e in events) and 0 < len(w1.view()[1]) < 6,
                   90, "the frozen-to-be member to hold tasks")  # fmt: skip
        held = {t for e in events if e["event"] == "assigned" for t in e["tasks"]}
        os.kill(frozen.pid, signal.SIGSTOP)
        wait_for(lambda: covered_once([w1]), 90, "its work on w1")
        resumed = time.monotonic()
        os.kill(frozen.pid, signal.SIGCONT)

        def revoked() -> dict[str, Any] | None:
            after = [e for e in events if e["event"] == "revoked" and e["at"] > resumed]
            return next((e for e in after if held <= set(e["tasks"])), None)

        wait_for(lambda: revoked() is not None, 30, "the resumed member to revoke its work")
        took = revoked()["at"] - resumed  # type: ignore[index]
        heartbeat_s = int(props["heartbeat.interval.ms"]) / 1000
        assert took <= heartbeat_s + 2, f"the resumed member kept its work {took:.1f} s"
        print(f"resumed member revoked its work {took:.2f} s after SIGCONT")
    finally:
        os.kill(frozen.pid, signal.SIGCONT)
        frozen.kill()
        frozen.wait(10)
        if frozen.stdout is not None:
            frozen.stdout.close()
