"""Exactly-once source delivery (KIP-618) through ``kill -9``: two real ``sparkcat
distributed`` workers with ``exactly.once.source.support=enabled``; the worker running a
source task is killed mid-stream; its task resumes on the other worker. Read through the
committed reader (the broker shows aborted records), every record is there exactly once, in
order per partition, and the offsets topics agree.

The connector keeps its offsets in a topic of its own (``offsets.storage.topic``), which
already holds task 1's start (``n=0``) while the worker's global topic holds a wrong one
(``n=5000``): task 1 only writes ``1:0`` onwards if the worker reads the connector's topic
first, and task 0 resumes after the kill from what the connector's topic says."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    PLUGINS_DIR,
    DistributedWorker,
    edit_properties,
    wait_for,
)

from sparkcat.runtime.stores.offsets import offset_key_bytes, offset_value_bytes
from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

STRING = "org.apache.kafka.connect.storage.StringConverter"
PER_TASK = 10_000
START_TIMEOUT_S = 300.0
FAILOVER_TIMEOUT_S = 180.0


def _worker(directory: Path, servers: str, prefix: str, i: int) -> DistributedWorker:
    props = edit_properties(
        CONFIG_DIR / "connect-distributed.properties",
        directory / f"worker-{i}.properties",
        {
            "bootstrap.servers": servers,
            "group.id": f"{prefix}-group",
            "config.storage.topic": f"{prefix}-configs",
            "offset.storage.topic": f"{prefix}-offsets",
            "status.storage.topic": f"{prefix}-status",
            "offset.storage.partitions": "5",
            "status.storage.partitions": "2",
            "listeners": f"http://127.0.0.1:{free_port()}",
            "rest.advertised.host.name": "127.0.0.1",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "1000",
            "key.converter": STRING,
            "value.converter": STRING,
            "plugin.path": str(PLUGINS_DIR),
            "exactly.once.source.support": "enabled",
            "spark.master": "local[2,2]",
            "spark.driver.memory": "512m",
            "max.batch.ms": "500",
        },
    )
    return DistributedWorker(props, [], directory / f"worker-{i}.log").start()


def _seed_offsets(servers: str, prefix: str) -> str:
    """The global offsets topic says task 1 starts at 5000, the connector's own topic at 0."""
    own = f"{prefix}-seq-offsets"
    compact = {"cleanup.policy": "compact"}
    admin = AdminClient({"bootstrap.servers": servers})
    made = admin.create_topics(
        [NewTopic(t, 5, 1, config=compact) for t in (f"{prefix}-offsets", own)]
    )
    for future in made.values():
        future.result(30)
    producer = Producer({"bootstrap.servers": servers, "partitioner": "murmur2_random"})
    key = offset_key_bytes("seq", {"task": "1"})
    producer.produce(f"{prefix}-offsets", offset_value_bytes({"n": 5000}), key)
    producer.produce(own, offset_value_bytes({"n": 0}), key)
    assert producer.flush(30) == 0
    return own


def _offsets(servers: str, topic: str) -> dict[bytes, Any]:
    latest: dict[bytes, Any] = {}
    for record in read_topic(servers, topic).records:
        assert record.key is not None
        latest[record.key] = None if record.value is None else orjson.loads(record.value)
    return latest


def test_kill_9_mid_stream_every_record_exactly_once(kafka_broker: Any, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    prefix = f"eos-{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}-data"
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    own_offsets = _seed_offsets(servers, prefix)
    started = time.monotonic()
    workers = [_worker(tmp_path, servers, prefix, i) for i in range(2)]
    try:
        for w in workers:
            wait_for(lambda w=w: w.role() is not None, START_TIMEOUT_S,  # type: ignore[misc]
                     "the worker to join the group", 0.5, w)  # fmt: skip
        config = {
            "connector.class": "sparkcat_eos_plugins:SequenceSourceConnector",
            "tasks.max": "2", "topic": topic, "records.total": str(PER_TASK),
            "batch.size": "100", "poll.sleep.ms": "30", "partition.per.task": "true",
            "exactly.once.support": "required", "offsets.storage.topic": own_offsets,
        }  # fmt: skip
        created = wait_for(
            lambda: workers[0].post("/connectors", {"name": "seq", "config": config}).status_code
            == 201, 120, "the connector to be created", 1.0)  # fmt: skip
        assert created

        def running_task_0() -> str | None:
            status = workers[0].status("seq")
            tasks = {t["id"]: t for t in (status or {}).get("tasks", [])}
            task = tasks.get(0)
            return task["worker_id"] if task and task["state"] == "RUNNING" else None

        owner = wait_for(running_task_0, START_TIMEOUT_S, "task 0 to run", 0.5)
        wait_for(lambda: len(read_topic(servers, topic, [0]).records) >= 2000, START_TIMEOUT_S,
                 "task 0 to commit records", 0.2)  # fmt: skip
        victim = next(w for w in workers if w.worker_id == owner)
        killed_at = time.monotonic()
        victim.kill_group()
        before = len(read_topic(servers, topic, [0]).records)
        survivor = next(w for w in workers if w is not victim)
        # The moved task's first committed record: within session.timeout.ms (6 s) +
        # scheduled.rebalance.max.delay.ms (1 s) + 10 s of the kill.
        wait_for(lambda: len(read_topic(servers, topic, [0]).records) > before, 60,
                 "the moved task's first committed record", 0.2, survivor)  # fmt: skip
        first_commit_s = time.monotonic() - killed_at

        def all_committed() -> bool:
            return len(read_topic(servers, topic).records) >= 2 * PER_TASK

        try:
            wait_for(all_committed, FAILOVER_TIMEOUT_S, "every record committed", 1.0, survivor)
        except AssertionError as exc:
            view = read_topic(servers, topic)
            seen = {p: {v for v in view.values(p) if v is not None} for p in (0, 1)}
            missing = {
                p: sorted(n for n in range(PER_TASK) if f"{p}:{n}".encode() not in seen[p])
                for p in (0, 1)
            }
            raise AssertionError(
                f"{exc}\nmissing per partition (first 5, count): "
                f"{ {p: (m[:5], len(m)) for p, m in missing.items()} }; committed "
                f"{len(view.records)}, aborted {len(view.aborted)}, open {len(view.open)}; "
                f"offsets {_offsets(servers, own_offsets)}"
            ) from None
        view = read_topic(servers, topic)
        for partition in (0, 1):
            expected = [f"{partition}:{n}".encode() for n in range(PER_TASK)]
            assert view.values(partition) == expected  # exactly once, in order
        own, worker_wide = _offsets(servers, own_offsets), _offsets(servers, f"{prefix}-offsets")
        for task in ("0", "1"):
            key = orjson.dumps(["seq", {"task": task}])
            assert own[key] == {"n": PER_TASK}
            assert worker_wide[key] == {"n": PER_TASK}  # written to both, as Kafka
        print(
            f"kill -9 mid-stream: {len(view.aborted)} aborted records left by the killed worker; "
            f"start to kill {killed_at - started:.0f} s, kill to the first committed record "
            f"{first_commit_s:.1f} s, to all committed {time.monotonic() - killed_at:.0f} s"
        )
        assert first_commit_s <= 6 + 1 + 10
    finally:
        for w in workers:
            w.cleanup()
