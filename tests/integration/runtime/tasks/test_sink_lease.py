"""Sink leases against the real (embedded) broker, without Spark."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.api.records import TimestampType
from sparkcat.engine.control_server import ControlServer
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

pytestmark = pytest.mark.broker

HERE = Path(__file__).parent
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkTask"
STRING = "org.apache.kafka.connect.storage.StringConverter"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(HERE))
    import plugins_for_tests

    return plugins_for_tests


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_topic(servers: str, partitions: int, per_partition: int) -> str:
    """A new topic with ``per_partition`` records ``p<p>-<i>`` (key ``k<i>``) per partition."""
    topic = unique("sink-in")
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, f"p{p}-{i}".encode(), f"k{i}".encode(), p,
                             timestamp=1_700_000_000_000 + i, headers=[("h", b"v")])  # fmt: skip
    assert producer.flush(10) == 0
    return topic


def spec(
    servers: str,
    task_config: dict[str, str],
    assignment: tuple[tuple[str, int, int | None], ...],
    connector_config: dict[str, str] | None = None,
    *,
    name: str | None = None,
    max_ms: int = 10_000,
    max_records: int = 1_000_000,
    control: str | None = None,
) -> LeaseSpec:
    return LeaseSpec(
        connector=name or unique("sink"),
        task=0,
        generation=1,
        kind="sink",
        task_config=task_config,
        connector_config=connector_config or {},
        worker_config={
            "bootstrap.servers": servers,
            "key.converter": STRING,
            "value.converter": STRING,
        },
        max_ms=max_ms,
        max_records=max_records,
        control=control,
        assignment=assignment,
    )


def recording(key: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "task.class": "plugins_for_tests:RecordingSinkTask",
        "sink.key": key,
        "topics": topic,
        **extra,
    }


def test_file_sink_writes_lines_and_returns_next_offsets(servers: str, tmp_path: Path) -> None:
    topic = make_topic(servers, 2, 50)
    out = tmp_path / "out.txt"
    task_config = {"task.class": FILE_SINK, "file": str(out), "topics": topic}

    result = run_lease(
        spec(servers, task_config, ((topic, 0, None), (topic, 1, None)), max_records=100)
    )

    assert result.trace is None
    assert (result.records, result.polled) == (100, 100)
    assert result.sink_offsets == ((topic, 0, 50), (topic, 1, 50))
    lines = out.read_text().splitlines()
    assert sorted(lines) == sorted(f"p{p}-{i}" for p in range(2) for i in range(50))


def test_records_carry_kafka_metadata_and_a_second_lease_continues(
    servers: str, plugins: Any
) -> None:
    topic = make_topic(servers, 1, 30)
    key, name = unique("meta"), unique("sink")

    first = run_lease(spec(servers, recording(key, topic), ((topic, 0, 10),), name=name,
                           max_records=5))  # fmt: skip
    second = run_lease(spec(servers, recording(key, topic), ((topic, 0, 15),), name=name,
                            max_records=15))  # fmt: skip

    assert first.trace is None and second.trace is None
    assert first.sink_offsets == ((topic, 0, 15),)
    assert second.sink_offsets == ((topic, 0, 30),)
    records = plugins.SUNK[key]
    assert [r.kafka_offset for r in records] == list(range(10, 30))
    record = records[0]
    assert (record.topic, record.kafka_partition, record.key, record.value) == (
        topic, 0, "k10", "p0-10",
    )  # fmt: skip
    assert record.timestamp == 1_700_000_000_010
    assert record.timestamp_type is TimestampType.CREATE_TIME
    assert [(h.key, h.value) for h in record.headers] == [("h", "v")]  # SimpleHeaderConverter


def test_put_failure_returns_trace_and_no_offsets(servers: str, plugins: Any) -> None:
    topic = make_topic(servers, 1, 5)
    key = unique("fail")

    result = run_lease(spec(servers, recording(key, topic, **{"fail.in": "put"}),
                            ((topic, 0, None),)))  # fmt: skip

    assert result.trace is not None
    assert "put failed on purpose" in result.trace
    assert result.sink_offsets == ()
    events = [event for _, event in plugins.EVENTS[key]]
    assert events[-2:] == ["close", "stop"]
    assert events.count("stop") == 1


def test_start_failure_still_stops(servers: str, plugins: Any) -> None:
    topic = make_topic(servers, 1, 1)
    key = unique("fail-start")

    result = run_lease(spec(servers, recording(key, topic, **{"fail.in": "start"}),
                            ((topic, 0, None),)))  # fmt: skip

    assert result.trace is not None and "start failed on purpose" in result.trace
    assert [event for _, event in plugins.EVENTS[key]] == ["start", "stop"]


def test_request_commit_ends_the_lease_early(servers: str, plugins: Any) -> None:
    topic = make_topic(servers, 1, 20)
    key = unique("commit")
    started = time.monotonic()

    result = run_lease(spec(servers, recording(key, topic, **{"commit.after": "1"}),
                            ((topic, 0, None),), max_ms=30_000))  # fmt: skip

    assert result.trace is None
    assert time.monotonic() - started < 5
    assert result.sink_offsets[0][2] == len(plugins.SUNK[key])


def test_rewind_in_open_and_pre_commit_limits(servers: str, plugins: Any) -> None:
    topic = make_topic(servers, 1, 20)
    key = unique("rewind")
    config = recording(key, topic, **{"rewind.to": "12", "approve": "15"})

    result = run_lease(spec(servers, config, ((topic, 0, 3),), max_records=8))

    assert result.trace is None
    assert [r.kafka_offset for r in plugins.SUNK[key]] == list(range(12, 20))
    assert result.sink_offsets == ((topic, 0, 15),)


def test_caught_up_lease_waits_until_max_ms_or_stop(
    servers: str, plugins: Any, control: ControlServer
) -> None:
    topic = make_topic(servers, 1, 3)
    channel = control.open_channel("run")
    started = time.monotonic()

    waited = run_lease(spec(servers, recording(unique("k"), topic), ((topic, 0, None),),
                            max_ms=600))  # fmt: skip
    elapsed = time.monotonic() - started
    control.set_state(channel, "stop")
    stopped = run_lease(spec(servers, recording(unique("k"), topic), ((topic, 0, None),),
                             max_ms=30_000, control=channel))  # fmt: skip

    assert waited.trace is None and waited.sink_offsets == ((topic, 0, 3),)
    assert 0.55 < elapsed < 3
    assert stopped.trace is None and stopped.polled == 0


def test_transforms_apply_after_conversion(servers: str, plugins: Any) -> None:
    topic = make_topic(servers, 1, 4)
    key = unique("smt")
    connector_config = {
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
    }

    result = run_lease(spec(servers, recording(key, topic), ((topic, 0, None),),
                            connector_config, max_records=4))  # fmt: skip

    assert result.trace is None
    records = plugins.SUNK[key]
    assert {r.topic for r in records} == {f"{topic}-routed"}
    assert {r.original_topic for r in records} == {topic}
    assert result.sink_offsets == ((topic, 0, 4),)
