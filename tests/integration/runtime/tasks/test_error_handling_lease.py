"""Error handling of sink leases against the real broker, without Spark: tolerance, DLQ
with context headers, restarts, tolerance=none offsets, put retries, failing SMTs, KIP-610."""

from __future__ import annotations

import itertools
import random
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

HERE = Path(__file__).parent
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
TOTAL, BAD = 10_000, 137


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(HERE))
    import error_plugins_for_tests

    return error_plugins_for_tests


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_topic(servers: str, bad: set[int], total: int = TOTAL, smt_bad: bool = False) -> str:
    """``total`` records ``{"n": i}`` (key ``k<i>``); those in ``bad`` are malformed JSON (or,
    with ``smt_bad``, valid JSON marked ``"bad": true``)."""
    topic = unique("errors-in")
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for i in range(total):
        if i in bad:
            value = orjson.dumps({"n": i, "bad": True}) if smt_bad else b'{"n": %d, broken' % i
        else:
            value = orjson.dumps({"n": i})
        producer.produce(topic, value, f"k{i}".encode(), 0, timestamp=1_700_000_000_000 + i,
                         headers=[("h", f"v{i}".encode())])  # fmt: skip
        if i % 5000 == 0:
            producer.poll(0)
    assert producer.flush(20) == 0
    return topic


def spec(
    servers: str, name: str, topic: str, start: int | None, connector: dict[str, str],
    task: dict[str, str], max_records: int = 1_000_000, max_ms: int = 20_000,
) -> LeaseSpec:  # fmt: skip
    return LeaseSpec(
        connector=name, task=0, generation=1, kind="sink",
        task_config={"task.class": "error_plugins_for_tests:FlakySinkTask", "topics": topic,
                     **task},
        connector_config={"topics": topic, **connector},
        worker_config={"bootstrap.servers": servers, "key.converter": STRING,
                       "value.converter": JSON, "value.converter.schemas.enable": "false"},
        max_ms=max_ms, max_records=max_records, control=None,
        assignment=((topic, 0, start),),
    )  # fmt: skip


def dlq_config(dlq: str, **extra: str) -> dict[str, str]:
    return {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
        **extra,
    }


def next_offset(result: LeaseResult) -> int | None:
    return result.sink_offsets[0][2] if result.sink_offsets else None


def read(servers: str, topic: str, expected: int) -> list[Any]:
    from plugins_for_tests import read_topic

    return read_topic(servers, topic, expected)


def test_tolerance_all_sends_bad_records_to_the_dlq_and_survives_a_restart(
    servers: str, plugins: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    bad = set(random.Random(7).sample(range(TOTAL), BAD))
    topic, dlq, name, key = make_topic(servers, bad), unique("dlq"), unique("sink"), unique("k")
    connector, task = dlq_config(dlq), {"sink.key": key}

    first = run_lease(spec(servers, name, topic, None, connector, task, max_records=4000))
    # A lease that crashes before its offsets are committed: its work is redone.
    crashed = run_lease(spec(servers, name, topic, next_offset(first), connector, task,
                             max_records=3000))  # fmt: skip
    rest = TOTAL - (next_offset(first) or 0)
    last = run_lease(
        spec(servers, name, topic, next_offset(first), connector, task, max_records=rest)
    )

    assert (first.trace, crashed.trace, last.trace) == (None, None, None)
    assert next_offset(last) == TOTAL
    sunk = [r.value["n"] for r in plugins.SUNK[key]]
    good = [i for i in range(TOTAL) if i not in bad]
    assert sorted(set(sunk)) == good  # nothing missing, nothing bad
    redone_good = crashed.records
    assert len(good) <= len(sunk) <= len(good) + redone_good  # at-least-once bound
    redone_bad = crashed.polled - crashed.records
    messages = read(servers, dlq, BAD)
    offsets = [int(dict(m.headers())["__connect.errors.offset"]) for m in messages]
    assert sorted(set(offsets)) == sorted(bad)
    assert BAD <= len(messages) <= BAD + redone_bad
    sample = messages[0]
    headers = dict(sample.headers())
    n = int(headers["__connect.errors.offset"])
    assert sample.value() == b'{"n": %d, broken' % n  # the original bytes
    assert sample.key() == f"k{n}".encode()
    assert sample.timestamp()[1] == 1_700_000_000_000 + n
    assert headers["h"] == f"v{n}".encode()
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.connector.name"] == name.encode()
    assert headers["__connect.errors.task.id"] == b"0"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"].endswith(b"JsonConverter")
    assert headers["__connect.errors.exception.class.name"] == b"sparkcat.api.errors.DataError"
    assert headers["__connect.errors.exception.message"]
    assert b"Traceback" in headers["__connect.errors.exception.stacktrace"]
    metrics = first.error_metrics
    expected_bad = len([i for i in bad if i < 4000])
    assert metrics["total-records-skipped"] == expected_bad
    assert metrics["deadletterqueue-produce-requests"] == expected_bad
    assert metrics["total-record-failures"] == expected_bad
    assert metrics["last-error-timestamp"] > 0


def test_tolerance_none_fails_at_the_first_bad_record_and_resumes_there(
    servers: str, plugins: Any
) -> None:
    bad = {1234, 5000}
    topic, name, key = make_topic(servers, bad, total=6000), unique("sink"), unique("k")

    failed = run_lease(spec(servers, name, topic, None, {}, {"sink.key": key}, max_records=6000))

    assert failed.trace is not None
    assert "Tolerance exceeded in error handler" in failed.trace
    assert "DataError" in failed.trace
    assert next_offset(failed) == 1234  # the bad record is the next to consume
    assert [r.value["n"] for r in plugins.SUNK[key]] == list(range(1234))
    assert failed.error_metrics["total-record-errors"] == 1

    fixed = dlq_config(unique("dlq"))
    resumed = run_lease(
        spec(servers, name, topic, next_offset(failed), fixed, {"sink.key": key}, max_records=4766)
    )

    assert resumed.trace is None and next_offset(resumed) == 6000
    sunk = [r.value["n"] for r in plugins.SUNK[key]]
    assert sunk == [i for i in range(6000) if i not in bad]
    assert resumed.error_metrics["total-records-skipped"] == 2


def test_retriable_put_is_redelivered_with_kafkas_backoff(servers: str, plugins: Any) -> None:
    topic, name, key = make_topic(servers, set(), total=50), unique("sink"), unique("k")
    task = {"sink.key": key, "retriable.failures": "3"}

    result = run_lease(spec(servers, name, topic, None, {}, task, max_records=50))

    assert result.trace is None and next_offset(result) == 50
    assert [r.value["n"] for r in plugins.SUNK[key]] == list(range(50))
    times = plugins.PUT_TIMES[key]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) == 3
    for gap, expected in zip(gaps, (0.3, 0.6, 1.2), strict=True):
        assert expected <= gap < expected + 0.25


def test_failing_smt_records_go_to_the_dlq_as_transformation(servers: str, plugins: Any) -> None:
    bad = {3, 30, 300}
    topic = make_topic(servers, bad, total=400, smt_bad=True)
    dlq, name, key = unique("dlq"), unique("sink"), unique("k")
    connector = dlq_config(
        dlq,
        **{
            "errors.log.enable": "true",
            "transforms": "fail",
            "transforms.fail.type": "error_plugins_for_tests:FailOnBad",
        },
    )

    result = run_lease(
        spec(servers, name, topic, None, connector, {"sink.key": key}, max_records=400)
    )

    assert result.trace is None and next_offset(result) == 400
    assert [r.value["n"] for r in plugins.SUNK[key]] == [i for i in range(400) if i not in bad]
    messages = read(servers, dlq, 3)
    assert len(messages) == 3
    for message, n in zip(messages, sorted(bad), strict=True):
        headers = dict(message.headers())
        assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
        assert headers["__connect.errors.class.name"] == b"error_plugins_for_tests.FailOnBad"
        assert headers["__connect.errors.exception.message"] == f"Error when value={n}".encode()
    assert result.error_metrics["total-errors-logged"] == 3


def test_errant_record_reporter_sends_reported_records_to_the_dlq(
    servers: str, plugins: Any
) -> None:
    topic, dlq, name, key = (
        make_topic(servers, set(), total=100),
        unique("dlq"),
        unique("sink"),
        unique("k"),
    )
    task = {"sink.key": key, "report.every": "10"}

    result = run_lease(spec(servers, name, topic, None, dlq_config(dlq), task, max_records=100))

    assert result.trace is None and next_offset(result) == 100
    reports = plugins.REPORTS[key]
    assert reports[0] == ("reporter", True)
    assert all(f.done() and f.exception() is None for f in reports[1:])  # durable before commit
    messages = read(servers, dlq, 10)
    assert [orjson.loads(m.value())["n"] for m in messages] == list(range(0, 100, 10))
    headers = dict(messages[0].headers())
    assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert headers["__connect.errors.class.name"] == b"org.apache.kafka.connect.sink.SinkTask"
    assert len(plugins.SUNK[key]) == 90


def test_no_errant_reporter_without_dlq_or_error_log(servers: str, plugins: Any) -> None:
    topic, name, key = make_topic(servers, set(), total=5), unique("sink"), unique("k")

    run_lease(spec(servers, name, topic, None, {}, {"sink.key": key}, max_records=5))

    assert plugins.REPORTS[key][0] == ("reporter", False)
