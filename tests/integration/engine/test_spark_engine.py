"""SparkEngine with the real broker and local Spark: connectors as streaming queries."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import RecordingListener
from tests.support.files import lines_of
from tests.support.plans import FILE_SINK, FILE_SOURCE, file_sink, file_source, recording
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.engine_api import ConnectorPlan
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]


@pytest.fixture
def worker(kafka_broker: Any, plugins_dir: Path) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "2000",
        "offset.flush.interval.ms": "4000",
    }


@pytest.fixture
def engine(spark: Any, worker: dict[str, str], tmp_path: Path) -> Iterator[SparkEngine]:
    sys.path.insert(0, worker["plugin.path"])
    store = MemoryOffsetStore()
    engine = SparkEngine(worker, store, session=spark)
    engine.offset_store = store  # type: ignore[attr-defined]
    yield engine
    engine.close()
    sys.path.remove(worker["plugin.path"])


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_quickstart_lines_reach_the_sink_file(engine: SparkEngine, tmp_path: Path) -> None:
    topic = unique("connect-test")
    source_file, sink_file = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    source_file.write_text("foo\nbar\n")
    listener = RecordingListener()
    engine.start_connector(file_source("local-file-source", source_file, topic), listener)
    engine.start_connector(file_sink("local-file-sink", sink_file, topic), listener)
    wait_for(lambda: lines_of(sink_file) == ["foo", "bar"], 90, "the first lines in the sink")

    # Once running, appended lines must show up within 5 s.
    with source_file.open("a") as f:
        f.writelines(f"line-{i}\n" for i in range(100))
    appended = time.monotonic()
    wait_for(lambda: len(lines_of(sink_file)) == 102, 5, "appended lines in the sink")
    assert lines_of(sink_file)[2:] == [f"line-{i}" for i in range(100)]
    assert time.monotonic() - appended < 5
    # A task's state is reported when its lease ends: wait for the first one of each.
    for name in ("local-file-source", "local-file-sink"):
        wait_for(lambda n=name: listener.states.get((n, 0)) == "RUNNING", 20, f"{name} RUNNING")
    offsets = dict(
        (tuple(sorted(p.items())), o)
        for p, o in engine.offset_store.get_all("local-file-source")  # type: ignore[attr-defined]
    )
    wait_for(lambda: listener.records.get("local-file-sink", 0) >= 102, 20, "sink counts")
    assert offsets[(("filename", str(source_file)),)]["position"] > 0


def test_failing_task_is_failed_and_other_connectors_keep_copying(
    engine: SparkEngine, tmp_path: Path
) -> None:
    listener = RecordingListener()
    events = tmp_path / "events.log"
    engine.start_connector(
        recording("broken", events, unique("broken"), **{"fail.on.poll": "true"}), listener
    )
    topic = unique("healthy")
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"{i}\n" for i in range(1000)))
    engine.start_connector(file_source("healthy-source", source_file, topic), listener)
    engine.start_connector(file_sink("healthy-sink", sink_file, topic), listener)

    wait_for(lambda: listener.states.get(("broken", 0)) == "FAILED", 90, "the task to fail")
    assert "poll failed on purpose" in listener.traces[("broken", 0)]
    assert "RuntimeError" in listener.traces[("broken", 0)]
    wait_for(lambda: len(lines_of(sink_file)) == 1000, 60, "the healthy pipeline")
    with source_file.open("a") as f:
        f.write("after-failure\n")
    wait_for(lambda: lines_of(sink_file)[-1:] == ["after-failure"], 10, "more copying")
    assert listener.states[("broken", 0)] == "FAILED"

    # A failed task runs again only when restarted.
    instances = len(events.read_text().splitlines())
    time.sleep(3)
    assert len(events.read_text().splitlines()) == instances
    engine.restart_task("broken", 0)
    wait_for(lambda: len(events.read_text().splitlines()) > instances, 30, "the restarted task")


def test_stopped_is_the_last_call_exactly_once_per_instance(
    engine: SparkEngine, tmp_path: Path
) -> None:
    from sparkcat_test_plugins import read_events  # type: ignore[import-not-found]

    listener = RecordingListener()
    events = tmp_path / "events.log"
    topic = unique("recorded")
    engine.start_connector(recording("rec", events, topic, tasks=2), listener)
    wait_for(lambda: len(read_events(str(events))) >= 4, 90, "two leases of both tasks")

    engine.pause_connector("rec")
    wait_for(lambda: listener.states.get(("rec", 0)) == "PAUSED", 10, "pause")
    paused_at = len(read_events(str(events)))
    engine.resume_connector("rec")
    wait_for(lambda: len(read_events(str(events))) > paused_at + 1, 30, "leases after resume")

    # Reconfiguration: a new generation with one task.
    engine.start_connector(recording("rec", events, topic, tasks=1, generation=1), listener)
    reconfigured_at = len(read_events(str(events)))
    wait_for(lambda: len(read_events(str(events))) > reconfigured_at, 30, "the new generation")
    engine.stop_connector("rec")

    per_instance = read_events(str(events))
    assert len(per_instance) >= 5
    for instance, calls in per_instance.items():
        assert calls[0].startswith("start"), (instance, calls)
        assert calls[-1] == "stopped", (instance, calls)
        assert calls.count("stopped") == 1, (instance, calls)
        assert calls[-2] == "stop", (instance, calls)
        assert "poll" not in calls[calls.index("stop") :], (instance, calls)
    # Offsets carried over between leases: every instance resumed where the last one ended.
    starts = sorted(int(calls[0].split()[1]) for calls in per_instance.values())
    assert starts[0] == 0
    assert len(set(starts)) > 1


def test_pause_ends_a_running_lease_within_a_second(engine: SparkEngine, tmp_path: Path) -> None:
    from sparkcat_test_plugins import read_events  # type: ignore[import-not-found]

    listener = RecordingListener()
    events = tmp_path / "events.log"
    plan = recording("long", events, unique("long"), **{"max.batch.ms": "60000"})
    engine.start_connector(plan, listener)
    wait_for(
        lambda: any(c.count("poll") >= 3 for c in read_events(str(events)).values()),
        30,
        "a lease that is polling",
    )

    paused = time.monotonic()
    engine.pause_connector("long")
    wait_for(lambda: any("stop" in c for c in read_events(str(events)).values()), 5, "stop")
    lease_ended = time.monotonic() - paused
    engine.stop_connector("long")

    # The lease was 60 s long: only the control channel could end it this early.
    assert lease_ended < 1.0


def test_transform_chains_with_predicates_apply_on_both_sides(
    engine: SparkEngine, tmp_path: Path
) -> None:
    """Kafka's chain syntax, unchanged: RegexRouter and InsertHeader on two sources, and on
    the sink a negated HasHeaderKey predicate that filters out the untagged source."""
    raw = unique("orders") + "-raw"
    routed = raw.removesuffix("-raw") + "-clean"
    listener = RecordingListener()
    route = {
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)-raw",
        "transforms.route.replacement": "$1-clean",
    }
    tagged_file, untagged_file = tmp_path / "tagged.txt", tmp_path / "untagged.txt"
    tagged_file.write_text("t1\nt2\nt3\n")
    untagged_file.write_text("u1\nu2\n")
    for name, path, extra in (
        (
            "tagged",
            tagged_file,
            {
                "transforms": "route,tag",
                "transforms.tag.type": "InsertHeader",
                "transforms.tag.header": "origin",
                "transforms.tag.value.literal": "tagged-file",
            },
        ),
        ("untagged", untagged_file, {"transforms": "route"}),
    ):
        plan = file_source(name, path, raw)
        config = {**plan.connector_config, **route, **extra}
        engine.start_connector(
            ConnectorPlan(name, "source", config, [dict(config, **{"task.class": FILE_SOURCE})]),
            listener,
        )
    sink_file = tmp_path / "sink.txt"
    sink = file_sink("filtered-sink", sink_file, routed)
    sink_config = {
        **sink.connector_config,
        "transforms": "onlyTagged",
        "transforms.onlyTagged.type": "Filter",
        "transforms.onlyTagged.predicate": "hasOrigin",
        "transforms.onlyTagged.negate": "true",
        "predicates": "hasOrigin",
        "predicates.hasOrigin.type": "HasHeaderKey",
        "predicates.hasOrigin.name": "origin",
    }
    engine.start_connector(
        ConnectorPlan(
            "filtered-sink", "sink", sink_config, [dict(sink_config, **{"task.class": FILE_SINK})]
        ),
        listener,
    )
    wait_for(lambda: sorted(lines_of(sink_file)) == ["t1", "t2", "t3"], 90, "tagged lines")
    # The untagged lines did reach the routed topic; the sink's chain dropped them.
    wait_for(lambda: listener.records.get("untagged", 0) == 2, 30, "untagged lines produced")
    time.sleep(2)
    assert sorted(lines_of(sink_file)) == ["t1", "t2", "t3"]
