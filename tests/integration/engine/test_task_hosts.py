"""Task hosts against the real lease-control server, without Spark: hosts run as threads here
(on an executor each is a Spark task), leases are real (the broker is real)."""

from __future__ import annotations

import http.client
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkcat.engine.control_server import ControlServer
from sparkcat.engine.task_hosts import TaskHosts, host_count
from sparkcat.runtime.tasks.host import run_host
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec

RECORDING = "sparkcat_test_plugins:RecordingSourceTask"


class Results:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.got: dict[str, LeaseResult | None] = {}

    def __call__(self, lease_id: str, result: LeaseResult | None) -> None:
        with self.lock:
            assert lease_id not in self.got, "a lease reported twice"
            self.got[lease_id] = result

    def wait(self, ids: list[str], timeout: float) -> dict[str, LeaseResult | None]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(i in self.got for i in ids):
                    return {i: self.got[i] for i in ids}
            time.sleep(0.02)
        raise AssertionError(f"{len(set(ids) - set(self.got))} of {len(ids)} results missing")


@pytest.fixture
def hosts() -> Iterator[tuple[ControlServer, TaskHosts]]:
    control = ControlServer({"spark.master": "local[2]"})
    pool = TaskHosts(None, control, {})
    yield control, pool
    pool.close()
    control.close()


def start_host(control: ControlServer, index: int) -> threading.Thread:
    thread = threading.Thread(
        target=run_host, args=(control.base_url, control.token, index), daemon=True
    )
    thread.start()
    return thread


def wait_hosts(pool: TaskHosts, count: int) -> None:
    deadline = time.monotonic() + 10
    while pool.hosts_up() < count:
        assert time.monotonic() < deadline, "hosts did not come up"
        time.sleep(0.02)


def source_spec(
    servers: str, plugins: Path, events: Path, control: str | None, **task: str
) -> LeaseSpec:
    config = {
        "name": "hosted",
        "connector.class": "sparkcat_test_plugins:RecordingSourceConnector",
        "topic": f"hosted-{uuid.uuid4().hex[:8]}",
        "events.file": str(events),
        "task.class": RECORDING,
        **task,
    }
    worker = {
        "bootstrap.servers": servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins),
    }
    return LeaseSpec("hosted", 0, 0, "source", config, config, worker, 60_000, 10**9, control)


def test_every_lease_of_many_returns_once_across_two_hosts(
    hosts: tuple[ControlServer, TaskHosts],
) -> None:
    control, pool = hosts
    results = Results()
    # Leases queued before any host is up wait for one (the Spark job is still starting).
    bogus = LeaseSpec("c", 0, 0, "bogus", {}, {}, {}, 1000, 10, None)  # type: ignore[arg-type]
    early = [pool.submit(bogus, results) for _ in range(20)]
    start_host(control, 0)
    start_host(control, 1)
    wait_hosts(pool, 2)
    late = [pool.submit(bogus, results) for _ in range(280)]
    got = results.wait(early + late, 20)
    assert all(r is not None and "Unknown lease kind" in (r.trace or "") for r in got.values())


def test_a_pause_reaches_a_hosted_lease_through_the_hosts_poll(
    hosts: tuple[ControlServer, TaskHosts], kafka_broker: Any, plugins_dir: Path, tmp_path: Path
) -> None:
    control, pool = hosts
    start_host(control, 0)
    wait_hosts(pool, 1)
    channel = control.open_channel("run")
    address = control.new_issue(channel)
    results = Results()
    events = tmp_path / "events"
    spec = source_spec(kafka_broker.bootstrap_servers, plugins_dir, events, address)
    lease = pool.submit(spec, results)
    deadline = time.monotonic() + 20
    while "poll" not in (events.read_text() if events.exists() else ""):
        assert time.monotonic() < deadline, "the lease never polled"
        time.sleep(0.05)
    paused = time.monotonic()
    control.set_state(channel, "pause")
    result = results.wait([lease], 5)[lease]
    assert result is not None and result.trace is None and result.records > 0
    assert time.monotonic() - paused < 2.0  # a 60 s lease, ended by the pause


def test_a_replaced_host_s_leases_are_reported_lost(
    hosts: tuple[ControlServer, TaskHosts], kafka_broker: Any, plugins_dir: Path, tmp_path: Path
) -> None:
    control, pool = hosts
    old = start_host(control, 0)
    wait_hosts(pool, 1)
    results = Results()
    events = tmp_path / "events"
    block = tmp_path / "block"
    block.touch()  # the task hangs in poll(), as a task stuck in an external call
    spec = source_spec(
        kafka_broker.bootstrap_servers, plugins_dir, events, None, **{"block.file": str(block)}
    )
    lease = pool.submit(spec, results)
    deadline = time.monotonic() + 20
    while "blocked" not in (events.read_text() if events.exists() else ""):
        assert time.monotonic() < deadline, "the lease never blocked"
        time.sleep(0.05)
    # Spark runs partition 0 again (its executor died): the new attempt's first poll makes
    # the old attempt lost, and with it its lease.
    conn = http.client.HTTPConnection(*control.base_url.removeprefix("http://").split(":"))
    conn.request(
        "GET",
        "/v1/hosts/0-retry?acked=0&since=-1&wait_ms=0",
        headers={"Authorization": f"Bearer {control.token}"},
    )
    assert conn.getresponse().status == 200
    conn.close()
    assert results.wait([lease], 5)[lease] is None
    old.join(15)  # told it is gone, the old attempt ends (its hung thread is left behind)
    assert not old.is_alive()


def test_host_count_defaults() -> None:
    assert host_count(None, "local[12,2]", 12) == 4
    assert host_count(None, "local[2]", 2) == 1
    assert host_count(None, "spark://m:7077", 6) == 3
    assert host_count("7", "local[2]", 2) == 7
    with pytest.raises(ValueError, match=r"sparkcat\.task\.hosts"):
        host_count("0", "local[2]", 2)


def test_a_lease_no_host_takes_fails_its_task_saying_why(
    hosts: tuple[ControlServer, TaskHosts], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkcat.engine import task_hosts

    monkeypatch.setattr(task_hosts, "BACKLOG_TIMEOUT_S", 0.5)
    _, pool = hosts
    results = Results()
    spec = LeaseSpec("c", 3, 7, "source", {}, {}, {}, 1000, 10, None)
    lease = pool.submit(spec, results)  # no host ever comes up
    result = results.wait([lease], 5)[lease]
    assert result is not None and (result.connector, result.task, result.generation) == ("c", 3, 7)
    assert "no task host took this task's lease" in (result.trace or "")
