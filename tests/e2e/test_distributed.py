"""A cluster of three real ``sparkcat distributed`` workers on the session broker, each with
its own local Spark, driven over REST (docs/distributed.md).

The cluster starts once for the module; the tests run in order and the later ones restart,
add and kill workers: a connector created through a follower, the same status from every
worker and work spread over them; the offsets API (KIP-875) and ``initial_offsets``
(KIP-995) through a follower; the config topic's tombstones after a delete; the topics a
task used (KIP-558) as status records every worker answers, across a restart; a SIGTERM rolling
restart of every worker while a pipeline runs (every line once); a fourth worker joining
(work moves to it, what is not moved never stops); ``kill -9`` of the worker running the
source task (its task resumes on another worker from the committed offsets and every line
arrives); ``kill -9`` of the leader (another leads, creates still work).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tests.support.files import lines_of
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    JOINED,
    SPARKCAT,
    WRITE_TIMEOUT_S,
    DistributedWorker,
    count_lines,
    edit_properties,
    wait_for,
)

from sparkcat.runtime.distributed.herder import STALE_CONFIG_MESSAGE

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

STRING = "org.apache.kafka.connect.storage.StringConverter"
CLUSTER_TIMEOUT_S = 300.0
FAILOVER_TIMEOUT_S = 120.0


@dataclass
class Cluster:
    workers: list[DistributedWorker]
    directory: Path
    topic_prefix: str
    servers: str

    def alive(self) -> list[DistributedWorker]:
        return [w for w in self.workers if not w.exited()]

    def by_id(self, worker_id: str) -> DistributedWorker:
        return next(w for w in self.workers if w.worker_id == worker_id)

    def leader(self) -> DistributedWorker:
        worker: DistributedWorker = wait_for(
            lambda: next((w for w in self.alive() if w.role() == "leader"), None),
            FAILOVER_TIMEOUT_S, "a leader",
        )  # fmt: skip
        return worker

    def follower(self) -> DistributedWorker:
        leader = self.leader()
        return next(w for w in self.alive() if w is not leader)


@pytest.fixture(scope="module")
def cluster(kafka_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("cluster")
    prefix = f"dist-{uuid.uuid4().hex[:8]}"
    servers = kafka_broker.bootstrap_servers
    workers = [_worker(servers, directory, prefix, i).start() for i in range(3)]
    try:
        for worker in workers:
            wait_for(lambda w=worker: w.role() is not None, CLUSTER_TIMEOUT_S,  # type: ignore[misc]
                     "the worker to join the group", 0.5, worker)  # fmt: skip
        yield Cluster(workers, directory, prefix, servers)
    finally:
        _stop_all(workers)


def _worker(servers: str, directory: Path, prefix: str, i: int) -> DistributedWorker:
    """Worker ``i`` of the cluster, not started: its properties and log in ``directory``."""
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
            "session.timeout.ms": "10000",
            "heartbeat.interval.ms": "2000",
            "scheduled.rebalance.max.delay.ms": "3000",
            "key.converter": STRING,
            "value.converter": STRING,
            "spark.master": "local[2,2]",
            "spark.driver.memory": "512m",
            "max.batch.ms": "1000",
            "offset.flush.interval.ms": "2000",
        },
    )
    return DistributedWorker(props, [], directory / f"worker-{i}.log")


def _stop_all(workers: list[DistributedWorker]) -> None:
    """SIGTERM every worker at once, then wait (one at a time took ~10 s per worker)."""
    running = [w for w in workers if not w.exited()]
    for worker in running:
        worker.remember_processes()
        assert worker.proc is not None
        worker.proc.send_signal(signal.SIGTERM)
    for worker in running:
        assert worker.proc is not None
        try:
            worker.proc.wait(90)
        except subprocess.TimeoutExpired:
            pass
    for worker in workers:
        worker.cleanup()


def _source(name: str, path: Path, topic: str) -> dict[str, Any]:
    config = {"connector.class": "FileStreamSource", "tasks.max": "1", "file": str(path),
              "topic": topic}  # fmt: skip
    return {"name": name, "config": config}


def _sink(name: str, path: Path, topic: str) -> dict[str, Any]:
    config = {"connector.class": "FileStreamSink", "tasks.max": "1", "file": str(path),
              "topics": topic}  # fmt: skip
    return {"name": name, "config": config}


def _statuses(worker: DistributedWorker, names: list[str]) -> list[Any] | None:
    result = []
    for name in names:
        status = worker.status(name)
        if status is None or status["connector"]["state"] != "RUNNING":
            return None
        if not status["tasks"] or any(t["state"] != "RUNNING" for t in status["tasks"]):
            return None
        result.append(status)
    return result


def _same_status_everywhere(cluster: Cluster, names: list[str]) -> list[Any] | None:
    seen = [_statuses(w, names) for w in cluster.alive()]
    if any(s is None for s in seen) or any(s != seen[0] for s in seen):
        return None
    return seen[0]


def _unless_rebalancing(response: Any) -> Any:
    rebalancing = response.status_code == 409 and response.json()["message"] in (
        STALE_CONFIG_MESSAGE, "Cannot complete request because of a conflicting operation "
        "(e.g. worker rebalance)")  # fmt: skip
    return None if rebalancing else response


def _write_lines(path: Path, start: int, count: int) -> list[str]:
    lines = [f"line-{i:07d}" for i in range(start, start + count)]
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(f"{line}\n" for line in lines))
    return lines


def test_created_through_a_follower_same_status_everywhere_work_spread(cluster: Cluster) -> None:
    d, p = cluster.directory, cluster.topic_prefix
    follower = cluster.follower()
    lines = _write_lines(d / "a.txt", 0, 1000)
    _write_lines(d / "b.txt", 0, 10)
    for body in (
        _source("src-a", d / "a.txt", f"{p}-a"),
        _sink("sink-a", d / "a.sink.txt", f"{p}-a"),
        _source("src-b", d / "b.txt", f"{p}-b"),
    ):
        response = follower.post("/connectors", body)
        assert response.status_code == 201, response.text
        assert response.json()["name"] == body["name"]
        assert response.headers["Location"] == f"{follower.url}/connectors/{body['name']}"
    # Creating connectors rebalances the group; meanwhile the leader answers Kafka's 409
    # "stale configuration", as Kafka's does, and a client tries again.
    duplicate = wait_for(
        lambda: _unless_rebalancing(
            follower.post("/connectors", _source("src-a", d / "a.txt", f"{p}-a"))
        ),
        CLUSTER_TIMEOUT_S, "an answer outside a rebalance", 0.5,
    )  # fmt: skip
    assert duplicate.status_code == 409
    assert duplicate.json() == {"error_code": 409, "message": "Connector src-a already exists"}

    names = ["src-a", "sink-a", "src-b"]
    statuses = wait_for(lambda: _same_status_everywhere(cluster, names), CLUSTER_TIMEOUT_S,
                        "the same RUNNING status on every worker", 0.5)  # fmt: skip
    owners = {s["connector"]["worker_id"] for s in statuses}
    owners |= {t["worker_id"] for s in statuses for t in s["tasks"]}
    assert owners <= {w.worker_id for w in cluster.workers}
    assert len(owners) >= 2, statuses
    for worker in cluster.workers:
        assert sorted(worker.get("/connectors")) == sorted(names)
    wait_for(lambda: set(lines) <= set(lines_of(d / "a.sink.txt")), 180,
             "the lines in the sink file")  # fmt: skip


def _states_everywhere(cluster: Cluster, name: str) -> set[tuple[str, tuple[str, ...]]]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for worker in cluster.alive():
        status = worker.status(name)
        if status is None:
            seen.add(("none", ()))
        else:
            seen.add((status["connector"]["state"], tuple(t["state"] for t in status["tasks"])))
    return seen


def test_pause_resume_stop_delete_through_a_follower(cluster: Cluster) -> None:
    follower = cluster.follower()

    def everywhere(expected: tuple[str, tuple[str, ...]]) -> bool:
        return _states_everywhere(cluster, "src-b") == {expected}

    def put(path: str) -> int:
        return follower.client.put(path, timeout=WRITE_TIMEOUT_S).status_code

    assert put("/connectors/src-b/pause") == 202
    wait_for(lambda: everywhere(("PAUSED", ("PAUSED",))), 120, "src-b PAUSED everywhere", 0.5)
    assert put("/connectors/src-b/resume") == 202
    wait_for(lambda: everywhere(("RUNNING", ("RUNNING",))), 120, "src-b RUNNING again", 0.5)
    assert put("/connectors/src-b/stop") == 204
    wait_for(lambda: everywhere(("STOPPED", ())), 120, "src-b STOPPED everywhere", 0.5)
    assert follower.get("/connectors/src-b/tasks") == []
    assert follower.client.delete("/connectors/src-b", timeout=WRITE_TIMEOUT_S).status_code == 204
    for worker in cluster.alive():
        wait_for(lambda w=worker: "src-b" not in w.get("/connectors"), 60,  # type: ignore[misc]
                 "src-b gone", 0.5)  # fmt: skip
        assert worker.client.get("/connectors/src-b").status_code == 404


NOT_STOPPED = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
    "done for the specified connector by issuing a 'PUT' request to the "
    "'/connectors/{}/stop' endpoint"
)


def _offsets_everywhere(cluster: Cluster, name: str, expected: list[Any]) -> None:
    """Every worker answers ``GET .../offsets`` with ``expected`` (the connector runs nowhere).

    A worker that has not yet read the connector's config record answers 404, as Kafka's
    does: each worker reads the config topic on its own, so wait for that first."""
    for worker in cluster.alive():

        def known(worker: DistributedWorker = worker) -> Any:
            response = worker.client.get(f"/connectors/{name}/offsets", timeout=WRITE_TIMEOUT_S)
            return None if response.status_code == 404 else response

        response = wait_for(known, 30, f"{name} known to {worker.url}", 0.1)
        assert response.status_code == 200, response.text
        assert response.json() == {"offsets": expected}, worker.url


def _modify(worker: DistributedWorker, method: str, name: str, body: Any = None) -> Any:
    return worker.client.request(method, f"/connectors/{name}/offsets", json=body,
                                 timeout=WRITE_TIMEOUT_S)  # fmt: skip


def test_source_offsets_through_a_follower_initial_get_patch_delete(cluster: Cluster) -> None:
    d, p = cluster.directory, cluster.topic_prefix
    follower = cluster.follower()
    partition = {"filename": str(d / "o.txt")}
    body = {**_source("src-o", d / "o.txt", f"{p}-o"), "initial_state": "STOPPED",
            "initial_offsets": [{"partition": partition, "offset": {"position": 7}}]}  # fmt: skip
    created = follower.post("/connectors", body)
    assert created.status_code == 201, created.text
    assert created.json()["offsets_status"] == (
        "The offsets for this connector have been set successfully"
    )
    wait_for(lambda: _states_everywhere(cluster, "src-o") == {("STOPPED", ())}, 120,
             "src-o STOPPED everywhere", 0.5)  # fmt: skip
    _offsets_everywhere(cluster, "src-o", [{"partition": partition, "offset": {"position": 7}}])

    altered = _modify(
        follower,
        "PATCH",
        "src-o",
        {"offsets": [{"partition": partition, "offset": {"position": 3}}]},
    )
    assert altered.status_code == 200, altered.text
    assert altered.json() == {
        "message": "The offsets for this connector have been altered successfully"
    }
    _offsets_everywhere(cluster, "src-o", [{"partition": partition, "offset": {"position": 3}}])
    reset = _modify(follower, "DELETE", "src-o")
    assert reset.status_code == 200, reset.text
    assert reset.json() == {
        "message": "The offsets for this connector have been reset successfully"
    }
    _offsets_everywhere(cluster, "src-o", [])
    records = _read_topic(cluster.servers, f"{p}-offsets")
    key = f'["src-o",{{"filename":"{d / "o.txt"}"}}]'
    assert [v for k, v in records if k == key] == [{"position": 7}, {"position": 3}, None]

    for method in ("PATCH", "DELETE"):
        refused = _modify(
            follower, method, "src-a", {"offsets": [{"partition": partition, "offset": None}]}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["message"] == NOT_STOPPED.format("src-a")
    missing = follower.client.get("/connectors/nope/offsets")
    assert missing.status_code == 404
    assert missing.json()["message"] == "Connector nope not found"


def test_sink_offsets_through_a_follower_initial_get_patch_delete(cluster: Cluster) -> None:
    d, p = cluster.directory, cluster.topic_prefix
    from confluent_kafka.admin import AdminClient

    from sparkcat.kafka import admin as kafka_admin

    follower = cluster.follower()
    admin = AdminClient({"bootstrap.servers": cluster.servers})
    kafka_admin.ensure_topics(admin, [kafka_admin.TopicSpec(f"{p}-o", 1, 1, {})])
    partition = {"kafka_topic": f"{p}-o", "kafka_partition": 0}
    body = {
        **_sink("sink-o", d / "o.sink.txt", f"{p}-o"),
        "initial_state": "STOPPED",
        "initial_offsets": [{"partition": partition, "offset": {"kafka_offset": 5}}],
    }
    created = follower.post("/connectors", body)  # fmt: skip
    assert created.status_code == 201, created.text
    assert created.json()["offsets_status"] == (
        "The offsets for this connector have been set successfully"
    )
    _offsets_everywhere(cluster, "sink-o", [{"partition": partition,
                                              "offset": {"kafka_offset": 5}}])  # fmt: skip
    altered = _modify(
        follower,
        "PATCH",
        "sink-o",
        {"offsets": [{"partition": partition, "offset": {"kafka_offset": 2}}]},
    )
    assert altered.status_code == 200, altered.text
    assert altered.json()["message"] == (
        "The offsets for this connector have been altered successfully"
    )
    _offsets_everywhere(cluster, "sink-o", [{"partition": partition,
                                              "offset": {"kafka_offset": 2}}])  # fmt: skip
    reset = _modify(follower, "DELETE", "sink-o")
    assert reset.status_code == 200, reset.text
    assert reset.json()["message"] == "The offsets for this connector have been reset successfully"
    _offsets_everywhere(cluster, "sink-o", [])

    # A running sink: GET answers from its consumer group; PATCH is refused.
    answer = follower.client.get("/connectors/sink-a/offsets", timeout=WRITE_TIMEOUT_S)
    assert answer.status_code == 200, answer.text
    assert {e["partition"]["kafka_topic"] for e in answer.json()["offsets"]} <= {f"{p}-a"}
    refused = _modify(
        follower, "PATCH", "sink-a", {"offsets": [{"partition": partition, "offset": None}]}
    )
    assert refused.status_code == 400
    assert refused.json()["message"] == NOT_STOPPED.format("sink-a")


def _topic_ends(servers: str, topic: str) -> dict[int, int]:
    """``{partition: end offset}`` of ``topic``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"read-{uuid.uuid4().hex}"})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return {n: consumer.get_watermark_offsets(TopicPartition(topic, n), 10)[1]
                for n in partitions}  # fmt: skip
    finally:
        consumer.close()


def _read_topic(
    servers: str,
    topic: str,
    since: dict[int, int] | None = None,
    until: dict[int, int] | None = None,
) -> list[tuple[str, Any]]:
    """Every record of a one- or many-partition topic (from offsets ``since`` to ``until``,
    per partition): (key, JSON value or None), in order per partition."""
    import json

    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"read-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        records = []
        for partition in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), 10)
            low = max(low, (since or {}).get(partition, 0))
            high = min(high, (until or {}).get(partition, high))
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, partition, low)])
            read = 0
            while read < high - low:
                message = consumer.poll(5)
                assert message is not None and not message.error(), message
                read += 1
                value = message.value()
                key = (message.key() or b"").decode()
                records.append((key, None if value is None else json.loads(value)))
        return records
    finally:
        consumer.close()


def test_internal_topics_hold_kafkas_records(cluster: Cluster, kafka_broker: Any) -> None:
    p = cluster.topic_prefix
    configs = dict(_read_topic(kafka_broker.bootstrap_servers, f"{p}-configs"))
    assert configs["connector-src-a"] == {"properties": {
        "connector.class": "FileStreamSource", "tasks.max": "1",
        "file": str(cluster.directory / "a.txt"), "topic": f"{p}-a", "name": "src-a"}}  # fmt: skip
    assert configs["task-src-a-0"]["properties"]["task.class"].endswith("FileStreamSourceTask")
    assert configs["commit-src-a"] == {"tasks": 1}
    key = configs["session-key"]
    assert list(key) == ["key", "algorithm", "creation-timestamp"]
    assert key["algorithm"] == "HmacSHA256" and isinstance(key["creation-timestamp"], int)
    # Deleted: a tombstone for its config, then one for its target state (STOPPED before).
    records = _read_topic(kafka_broker.bootstrap_servers, f"{p}-configs")
    last = {key: i for i, (key, _) in enumerate(records)}
    assert records[last["connector-src-b"]] == ("connector-src-b", None)
    assert records[last["target-state-src-b"]] == ("target-state-src-b", None)
    assert last["connector-src-b"] < last["target-state-src-b"]
    assert ("target-state-src-b", {"state": "PAUSED", "state.v2": "STOPPED"}) in records
    statuses = dict(_read_topic(kafka_broker.bootstrap_servers, f"{p}-status"))
    task = statuses["status-task-src-a-0"]
    assert list(task) == ["state", "trace", "worker_id", "generation"]
    assert task["state"] == "RUNNING" and task["trace"] is None
    assert task["worker_id"] in {w.worker_id for w in cluster.workers}
    assert isinstance(task["generation"], int)
    assert statuses["status-connector-src-a"]["state"] == "RUNNING"
    offsets = _read_topic(kafka_broker.bootstrap_servers, f"{p}-offsets")
    keys = [k for k, _ in offsets]
    assert any(k.startswith('["src-a",') for k in keys), keys


def _read_until_idle(servers: str, topic: str) -> list[tuple[str, bytes | None]]:
    """Every record of ``topic`` that a consumer gets until it is idle for a second, as
    (key, raw value): the embedded broker may report a high watermark below the last record
    of a batch of several, so watermarks do not tell when every record is in."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"read-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, n, 0) for n in partitions])
        records = []
        while (message := consumer.poll(1.0)) is not None:
            assert not message.error(), message.error()
            records.append(((message.key() or b"").decode(), message.value()))
        return records
    finally:
        consumer.close()


def _topic_status_values(cluster: Cluster, key: str) -> list[Any]:
    """The values of the status topic's records with ``key`` (``None`` for a tombstone)."""
    import json

    records = _read_until_idle(cluster.servers, f"{cluster.topic_prefix}-status")
    return [None if v is None else json.loads(v) for k, v in records if k == key]


def _active_topics_everywhere(cluster: Cluster, name: str, expected: list[str]) -> bool:
    return all(w.get(f"/connectors/{name}/topics") == {name: {"topics": expected}}
               for w in cluster.alive())  # fmt: skip


def test_topics_a_task_used_are_status_records_that_survive_a_restart(cluster: Cluster) -> None:
    """KIP-558: the first lease that produces to a topic writes Kafka's topic status record,
    once; every worker answers GET .../topics from it, also after a restart; reset and
    delete write tombstones."""
    d, p = cluster.directory, cluster.topic_prefix
    name, topic = "src-t", f"{p}-t"
    key = f"status-topic-{topic}:connector-{name}"
    _write_lines(d / "t.txt", 0, 10)
    follower, body = cluster.follower(), _source(name, d / "t.txt", topic)
    created = wait_for(
        lambda: _unless_rebalancing(follower.post("/connectors", body)),
        CLUSTER_TIMEOUT_S, "an answer outside a rebalance", 0.5,
    )  # fmt: skip
    assert created.status_code == 201, created.text
    wait_for(lambda: _statuses(follower, [name]), CLUSTER_TIMEOUT_S, "src-t RUNNING", 0.5)
    values = wait_for(lambda: _topic_status_values(cluster, key), 60, "its topic status", 0.5)
    assert len(values) == 1, values
    assert list(values[0]) == ["topic"]
    assert list(values[0]["topic"]) == ["name", "connector", "task", "discoverTimestamp"]
    stamp = values[0]["topic"]["discoverTimestamp"]
    assert values[0] == {"topic": {"name": topic, "connector": name, "task": 0,
                                   "discoverTimestamp": stamp}}  # fmt: skip
    assert isinstance(stamp, int) and abs(stamp / 1000 - time.time()) < 600
    wait_for(lambda: _active_topics_everywhere(cluster, name, [topic]), 30,
             "every worker to answer the topic", 0.5)  # fmt: skip

    # The worker that ran the task restarts: the task moves, the topics stay, no new record.
    status = follower.status(name)
    assert status is not None
    runner = cluster.by_id(status["tasks"][0]["worker_id"])
    mark = len(runner.log_text())
    assert runner.terminate() == 0, runner.log_tail()
    runner.start()
    wait_for(lambda: _joined_since(runner, mark), CLUSTER_TIMEOUT_S,
             "the restarted worker to rejoin", 0.5, runner)  # fmt: skip
    wait_for(lambda: runner.get(f"/connectors/{name}/topics") == {name: {"topics": [topic]}},
             30, "the restarted worker to answer the topic", 0.5, runner)  # fmt: skip
    _write_lines(d / "t.txt", 10, 10)
    wait_for(lambda: len(_read_until_idle(cluster.servers, topic)) >= 20, CLUSTER_TIMEOUT_S,
             "the task to produce again", 0.5)  # fmt: skip
    assert _topic_status_values(cluster, key) == values

    reset = cluster.alive()[0].client.put(f"/connectors/{name}/topics/reset")
    assert (reset.status_code, reset.content) == (202, b"")
    wait_for(lambda: _topic_status_values(cluster, key)[-1:] == [None], 30, "a tombstone", 0.5)
    wait_for(lambda: _active_topics_everywhere(cluster, name, []), 30, "no topics", 0.5)
    _write_lines(d / "t.txt", 20, 10)  # the next lease that produces records it again
    wait_for(lambda: (_topic_status_values(cluster, key)[-1:] or [None])[0], 60,
             "the topic recorded again", 0.5)  # fmt: skip

    deleted = wait_for(
        lambda: _unless_rebalancing(follower.client.delete(f"/connectors/{name}",
                                                           timeout=WRITE_TIMEOUT_S)),
        CLUSTER_TIMEOUT_S, "an answer outside a rebalance", 0.5,
    )  # fmt: skip
    assert deleted.status_code == 204, deleted.text
    wait_for(lambda: _topic_status_values(cluster, key)[-1:] == [None], 60,
             "a tombstone after the delete", 0.5)  # fmt: skip
    wait_for(lambda: _active_topics_everywhere(cluster, name, []), 30, "no topics", 0.5)


def _rss_mb(pid: int) -> float:
    from tests.support.worker_process import process_tree

    total = 0
    for proc in process_tree(pid):
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def test_memory_per_worker_is_recorded(cluster: Cluster) -> None:
    sizes = [_rss_mb(w.pid) for w in cluster.alive()]
    assert all(size > 0 for size in sizes)
    print("RSS per worker (driver + Spark JVM + Python workers), MB:",
          ", ".join(f"{size:.0f}" for size in sizes))  # fmt: skip


def test_internal_endpoints_refuse_missing_and_forged_signatures(cluster: Cluster) -> None:
    worker = cluster.alive()[0]
    body = [{"task.class": "x"}]
    missing = worker.post("/connectors/src-a/tasks", body)
    assert missing.status_code == 400
    assert missing.json()["message"] == "Internal request missing required signature"
    forged = worker.client.post(
        "/connectors/src-a/tasks", json=body,
        headers={"X-Connect-Authorization": "AAAA", "X-Connect-Request-Signature-Algorithm":
                 "HmacSHA256"},
    )  # fmt: skip
    assert forged.status_code == 403
    assert forged.json()["message"] == "Internal request contained invalid signature."
    unknown = worker.client.post(
        "/connectors/src-a/tasks", json=body,
        headers={"X-Connect-Authorization": "AAAA", "X-Connect-Request-Signature-Algorithm":
                 "HmacMD5"},
    )  # fmt: skip
    assert unknown.status_code == 400


def test_a_request_forwarded_twice_gets_kafkas_409(cluster: Cluster) -> None:
    follower = cluster.follower()
    response = follower.client.delete(
        "/connectors/src-b", params={"forward": "false"}, timeout=WRITE_TIMEOUT_S
    )
    assert response.status_code == 409
    assert response.json()["message"] == (
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
    )


def _joined_since(worker: DistributedWorker, mark: int) -> bool:
    """Whether the worker logged a completed rebalance after ``mark`` characters of its log."""
    return JOINED.search(worker.log_text()[mark:]) is not None


def test_sigterm_rolling_restart_every_line_once(cluster: Cluster) -> None:
    """Each worker in turn: SIGTERM (its tasks stop and commit), start again, rejoin; the
    src-a -> sink-a pipeline keeps copying: every line arrives exactly once."""
    d = cluster.directory
    expected = [f"roll-{i:06d}" for i in range(20000)]
    with (d / "a.txt").open("a", encoding="utf-8") as f:
        f.write("".join(f"{line}\n" for line in expected))
    started = time.monotonic()
    for n, worker in enumerate(list(cluster.alive())):
        wanted = 2000 * (n + 1)
        wait_for(lambda k=wanted: sum(x.startswith("roll-") for x in lines_of(d / "a.sink.txt"))  # type: ignore[misc]
                 >= k, 180, "the pipeline to copy")  # fmt: skip
        assert worker.terminate() == 0, worker.log_tail()
        mark = len(worker.log_text())
        worker.start()
        wait_for(lambda w=worker, m=mark: _joined_since(w, m), CLUSTER_TIMEOUT_S,  # type: ignore[misc]
                 "the restarted worker to rejoin", 0.5, worker)  # fmt: skip
        more = [f"roll-{i:06d}" for i in range(20000 + 5000 * n, 25000 + 5000 * n)]
        with (d / "a.txt").open("a", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in more))
        expected += more
    wait_for(lambda: set(expected) <= set(lines_of(d / "a.sink.txt")), 240,
             "every line in the sink file")  # fmt: skip
    copies = Counter(line for line in lines_of(d / "a.sink.txt") if line.startswith("roll-"))
    duplicated = {line: n for line, n in copies.items() if n > 1}
    assert not duplicated, sorted(duplicated)[:5]
    assert len(copies) == len(expected)
    print(f"SIGTERM rolling restart of {len(cluster.alive())} workers, {len(expected)} lines: "
          f"{time.monotonic() - started:.1f} s, no duplicates")  # fmt: skip


_LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


def _logged_at(line: str) -> datetime:
    found = _LOG_TIME.match(line)
    assert found, line
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f")


MOVING = ("UNASSIGNED", "RESTARTING")  # a rebalance is not over


def _owners(worker: DistributedWorker, names: list[str]) -> dict[str, tuple[str, str]]:
    """``{connector or "<c>-<n>": (state, worker_id)}`` as ``worker`` reports them."""
    owners = {}
    for name in names:
        status = worker.status(name)
        assert status is not None, name
        owners[name] = (status["connector"]["state"], status["connector"]["worker_id"])
        for task in status["tasks"]:
            owners[f"{name}-{task['id']}"] = (task["state"], task["worker_id"])
    return owners


def _moving(worker: DistributedWorker, names: list[str]) -> dict[str, tuple[str, str]]:
    return {k: v for k, v in _owners(worker, names).items() if v[0] in MOVING}


def test_a_fourth_worker_joins_work_moves_to_it_the_rest_never_stops(cluster: Cluster) -> None:
    p = cluster.topic_prefix
    names = ["src-a", "sink-a", "src-o", "sink-o"]
    viewer = cluster.alive()[0]

    def settled() -> dict[str, tuple[str, str]] | None:
        if not all(w.joined() for w in cluster.alive()):  # e.g. after the rolling restart
            return None
        owners = _owners(viewer, names)
        return owners if all(state not in MOVING for state, _ in owners.values()) else None

    try:
        before = wait_for(settled, CLUSTER_TIMEOUT_S, "no work moving before the join", 0.5)
    except AssertionError as exc:
        views = {w.worker_id: _moving(w, names) for w in cluster.alive()}
        raise AssertionError(f"{exc}; still moving, as each worker shows it: {views}") from None
    ends = _topic_ends(cluster.servers, f"{p}-status")
    newcomer = _worker(cluster.servers, cluster.directory, p, len(cluster.workers))
    cluster.workers.append(newcomer.start())
    launched = time.monotonic()

    def moved() -> dict[str, tuple[str, str]] | None:
        owners = _owners(viewer, names)
        mine = [k for k, (state, w) in owners.items() if w == newcomer.worker_id
                and state not in MOVING]  # fmt: skip
        settled = all(state not in MOVING for state, _ in owners.values())
        return owners if mine and settled and newcomer.role() else None

    after = wait_for(moved, CLUSTER_TIMEOUT_S, "work on the fourth worker", 0.5, newcomer)
    work_after = time.monotonic() - launched
    kept = {k for k, (_, w) in after.items() if w != newcomer.worker_id}
    assert kept and all(before[k][1] == after[k][1] for k in kept), (before, after)
    # What was not moved never stopped: no connector status was written for it since the
    # join, and its tasks' RUNNING reports still carry the generation they were started in.
    records = _read_topic(cluster.servers, f"{p}-status", ends)
    for key, value in records:
        item = key.removeprefix("status-connector-").removeprefix("status-task-")
        if item not in kept or value is None:
            continue
        assert key.startswith("status-task-"), (key, value)
        assert value["state"] == "RUNNING" and value["worker_id"] == after[item][1], (key, value)
    previous = dict(_read_topic(cluster.servers, f"{p}-status", until=ends))
    for key in {f"status-task-{item}" for item in kept} & set(previous):
        since = [v for k, v in records if k == key and v is not None]
        assert all(v["generation"] == since[0]["generation"] for v in since), since
        assert previous[key]["generation"] == (since or [previous[key]])[0]["generation"]
    log = newcomer.log_text().splitlines()
    member = next(line for line in log if "Connect member" in line)
    first_work = next(line for line in log if JOINED.search(line)
                      and not ("connectors []" in line and "tasks []" in line))  # fmt: skip
    rebalance = (_logged_at(first_work) - _logged_at(member)).total_seconds()
    print(f"fourth worker: joined the group to its first work {rebalance:.1f} s (its log); "
          f"launch to its work RUNNING {work_after:.1f} s; moved to it: "
          f"{sorted(set(after) - kept)}")  # fmt: skip


def test_kill_9_of_the_worker_running_the_source_task_moves_it(cluster: Cluster) -> None:
    d = cluster.directory
    status = cluster.alive()[0].status("src-a")
    assert status is not None
    victim = cluster.by_id(status["tasks"][0]["worker_id"])
    copied = count_lines(d / "a.sink.txt")
    _write_lines(d / "a.txt", 1000, 20000)
    wait_for(lambda: count_lines(d / "a.sink.txt") >= copied + 3000, 120, "copying to start")
    killed_at = time.monotonic()
    victim.kill_group()
    count_at_kill = count_lines(d / "a.sink.txt")
    survivors = cluster.alive()

    def moved() -> bool:
        status = survivors[0].status("src-a")
        return bool(
            status
            and status["tasks"]
            and status["tasks"][0]["state"] == "RUNNING"
            and status["tasks"][0]["worker_id"] != victim.worker_id
        )

    wait_for(moved, FAILOVER_TIMEOUT_S, "the source task to run on another worker", 0.5)
    moved_after = time.monotonic() - killed_at
    expected = [f"line-{i:07d}" for i in range(21000)]
    more = _write_lines(d / "a.txt", 21000, 500)
    expected += more
    wait_for(lambda: set(expected) <= set(lines_of(d / "a.sink.txt")), FAILOVER_TIMEOUT_S,
             "every line in the sink file")  # fmt: skip
    sink_lines = lines_of(d / "a.sink.txt")
    # At least once: the killed worker's tasks resume from their last committed offsets, so a
    # line is copied again at most once by the source's uncommitted lease and once by the
    # sink's (a lease may cover the whole file here: max.batch.records is not set).
    duplicates = len(sink_lines) - len(set(sink_lines))
    copies = Counter(sink_lines)
    assert max(copies.values()) <= 3, copies.most_common(3)
    print(f"kill -9 mid-stream: {count_at_kill} lines copied before, {duplicates} duplicates")
    print(f"kill -9 to the task RUNNING elsewhere: {moved_after:.1f} s")


def test_kill_9_of_the_leader_another_leads_and_creates_work(cluster: Cluster) -> None:
    d, p = cluster.directory, cluster.topic_prefix
    leader = cluster.leader()
    leader.kill_group()
    new_leader = wait_for(
        lambda: next((w for w in cluster.alive() if w.role() == "leader"), None),
        FAILOVER_TIMEOUT_S, "a new leader", 0.5,
    )  # fmt: skip
    assert new_leader is not leader
    _write_lines(d / "c.txt", 0, 10)
    target = cluster.alive()[-1]

    def created() -> bool:
        response = target.post("/connectors", _source("src-c", d / "c.txt", f"{p}-c"))
        return response.status_code in (201, 409)

    wait_for(created, FAILOVER_TIMEOUT_S, "a create to succeed", 1.0)
    wait_for(lambda: _statuses(target, ["src-c"]), FAILOVER_TIMEOUT_S, "src-c RUNNING", 0.5)


def test_a_config_topic_with_two_partitions_makes_the_worker_exit_2(
    kafka_broker: Any, tmp_path: Path
) -> None:
    from confluent_kafka.admin import AdminClient

    from sparkcat.kafka import admin as kafka_admin

    topic = f"dist-two-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    spec = kafka_admin.TopicSpec(topic, 2, 1, {"cleanup.policy": "compact"})
    kafka_admin.ensure_topics(admin, [spec])
    props = edit_properties(
        CONFIG_DIR / "connect-distributed.properties",
        tmp_path / "worker.properties",
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "config.storage.topic": topic,
         "listeners": f"http://127.0.0.1:{free_port()}"},
    )  # fmt: skip
    done = subprocess.run(
        [str(SPARKCAT), "distributed", str(props)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"sparkcat: Topic '{topic}' supplied via the 'config.storage.topic' property is required "
        "to have a single partition in order to guarantee consistency of connector "
        "configurations, but found 2 partitions."
    )


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_sigterm_while_spark_starts_exits_0_and_leaves_no_process(
    kafka_broker: Any, tmp_path: Path
) -> None:
    """A stop at any moment, also once the worker joined the group and serves REST but Spark
    is still starting (GET /health 503 until then): exit 0, no traceback, nothing left."""
    prefix = f"dist-start-{uuid.uuid4().hex[:8]}"
    worker = _worker(kafka_broker.bootstrap_servers, tmp_path, prefix, 0).start()
    try:
        starting = "REST up while Spark starts"
        wait_for(worker.spark_starting, CLUSTER_TIMEOUT_S, starting, 0.02, worker)
        assert worker.terminate() == 0, worker.log_tail()
        assert worker.survivors(timeout=20) == []
        assert "Traceback" not in worker.log_text(), worker.log_tail()
        assert worker.log_text().count("sparkcat is shutting down") == 1, worker.log_tail()
    finally:
        worker.cleanup()


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
def test_a_process_group_sigterm_stops_many_connectors_within_one_graceful_timeout(
    kafka_broker: Any, tmp_path: Path
) -> None:
    """systemd's default ``KillMode=control-group`` sends SIGTERM to every process of the
    worker at once, so Spark's JVM and its Python workers (the task hosts) end first. The
    worker then stops all its tasks within one ``task.shutdown.graceful.timeout.ms``, as
    Kafka's worker does, not one timeout per connector (24 connectors here)."""
    prefix = f"dist-group-{uuid.uuid4().hex[:8]}"
    worker = _worker(kafka_broker.bootstrap_servers, tmp_path, prefix, 0)
    graceful_ms = 4000
    edit_properties(worker.worker_props, worker.worker_props,
                    {"task.shutdown.graceful.timeout.ms": str(graceful_ms)})  # fmt: skip
    worker.start()
    try:
        wait_for(lambda: worker.role() == "leader", CLUSTER_TIMEOUT_S, "leadership", 0.5, worker)
        names = []
        for i in range(12):
            topic = f"{prefix}-{i}"
            source, sink = tmp_path / f"in-{i}.txt", tmp_path / f"out-{i}.txt"
            source.write_text(f"line {i}\n", encoding="utf-8")
            for body in (_source(f"g-src-{i}", source, topic), _sink(f"g-sink-{i}", sink, topic)):
                worker.post("/connectors", body)
                names.append(body["name"])
        wait_for(lambda: _statuses(worker, names), CLUSTER_TIMEOUT_S, "24 connectors RUNNING",
                 0.5, worker)  # fmt: skip
        wait_for(lambda: all(count_lines(tmp_path / f"out-{i}.txt") == 1 for i in range(12)),
                 CLUSTER_TIMEOUT_S, "every pipeline's line", 0.2, worker)  # fmt: skip
        worker.remember_processes()
        started = time.monotonic()
        os.killpg(worker.pid, signal.SIGTERM)
        code = worker.proc.wait(120) if worker.proc is not None else None
        took = time.monotonic() - started
        assert code == 0, worker.log_tail()
        # One graceful timeout, the group's LeaveGroup and Spark's stop; 24 timeouts in a row
        # would take 96 s.
        assert took < graceful_ms / 1000 + 20, (took, worker.log_tail())
        assert worker.survivors(timeout=20) == []
        # Spark gone first is expected here: said in a line or two, not in tracebacks.
        assert "Traceback" not in worker.log_text(), worker.log_tail()
    finally:
        worker.cleanup()
