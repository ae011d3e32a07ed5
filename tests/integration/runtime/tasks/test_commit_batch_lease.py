"""``SourceTask.commit_batch`` against the real broker: each batch's records, written byte
for byte from its columns, are reported back with the offsets Kafka gave them."""

from __future__ import annotations

import uuid
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.support.mirror import create, read_all

from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

pytestmark = pytest.mark.broker

# kafka-python 3 warns (DeprecationWarning) when first imported; the transactional lease
# imports it lazily (offsets_topic.partition_of), which pytest's warnings-as-errors turns into
# a lease failure when no earlier import happened in the process. Imported here first, the
# warning silenced as committed_reader silences it.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "(read|open)_text is deprecated", DeprecationWarning)
    import kafka.partitioner.default  # noqa: F401

HERE = Path(__file__).parent
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
TASK = "commit_batch_plugins_for_tests:BatchesWithCommitBatch"
DROP = {
    "transforms": "drop",
    "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.drop.predicate": "dropped",
    "predicates": "dropped",
    "predicates.dropped.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "predicates.dropped.name": "drop",
}


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(HERE))
    import commit_batch_plugins_for_tests

    return commit_batch_plugins_for_tests


def exactly_once() -> dict[str, str]:
    """Worker settings of a transactional (KIP-618) lease."""
    return {
        "group.id": f"group-{uuid.uuid4().hex[:6]}",
        "exactly.once.source.support": "enabled",
        "offset.storage.topic": f"offsets-{uuid.uuid4().hex[:8]}",
        "offset.storage.partitions": "3",
    }


def run(
    servers: str,
    tmp_path: Path,
    explicit: bool,
    connector: dict[str, str],
    worker: dict[str, str] | None = None,
) -> Any:
    topic = f"commit-batch-{uuid.uuid4().hex[:8]}"
    create(servers, (topic, 2))
    calls_file = tmp_path / "calls.jsonl"
    result = run_lease(
        LeaseSpec(
            connector=f"conn-{uuid.uuid4().hex[:8]}", task=0, generation=1, kind="source",
            task_config={"task.class": TASK, "topic": topic, "calls.file": str(calls_file),
                         "explicit.partitions": str(explicit).lower()},
            connector_config=connector,
            worker_config={"bootstrap.servers": servers, "key.converter": BYTES,
                           "value.converter": BYTES, "header.converter": BYTES,
                           **(worker or {})},
            max_ms=3000, max_records=1_000_000, control=None,
        )
    )  # fmt: skip
    assert result.trace is None, result.trace
    calls = [orjson.loads(line) for line in calls_file.read_bytes().splitlines()]
    return topic, result, calls


def stored(servers: str, topic: str, count: int) -> dict[Any, Any]:
    """Value -> (partition, offset, key, timestamp, headers) of what is in ``topic``."""
    return {
        None if m.value() is None else m.value().decode(): (
            m.partition(),
            m.offset(),
            m.key(),
            m.timestamp()[1],
            m.headers(),
        )
        for m in read_all(servers, topic, count, 2)
    }


@pytest.mark.parametrize(
    ("explicit", "transactional"),
    [(True, False), (False, False), (True, True)],
    ids=["partitions", "partitioner", "exactly-once"],
)
def test_each_batch_is_reported_once_in_poll_order_with_kafkas_offsets(
    servers: str, tmp_path: Path, plugins: Any, explicit: bool, transactional: bool
) -> None:
    worker = exactly_once() if transactional else None
    topic, result, calls = run(servers, tmp_path, explicit, {}, worker)
    assert result.records == 5
    in_kafka = stored(servers, topic, 5)
    assert [call["values"] for call in calls] == [["v0", "v1", "drop-v2"], ["v3", None]]
    for call in calls:
        assert call["topics"] == [topic] * len(call["values"])
        assert list(zip(call["partitions"], call["offsets"], strict=True)) == [
            in_kafka[value][:2] for value in call["values"]
        ]
    # Byte for byte what the columns said: key, timestamp, headers (and partition).
    for rows in plugins.BATCHES:
        for value, key, partition, timestamp, headers in rows:
            found = in_kafka[None if value is None else value.decode()]
            assert found[2:] == (key, timestamp, headers)
            if explicit:
                assert found[0] == partition


def test_on_the_per_record_path_a_dropped_record_has_offset_minus_one(
    servers: str, tmp_path: Path, plugins: Any
) -> None:
    topic, result, calls = run(servers, tmp_path, True, DROP)
    assert result.records == 4
    in_kafka = stored(servers, topic, 4)
    assert "drop-v2" not in in_kafka
    first, second = calls
    assert first["offsets"][2] == -1 and first["partitions"][2] == -1
    assert list(zip(first["partitions"][:2], first["offsets"][:2], strict=True)) == [
        in_kafka["v0"][:2],
        in_kafka["v1"][:2],
    ]
    assert list(zip(second["partitions"], second["offsets"], strict=True)) == [
        in_kafka["v3"][:2],
        in_kafka[None][:2],
    ]
