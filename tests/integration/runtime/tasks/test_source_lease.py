"""Source leases against the real (embedded) broker, without Spark."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka.admin import AdminClient

from sparkcat.engine.control_server import ControlServer
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

HERE = Path(__file__).parent
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceTask"
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(HERE))
    import plugins_for_tests

    return plugins_for_tests


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def spec(
    servers: str,
    task_config: dict[str, str],
    connector_config: dict[str, str] | None = None,
    *,
    max_ms: int = 10_000,
    max_records: int = 1_000_000,
    control: str | None = None,
    source_offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = (),
    value_converter: str = STRING,
    name: str | None = None,
) -> LeaseSpec:
    return LeaseSpec(
        connector=name or unique("conn"),
        task=0,
        generation=1,
        kind="source",
        task_config=task_config,
        connector_config=connector_config or {},
        worker_config={
            "bootstrap.servers": servers,
            "key.converter": STRING,
            "value.converter": value_converter,
        },
        max_ms=max_ms,
        max_records=max_records,
        control=control,
        source_offsets=source_offsets,
    )


def file_lease(
    servers: str, path: Path, topic: str, converter: str, offsets: Any = (), max_records: int = 0
) -> LeaseResult:
    task_config = {"task.class": FILE_SOURCE, "file": str(path), "topic": topic}
    return run_lease(
        spec(
            servers,
            task_config,
            {"value.converter": converter},
            max_records=max_records,
            source_offsets=offsets,
        )
    )


def events_of(plugins: Any, key: str) -> list[str]:
    return [event for _, event in plugins.EVENTS[key]]


def test_file_source_copies_lines_and_resumes_without_duplicates(
    servers: str, tmp_path: Path, plugins: Any
) -> None:
    path = tmp_path / "in.txt"
    first = [f"line {i}" for i in range(500)]
    path.write_text("".join(f"{line}\n" for line in first))
    topic = unique("file-string")

    result = file_lease(servers, path, topic, STRING, max_records=500)

    assert result.trace is None
    assert (result.records, result.polled) == (500, 500)
    assert result.source_offsets == (({"filename": str(path)}, {"position": path.stat().st_size}),)
    second = [f"more {i}" for i in range(300)]
    with path.open("a") as out:
        out.write("".join(f"{line}\n" for line in second))

    again = file_lease(servers, path, topic, STRING, result.source_offsets, max_records=300)

    assert again.trace is None
    assert again.records == 300
    assert again.source_offsets == (({"filename": str(path)}, {"position": path.stat().st_size}),)
    messages = plugins.read_topic(servers, topic, 800)
    assert [m.value().decode() for m in messages] == first + second
    assert {m.partition() for m in messages} == {0}  # created with 1 partition, not 4


def test_file_source_with_json_converter(servers: str, tmp_path: Path, plugins: Any) -> None:
    path = tmp_path / "in.txt"
    path.write_text("alpha\nbeta\n")
    topic = unique("file-json")

    result = file_lease(servers, path, topic, JSON, max_records=2)

    assert result.trace is None
    messages = plugins.read_topic(servers, topic, 2)
    assert [orjson.loads(m.value()) for m in messages] == [
        {"schema": {"type": "string", "optional": False}, "payload": "alpha"},
        {"schema": {"type": "string", "optional": False}, "payload": "beta"},
    ]
    assert all(m.key() is None for m in messages)


def recording_config(key: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "task.class": "plugins_for_tests:RecordingSourceTask",
        "events.key": key,
        "topic": topic,
        **extra,
    }


def test_lifecycle_ends_with_stop_then_stopped_exactly_once(servers: str, plugins: Any) -> None:
    key, topic = unique("ok"), unique("rec")

    result = run_lease(spec(servers, recording_config(key, topic, total="25"), max_records=25))

    assert result.trace is None
    assert result.source_offsets == (({"task": "t"}, {"n": 24}),)
    events = events_of(plugins, key)
    assert events[:2] == ["initialize", "start"]
    assert events[-3:] == ["commit", "stop", "stopped"]
    assert len({instance for instance, _ in plugins.EVENTS[key]}) == 1


@pytest.mark.parametrize("where", ["start", "poll"])
def test_failure_returns_trace_and_still_stops_once(servers: str, plugins: Any, where: str) -> None:
    key, topic = unique(f"fail-{where}"), unique("rec")
    config = recording_config(key, topic, **{"fail.in": where, "fail.after.polls": "2"})

    result = run_lease(spec(servers, config))

    assert result.trace is not None
    assert f"{where} failed on purpose" in result.trace
    assert "RuntimeError" in result.trace
    events = events_of(plugins, key)
    assert events.count("stop") == 1
    assert events.count("stopped") == 1
    assert events[-2:] == ["stop", "stopped"]
    if where == "poll":
        # The two batches polled before the failure were delivered; their offsets count.
        assert result.source_offsets == (({"task": "t"}, {"n": 19}),)
        assert len(plugins.read_topic(servers, topic, 20)) == 20
    else:
        assert result.source_offsets == ()


def test_control_stop_ends_an_idle_lease_within_a_second(
    servers: str, plugins: Any, control: ControlServer
) -> None:
    key, topic = unique("idle"), unique("rec")
    channel = control.open_channel("run")
    stopped_at: list[float] = []

    def stop() -> None:
        stopped_at.append(time.monotonic())
        control.set_state(channel, "stop")

    timer = threading.Timer(1.5, stop)
    timer.start()

    result = run_lease(
        spec(servers, recording_config(key, topic, total="0"), max_ms=30_000, control=channel)
    )

    ended = time.monotonic()
    timer.join()
    assert result.trace is None
    assert result.polled == 0
    assert ended - stopped_at[0] < 1.0
    assert events_of(plugins, key)[-2:] == ["stop", "stopped"]


def test_idle_lease_runs_until_max_ms(servers: str, plugins: Any) -> None:
    started = time.monotonic()

    result = run_lease(spec(servers, recording_config(unique("k"), unique("t"), total="0"),
                            max_ms=400))  # fmt: skip

    assert 0.35 < time.monotonic() - started < 2.0
    assert (result.records, result.polled, result.source_offsets) == (0, 0, ())


def test_regex_router_renames_the_topic(servers: str, plugins: Any) -> None:
    key, topic = unique("route"), unique("orig")
    connector_config = {
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "orig-(.*)",
        "transforms.route.replacement": "routed-$1",
    }

    result = run_lease(
        spec(servers, recording_config(key, topic, total="5"), connector_config, max_records=5)
    )

    assert result.trace is None
    routed = topic.replace("orig-", "routed-")
    assert [m.value() for m in plugins.read_topic(servers, routed, 5)] == [
        f"rec-{i}".encode() for i in range(5)
    ]
    existing = AdminClient({"bootstrap.servers": servers}).list_topics(timeout=10).topics
    assert topic not in existing


def test_insert_field_on_schemaless_values(servers: str, plugins: Any) -> None:
    key, topic = unique("insert"), unique("ins")
    connector_config = {
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        "transforms": "add",
        "transforms.add.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.add.static.field": "origin",
        "transforms.add.static.value": "lease",
    }
    config = recording_config(key, topic, total="3", **{"map.values": "true"})

    result = run_lease(spec(servers, config, connector_config, max_records=3))

    assert result.trace is None
    values = [orjson.loads(m.value()) for m in plugins.read_topic(servers, topic, 3)]
    assert values == [{"n": i, "origin": "lease"} for i in range(3)]


def test_topic_creation_settings_from_connector_config(servers: str, plugins: Any) -> None:
    key, topic = unique("create"), unique("created")
    connector_config = {
        "topic.creation.default.partitions": "3",
        "topic.creation.default.replication.factor": "1",
    }

    result = run_lease(
        spec(servers, recording_config(key, topic, total="1"), connector_config, max_records=1)
    )

    assert result.trace is None
    metadata = AdminClient({"bootstrap.servers": servers}).list_topics(timeout=10).topics
    assert len(metadata[topic].partitions) == 3


def test_commit_record_is_called_per_record_when_overridden(servers: str, plugins: Any) -> None:
    key, topic = unique("commit-record"), unique("cr")
    config = recording_config(key, topic, total="4")
    config["task.class"] = "plugins_for_tests:CommitRecordSourceTask"

    result = run_lease(spec(servers, config, max_records=4))

    assert result.trace is None
    calls = plugins.COMMITTED[key]
    assert [record.value for record, _ in calls] == [f"rec-{i}" for i in range(4)]
    assert [(m.topic, m.partition, m.offset) for _, m in calls] == [(topic, 0, i) for i in range(4)]


def test_record_without_topic_fails_with_a_clear_message(servers: str, plugins: Any) -> None:
    key = unique("no-topic")
    config = recording_config(key, "", total="1")
    del config["topic"]

    result = run_lease(spec(servers, config, max_records=1))

    assert result.trace is not None
    assert "no valid topic" in result.trace
    assert events_of(plugins, key)[-2:] == ["stop", "stopped"]


def test_unknown_task_class_is_a_trace_not_an_exception(servers: str) -> None:
    result = run_lease(spec(servers, {"task.class": "no.such.Task"}))

    assert result.trace is not None
    assert "no.such.Task" in result.trace
