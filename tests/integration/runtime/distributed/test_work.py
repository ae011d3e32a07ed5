"""What a worker does with the work it holds (``runtime/distributed/work.py``), on the real
stores: the status records other workers read."""

from __future__ import annotations

import http.server
import threading
import time
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from tests.support.group_member import group_member, run_here

from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.herder import DistributedHerder
from sparkcat.runtime.distributed.protocol import ExtendedAssignment
from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore
from sparkcat.runtime.stores.statuses import ConnectorStatus, State

pytestmark = pytest.mark.broker


def _hold(herder: DistributedHerder, name: str, generation: int) -> None:
    """Give ``herder`` the connector as the leader of ``generation`` would."""
    herder.group_generation = generation
    herder.assignment = ExtendedAssignment(
        version=2, error=0, leader="w:1", leader_url="http://w:1/",
        config_offset=herder.configs.snapshot().offset, connectors=(name,),
    )  # fmt: skip
    herder.tick()


@pytest.mark.parametrize("initial", ["RUNNING", "PAUSED", "STOPPED"])
def test_a_late_unassigned_record_of_another_worker_is_overwritten_by_the_holder(
    leader: DistributedHerder, worker: dict[str, str], tmp_path: Any, initial: str
) -> None:
    """Two members held the connector for one generation (a burst of rebalances); the one that
    lost it wrote UNASSIGNED after the holder's record. The holder writes its state again, in
    whatever state its target puts the connector, instead of leaving it UNASSIGNED for good."""
    config = {"connector.class": "FileStreamSource", "tasks.max": "1",
              "file": str(tmp_path / "in.txt"), "topic": "t"}  # fmt: skip
    leader.create_connector("c", config, initial)
    _hold(leader, "c", generation=7)
    leader.status.flush()
    other = KafkaStatusBackingStore(DistributedConfig(worker).strings())
    other.start()
    try:
        held = other.get("c")
        assert held is not None and (held.state.value, held.worker_id) == (initial, "w:1")
        other.put(ConnectorStatus("c", State.UNASSIGNED, "w:2", 8))
        other.flush()
        leader.status.read_to_end()
        assert leader.status.get("c").state is State.UNASSIGNED  # type: ignore[union-attr]
        leader.tick()
        leader.status.flush()
        other.read_to_end()
        now = other.get("c")
        assert now is not None and (now.state.value, now.worker_id) == (initial, "w:1")
    finally:
        other.stop()


def _task_startups(herder: DistributedHerder) -> tuple[float, float]:
    values = {m.name: m.value for m in herder.metrics.collect([])}
    return values["task-startup-success-total"], values["task-startup-attempts-total"]


def test_tasks_count_as_started_when_this_worker_starts_them(
    worker: dict[str, str], tmp_path: Any
) -> None:
    """connect-worker-metrics' task-startup counts (Kafka's ``Worker.startTask``) on a
    distributed worker: each task handed to the engine once, a restarted task once more."""
    config = {"connector.class": "FileStreamSource", "tasks.max": "1",
              "file": str(tmp_path / "in.txt"), "topic": "t"}  # fmt: skip
    with group_member(worker, "w:1") as herder:
        herder.create_connector("c", config)
        run_here(herder, "c")
        assert _task_startups(herder) == (1.0, 1.0)
        herder.tick()  # the same plan again: nothing new starts
        assert _task_startups(herder) == (1.0, 1.0)
        herder.restart_task("c", 0)
        assert _task_startups(herder) == (2.0, 2.0)


def _source(tmp_path: Any, name: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "tasks.max": "1",
            "file": str(tmp_path / f"{name}.txt"), "topic": name}  # fmt: skip


def _assign(herder: DistributedHerder, *names: str) -> None:
    herder.group_generation = 3
    herder.assignment = ExtendedAssignment(
        version=2, error=0, leader="w:1", leader_url="http://w:1/",
        config_offset=herder.configs.snapshot().offset, connectors=names,
    )  # fmt: skip


def test_a_rebalance_under_way_defers_starting_connectors(
    leader: DistributedHerder, tmp_path: Any
) -> None:
    """A worker starting hundreds of connectors stops as soon as a rebalance begins, so that
    its tick thread rejoins in time (a member that rejoins late falls out of the group); the
    tick after the rebalance starts them."""
    for name in ("a", "b"):
        leader.create_connector(name, _source(tmp_path, name))
    _assign(leader, "a", "b")
    leader.member.rejoin_needed = True
    leader.tick()
    assert leader.status.get("a") is None and leader.status.get("b") is None
    leader.member.rejoin_needed = False
    leader.tick()
    states = {n: s.state for n in ("a", "b") if (s := leader.status.get(n)) is not None}
    assert states == {"a": State.RUNNING, "b": State.RUNNING}


def test_a_follower_sends_task_configs_to_the_leader_off_its_tick_thread(
    leader: DistributedHerder, tmp_path: Any
) -> None:
    """A leader busy with a rebalance holds a write for seconds; the follower's tick thread,
    which also rejoins the group, does not wait for it (Kafka forwards on an executor)."""
    received: list[Any] = []

    class SlowLeader(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(3)
            received.append((self.path, orjson.loads(body)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowLeader)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        leader.configs.put_connector_config("f", {"name": "f", **_source(tmp_path, "f")}, None)
        leader.member = SimpleNamespace(
            is_leader=False, leader_url=f"http://127.0.0.1:{server.server_port}/",
            request_rejoin=lambda: None, rejoin_needed=False, wakeup=lambda: None,
        )  # fmt: skip
        _assign(leader, "f")
        started = time.monotonic()
        leader.tick()
        assert time.monotonic() - started < 2.0
        deadline = time.monotonic() + 15
        while not received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [path for path, _ in received] == ["/connectors/f/tasks?forward=true"]
        assert received[0][1][0]["file"] == str(tmp_path / "f.txt")
    finally:
        server.shutdown()
        server.server_close()
