"""Transactional source leases (KIP-618) against the real broker, without Spark; what reached
Kafka is read through the committed reader (the broker shows aborted records)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from sparkcat.engine.control_server import ControlServer
from sparkcat.runtime.tasks.exactly_once.committed_reader import TopicView, read_topic
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"
SEQUENCE = "sparkcat_eos_plugins:SequenceSourceTask"
STRING = "org.apache.kafka.connect.storage.StringConverter"


class Pipeline:
    """One connector's names: data topic, offsets topic, group."""

    def __init__(self, servers: str, unique_topic: Callable[[str], str]) -> None:
        self.servers = servers
        self.connector = f"eos-{uuid.uuid4().hex[:8]}"
        self.topic = unique_topic("data")
        self.offsets_topic = unique_topic("offsets")
        self.group = f"group-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": servers})
        admin.create_topics([NewTopic(self.topic, 1, 1)])[self.topic].result(30)

    def spec(
        self,
        task_config: dict[str, str],
        connector_config: dict[str, str] | None = None,
        *,
        generation: int = 1,
        max_records: int = 1_000_000,
        max_ms: int = 20_000,
        offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = (),
        control: str | None = None,
    ) -> LeaseSpec:
        return LeaseSpec(
            connector=self.connector,
            task=0,
            generation=generation,
            kind="source",
            task_config={"task.class": SEQUENCE, "topic": self.topic, **task_config},
            connector_config=connector_config or {},
            worker_config={
                "bootstrap.servers": self.servers,
                "key.converter": STRING,
                "value.converter": STRING,
                "plugin.path": str(PLUGINS),
                "group.id": self.group,
                "exactly.once.source.support": "enabled",
                "offset.storage.topic": self.offsets_topic,
                "offset.storage.partitions": "3",
            },
            max_ms=max_ms,
            max_records=max_records,
            control=control,
            source_offsets=offsets,
        )

    def data(self) -> TopicView:
        return read_topic(self.servers, self.topic)

    def stored_offsets(self) -> dict[bytes, Any]:
        """The offsets topic as a compacted map, committed records only."""
        latest: dict[bytes, Any] = {}
        for record in read_topic(self.servers, self.offsets_topic).records:
            assert record.key is not None
            latest[record.key] = None if record.value is None else orjson.loads(record.value)
        return latest

    def offset_key(self) -> bytes:
        return orjson.dumps([self.connector, {"task": "0"}])


def values(first: int, end: int, task: str = "0") -> list[bytes]:
    return [f"{task}:{n}".encode() for n in range(first, end)]


@pytest.fixture
def pipeline(servers: str, unique_topic: Callable[[str], str]) -> Pipeline:
    return Pipeline(servers, unique_topic)


def transaction_sizes(result: LeaseResult) -> tuple[float, ...]:
    """(transactions, records in them, smallest, largest) the lease reports for the
    source-task-metrics transaction-size-min/max/avg."""
    m = result.task_metrics
    keys = ("transactions", "transaction.size", "transaction.size.min", "transaction.size.max")
    return tuple(m[k] for k in keys)


def ok(result: LeaseResult) -> LeaseResult:
    assert result.trace is None, result.trace
    return result


def test_poll_boundary_commits_each_batch_with_its_offsets(pipeline: Pipeline) -> None:
    config = {"records.total": "1000", "batch.size": "100"}
    first = ok(run_lease(pipeline.spec(config, max_records=600)))
    assert (first.records, first.source_offsets) == (600, (({"task": "0"}, {"n": 600}),))
    view = pipeline.data()
    assert view.values() == values(0, 600)
    assert view.commit_markers == 6  # one transaction per poll batch
    assert transaction_sizes(first) == (6, 600, 100, 100)
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 600}}

    resume = pipeline.spec(config, offsets=first.source_offsets, max_records=400)  # type: ignore[arg-type]
    second = ok(run_lease(resume))
    assert second.records == 400
    assert pipeline.data().values() == values(0, 1000)
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 1000}}


def test_interval_boundary_spans_several_polls(pipeline: Pipeline) -> None:
    config = {"records.total": "2000", "batch.size": "50", "poll.sleep.ms": "5"}
    connector = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "100"}
    result = ok(run_lease(pipeline.spec(config, connector, max_records=2000)))
    assert result.records == 2000
    view = pipeline.data()
    assert view.values() == values(0, 2000)
    assert 1 <= view.commit_markers < 40  # 40 polls, fewer transactions
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 2000}}


def test_connector_boundary_commits_and_aborts_on_request(pipeline: Pipeline) -> None:
    # Commit after every 1,000th record, abort the third thousand; 300 per poll, so the
    # boundaries fall inside batches. Records 5,000..5,199 end the lease uncommitted.
    config = {
        "records.total": "5200", "batch.size": "300", "commit.every": "1000", "abort.at": "3000",
    }  # fmt: skip
    connector = {"transaction.boundary": "connector"}
    result = ok(run_lease(pipeline.spec(config, connector, max_records=5200)))
    assert result.records == 4000
    assert result.source_offsets == (({"task": "0"}, {"n": 5000}),)
    # transaction-size-*: the four committed thousands (aborted and discarded ones not)
    assert transaction_sizes(result) == (4, 4000, 1000, 1000)
    view = pipeline.data()
    assert view.values() == values(0, 2000) + values(3000, 5000)
    # Aborted records may never have left the producer (an abort purges its queue); those
    # that reached the log are marked aborted.
    assert {r.value for r in view.aborted} <= set(values(2000, 3000) + values(5000, 5200))
    assert view.open == []
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 5000}}


def test_stopped_comes_after_the_final_commit(pipeline: Pipeline, tmp_path: Path) -> None:
    report = tmp_path / "stopped"
    config = {
        "records.total": "500", "batch.size": "100", "stopped.report": str(report),
        "report.servers": pipeline.servers,
    }  # fmt: skip
    interval = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "600000"}
    assert ok(run_lease(pipeline.spec(config, interval, max_records=500))).records == 500
    assert report.read_text() == "500 0"  # all committed, nothing open, when stopped() ran


def test_zombie_lease_is_fenced_and_its_records_aborted(pipeline: Pipeline, tmp_path: Path) -> None:
    release = tmp_path / "release"
    zombie_config = {
        "records.total": "1000", "batch.size": "100", "stall.after": "300",
        "release.file": str(release),
    }  # fmt: skip
    interval = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "600000"}
    results: list[LeaseResult] = []
    zombie = threading.Thread(
        target=lambda: results.append(
            run_lease(pipeline.spec(zombie_config, interval, max_records=1000, max_ms=60_000))
        )
    )
    zombie.start()
    try:
        deadline = time.monotonic() + 30
        while len(pipeline.data().open) < 300:  # the zombie's open transaction
            assert time.monotonic() < deadline, "the zombie lease never produced"
            time.sleep(0.05)
        # The next generation's lease: its init_transactions fences the zombie.
        fresh = ok(
            run_lease(pipeline.spec({"records.total": "1000"}, generation=2, max_records=1000))
        )
        assert fresh.records == 1000
    finally:
        release.touch()
        zombie.join(60)
    (stale,) = results
    assert stale.trace is not None and stale.records == 0 and stale.source_offsets == ()
    view = pipeline.data()
    assert view.values() == values(0, 1000)
    assert [r.value for r in view.aborted] == values(0, 300)
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 1000}}


def test_late_lease_of_a_stopped_connector_writes_nothing(
    pipeline: Pipeline, control: ControlServer
) -> None:
    channel = control.open_channel("stop")
    try:
        result = ok(run_lease(pipeline.spec({"records.total": "100"}, control=channel)))
    finally:
        control.close_channel(channel)
    assert (result.records, result.polled, result.source_offsets) == (0, 0, ())
    assert pipeline.data().records == []


def test_a_retry_of_a_lease_of_an_earlier_assignment_never_writes(
    pipeline: Pipeline, control: ControlServer, tmp_path: Path
) -> None:
    """A Spark retry of a lease issued before its task moved to another worker, on a worker
    that still runs other tasks of the connector: its channel answers ``stale``, so it ends
    before creating a transactional producer, and the new owner's transaction survives."""
    channel = control.open_channel("run")
    issued_before_the_move = control.new_issue(channel)
    control.new_issue(channel)  # the task moved away; other tasks of the connector stay here
    release = tmp_path / "release"
    owner_config = {
        "records.total": "1000", "batch.size": "100", "stall.after": "300",
        "release.file": str(release),
    }  # fmt: skip
    interval = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "600000"}
    results: list[LeaseResult] = []
    owner = threading.Thread(  # the new owner, on another worker: no shared channel
        target=lambda: results.append(
            run_lease(pipeline.spec(owner_config, interval, max_records=1000, max_ms=60_000))
        )
    )
    owner.start()
    try:
        deadline = time.monotonic() + 30
        while len(pipeline.data().open) < 300:  # the owner's transaction is open
            assert time.monotonic() < deadline, "the owner's lease never produced"
            time.sleep(0.05)
        retry = pipeline.spec({"records.total": "1000"}, control=issued_before_the_move)
        stale = ok(run_lease(retry))
        assert (stale.records, stale.polled, stale.source_offsets) == (0, 0, ())
        assert len(pipeline.data().open) == 300 and pipeline.data().aborted == []
    finally:
        release.touch()
        owner.join(60)
        control.close_channel(channel)
    (current,) = results
    assert ok(current).records == 1000
    view = pipeline.data()
    assert view.values() == values(0, 1000) and view.aborted == [] and view.open == []
    assert pipeline.stored_offsets() == {pipeline.offset_key(): {"n": 1000}}
