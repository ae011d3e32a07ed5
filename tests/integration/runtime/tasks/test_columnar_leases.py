"""The columnar path and the per-record path give the same bytes (issue 13).

Each case runs one pipeline twice on the real broker, without Spark: the shipped FileStream
tasks (columnar: ``SourceRecordBatch`` from ``poll``, the values column in ``put``) and their
per-record twins (``columnar_plugins_for_tests``), with the sink's columnar conversion
switched off for the twin. Compared byte for byte: the Kafka messages (key, value, headers,
partition), the committed source offsets, and the sink files. Converters: StringConverter,
JsonConverter with and without schemas; with no transformation and with an SMT chain
(HoistField$Value -> InsertField$Value, which makes the path per record where it must).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from sparkcat.runtime.tasks import columnar
from sparkcat.runtime.tasks.lease import LeaseResult, LeaseSpec, run_lease

pytestmark = pytest.mark.broker

HERE = Path(__file__).parent
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceTask"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkTask"
PER_RECORD_SOURCE = "columnar_plugins_for_tests:PerRecordFileStreamSourceTask"
PER_RECORD_SINK = "columnar_plugins_for_tests:PerRecordFileSinkTask"
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"

CONVERTERS = {
    "string": {"value.converter": STRING},
    "json-schemaless": {"value.converter": JSON, "value.converter.schemas.enable": "false"},
    "json-envelope": {"value.converter": JSON, "value.converter.schemas.enable": "true"},
}
CHAIN = {
    "transforms": "hoist,insert",
    "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
    "transforms.hoist.field": "line",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "origin",
    "transforms.insert.static.value": "file",
}
# ASCII lines, then non-ASCII ones, an empty line and "\r\n" endings (the sizes path).
LINES = [f"line {i} the quick brown fox" for i in range(3000)]
MORE = 'wörld ✓\n\nquote " and \\ backslash\r\nlast\n'


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(HERE))
    import plugins_for_tests

    return plugins_for_tests


def lease(
    servers: str,
    kind: str,
    task_config: dict[str, str],
    connector_config: dict[str, str],
    assignment: tuple[tuple[str, int, int | None], ...] = (),
    max_records: int = 1_000_000,
) -> LeaseResult:
    spec = LeaseSpec(
        connector=f"columnar-{uuid.uuid4().hex[:8]}",
        task=0,
        generation=1,
        kind=kind,  # type: ignore[arg-type]
        task_config=task_config,
        connector_config=connector_config,
        worker_config={
            "bootstrap.servers": servers,
            "key.converter": STRING,
            "value.converter": STRING,
        },
        max_ms=20_000,
        max_records=max_records,
        control=None,
        assignment=assignment,
    )
    result = run_lease(spec)
    assert result.trace is None, result.trace
    return result


@pytest.mark.parametrize("chain", [False, True], ids=["no-smt", "smt-chain"])
@pytest.mark.parametrize("converter", list(CONVERTERS))
def test_columnar_and_per_record_paths_give_identical_bytes(
    servers: str,
    tmp_path: Path,
    plugins: Any,
    monkeypatch: pytest.MonkeyPatch,
    converter: str,
    chain: bool,
) -> None:
    source_file = tmp_path / "in.txt"
    source_file.write_bytes(("\n".join(LINES) + "\n").encode() + MORE.encode())
    expected_count = len(LINES) + 4
    config = {**CONVERTERS[converter], **(CHAIN if chain else {})}

    topics, results = {}, {}
    for way, task_class in (("columnar", FILE_SOURCE), ("per-record", PER_RECORD_SOURCE)):
        topic = topics[way] = f"columnar-{way}-{uuid.uuid4().hex[:8]}"
        task = {"task.class": task_class, "file": str(source_file), "topic": topic}
        results[way] = lease(servers, "source", task, config, max_records=expected_count)
        assert results[way].records == expected_count
    assert results["columnar"].source_offsets == results["per-record"].source_offsets
    assert results["columnar"].source_offsets == (
        ({"filename": str(source_file)}, {"position": source_file.stat().st_size}),
    )

    def kafka_bytes(topic: str) -> list[tuple[Any, ...]]:
        messages = plugins.read_topic(servers, topic, expected_count)
        return [(m.partition(), m.key(), m.value(), m.headers()) for m in messages]

    written = kafka_bytes(topics["columnar"])
    assert len(written) == expected_count
    assert written == kafka_bytes(topics["per-record"])
    if not chain and converter == "string":
        assert [v for _, _, v, _ in written][-4:] == [
            "wörld ✓".encode(),
            b"",
            b'quote " and \\ backslash',
            b"last",
        ]

    # The sink side, from the columnar source's topic: FileStreamSinkTask on the columnar
    # path, then the per-record twin with the columnar conversion switched off.
    assignment = ((topics["columnar"], 0, None),)
    columnar_out, per_record_out = tmp_path / "columnar.out", tmp_path / "per-record.out"
    task = {"task.class": FILE_SINK, "file": str(columnar_out)}
    assert lease(servers, "sink", task, config, assignment, expected_count).records == (
        expected_count
    )
    monkeypatch.setattr(columnar, "sink_batch", lambda *args: None)
    task = {"task.class": PER_RECORD_SINK, "file": str(per_record_out)}
    assert lease(servers, "sink", task, config, assignment, expected_count).records == (
        expected_count
    )
    assert columnar_out.read_bytes() == per_record_out.read_bytes()
    lines = columnar_out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == expected_count + 1
    if not chain:
        assert lines[:2] == LINES[:2]
        assert lines[-5:] == ["wörld ✓", "", 'quote " and \\ backslash', "last", ""]
    else:  # hoisted on both sides (the chain is in the connector config of both)
        assert "line 0 the quick brown fox" in lines[0] and lines[0].count("origin") == 2


def test_the_sink_path_is_columnar_without_transformations(
    servers: str, tmp_path: Path, plugins: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the tasks receive: a SinkRecordBatch without SMTs, a list with them."""
    from sparkcat.api.batch import SinkRecordBatch
    from sparkcat.connectors.file.sink_task import FileStreamSinkTask

    source_file = tmp_path / "in.txt"
    source_file.write_text("a\nb\n")
    topic = f"columnar-kind-{uuid.uuid4().hex[:8]}"
    task = {"task.class": FILE_SOURCE, "file": str(source_file), "topic": topic}
    lease(servers, "source", task, {}, max_records=2)
    seen: list[type] = []
    original = FileStreamSinkTask.put

    def spy(self: FileStreamSinkTask, records: Any) -> None:
        if records:
            seen.append(type(records))
        original(self, records)

    monkeypatch.setattr(FileStreamSinkTask, "put", spy)
    for config in ({}, CHAIN):
        task = {"task.class": FILE_SINK, "file": str(tmp_path / "out.txt")}
        lease(servers, "sink", task, dict(config), ((topic, 0, None),), 2)
    assert seen == [SinkRecordBatch, list]
