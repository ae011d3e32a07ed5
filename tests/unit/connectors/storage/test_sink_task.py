"""The storage sink task on local files: rotation, names, offsets approved, bad input."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import orjson
import pytest

from sparkcat.api import ConfigType, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import ErrantRecordReporter, SinkTaskContext
from sparkcat.connectors.storage import FileSystemSinkConnector, FileSystemSinkTask
from sparkcat.connectors.storage import config as c

TP = TopicPartition("orders", 1)
PKG = "io.confluent.connect.storage.partitioner."


class Reporter(ErrantRecordReporter):
    def __init__(self) -> None:
        self.reported: list[tuple[int, str]] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        self.reported.append((record.kafka_offset, str(error)))
        done: Future[None] = Future()
        done.set_result(None)
        return done


class Context(SinkTaskContext):
    def __init__(self, reporter: ErrantRecordReporter | None) -> None:
        self.reporter = reporter

    def configs(self) -> dict[str, str]:
        return {}

    def _reset_offsets(self, offsets: dict[TopicPartition, int]) -> None: ...
    def timeout(self, timeout_ms: int) -> None: ...
    def assignment(self) -> set[TopicPartition]:
        return {TP}

    def pause(self, *partitions: TopicPartition) -> None: ...
    def resume(self, *partitions: TopicPartition) -> None: ...
    def request_commit(self) -> None: ...
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


def make_task(tmp_path: Path, *reporter: Reporter, **extra: str) -> FileSystemSinkTask:
    props = {"store.url": f"file://{tmp_path}", "format.class": c.JSON_FORMAT, "flush.size": "3"}
    props.update(extra)
    task = FileSystemSinkTask()
    task.initialize(Context(reporter[0] if reporter else None))
    task.start(props)
    task.open([TP])
    return task


def rec(offset: int, value: Any, ts: int | None = None, schema: Any = None) -> SinkRecord:
    return SinkRecord("orders", 1, None, None, schema, value, offset, ts)


def objects(root: Path) -> dict[str, list[Any]]:
    return {
        str(p.relative_to(root)): [orjson.loads(x) for x in p.read_bytes().splitlines()]
        for p in sorted(root.rglob("*.json"))
    }


def test_rotates_on_flush_size_and_commits_only_uploaded_files(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    task.put([rec(i, {"i": i}) for i in range(10, 17)])
    assert objects(tmp_path) == {
        "topics/orders/partition=1/orders+1+0000000010.json": [{"i": 10}, {"i": 11}, {"i": 12}],
        "topics/orders/partition=1/orders+1+0000000013.json": [{"i": 13}, {"i": 14}, {"i": 15}],
    }
    # Offset 16 is buffered, not uploaded: the next lease starts there.
    assert task.pre_commit({TP: 17}) == {TP: 16}
    task.close([TP])
    task.stop()
    assert len(objects(tmp_path)) == 2


def test_all_uploaded_commits_everything(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    task.put([rec(i, i) for i in range(6)])
    assert task.pre_commit({TP: 6}) == {TP: 6}
    assert task.pre_commit({TopicPartition("other", 0): 4}) == {TopicPartition("other", 0): 4}


def test_a_rerun_from_the_committed_offset_writes_the_same_objects(tmp_path: Path) -> None:
    first = make_task(tmp_path)
    first.put([rec(i, {"i": i}) for i in range(8)])
    committed = first.pre_commit({TP: 8})[TP]
    first.close([TP])
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    rerun = make_task(tmp_path)  # a crash lost the commit: redo from 0
    rerun.put([rec(i, {"i": i}) for i in range(8)])
    assert rerun.pre_commit({TP: 8})[TP] == committed == 6
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == snapshot


def test_field_partitioner_rotates_all_files_of_the_partition_together(tmp_path: Path) -> None:
    task = make_task(tmp_path, **{"partitioner.class": PKG + "FieldPartitioner",
                                  "partition.field.name": "r", "flush.size": "4"})  # fmt: skip
    task.put([rec(i, {"r": "ab"[i % 3 == 0], "i": i}) for i in range(6)])
    assert sorted(objects(tmp_path)) == [
        "topics/orders/r=a/orders+1+0000000001.json",
        "topics/orders/r=b/orders+1+0000000000.json",
    ]
    assert task.pre_commit({TP: 6}) == {TP: 4}


def test_rotate_interval_uses_record_timestamps(tmp_path: Path) -> None:
    task = make_task(tmp_path, **{"partitioner.class": PKG + "HourlyPartitioner",
                                  "locale": "en", "timezone": "UTC",
                                  "timestamp.extractor": "Record", "flush.size": "100",
                                  "rotate.interval.ms": "600000"})  # fmt: skip
    hour = 3_600_000
    stamps = [0, 60_000, 600_000, 700_000, hour + 1, hour + 2]
    task.put([rec(i, i, ts) for i, ts in enumerate(stamps)])
    assert objects(tmp_path) == {
        # 600 s after the file's first timestamp: rotate before the record.
        "topics/orders/year=1970/month=01/day=01/hour=00/orders+1+0000000000.json": [0, 1],
        # A new encoded partition: rotate too.
        "topics/orders/year=1970/month=01/day=01/hour=00/orders+1+0000000002.json": [2, 3],
    }
    assert task.pre_commit({TP: 6}) == {TP: 4}


def test_schema_change_rotates(tmp_path: Path) -> None:
    s1 = SchemaBuilder.struct().field("a", SchemaBuilder.int32().build()).build()
    s2 = SchemaBuilder.struct().field("a", SchemaBuilder.int64().build()).build()
    task = make_task(tmp_path, **{"flush.size": "10"})
    task.put([rec(0, Struct(s1).put("a", 1), schema=s1), rec(1, Struct(s2).put("a", 2), schema=s2)])
    assert list(objects(tmp_path).values()) == [[{"a": 1}]]
    assert task.pre_commit({TP: 2}) == {TP: 1}


def test_bad_records_go_to_the_error_handler(tmp_path: Path) -> None:
    reporter = Reporter()
    task = make_task(tmp_path, reporter, **{"partitioner.class": PKG + "FieldPartitioner",
                                            "partition.field.name": "r"})  # fmt: skip
    task.put([rec(0, {"r": 1}), rec(1, {"x": 1}), rec(2, None), rec(3, {"r": 1}),
              rec(4, {"r": 1})])  # fmt: skip
    assert reporter.reported == [
        (1, "Field 'r' is not present in the record value."),
        (2, "Record orders-1@2 has a null value and behavior.on.null.values=fail (set "
            "behavior.on.null.values=ignore to skip tombstones)"),
    ]  # fmt: skip
    assert objects(tmp_path) == {"topics/orders/r=1/orders+1+0000000000.json": [{"r": 1}] * 3}


def test_bad_records_fail_the_task_without_an_error_handler(tmp_path: Path) -> None:
    task = make_task(tmp_path, **{"partitioner.class": PKG + "TimeBasedPartitioner",
                                  "partition.duration.ms": "1000", "path.format": "YYYY",
                                  "locale": "en", "timezone": "UTC",
                                  "timestamp.extractor": "Record"})  # fmt: skip
    with pytest.raises(DataError, match="Unable to determine timestamp"):
        task.put([rec(0, 1, None)])


def test_ignored_null_values(tmp_path: Path) -> None:
    task = make_task(tmp_path, **{"behavior.on.null.values": "ignore", "flush.size": "2"})
    task.put([rec(0, None), rec(1, 1), rec(2, 2)])
    assert list(objects(tmp_path)) == ["topics/orders/partition=1/orders+1+0000000001.json"]


def test_scheduled_rotation_on_the_wall_clock(tmp_path: Path) -> None:
    task = make_task(tmp_path, **{"rotate.schedule.interval.ms": "1", "flush.size": "100"})
    task.put([rec(0, 0)])
    import time

    time.sleep(0.01)
    assert task.pre_commit({TP: 1}) == {TP: 1}
    assert list(objects(tmp_path).values()) == [[0]]


def test_connector_validates_config(tmp_path: Path) -> None:
    connector = FileSystemSinkConnector()
    with pytest.raises(ConfigError, match="file://"):
        connector.start({"store.url": "s3://x", "format.class": c.JSON_FORMAT, "flush.size": "1"})
    with pytest.raises(ConfigError, match=r"flush\.size"):
        connector.start({"store.url": f"file://{tmp_path}", "format.class": c.JSON_FORMAT})
    connector.start({"store.url": f"file://{tmp_path}", "format.class": c.JSON_FORMAT,
                     "flush.size": "1"})  # fmt: skip
    assert connector.task_configs(2)[1]["flush.size"] == "1"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"),
     ("S3Sink", "S3SinkConnector"), ("FileSystemSink", "FileSystemSinkConnector"),
     ("sparkcat.connectors.storage.FileSystemSinkConnector", "FileSystemSinkConnector")],
)  # fmt: skip
def test_registered_names(name: str, expected: str) -> None:
    from sparkcat.runtime.isolation.plugins import default_registry

    assert default_registry(()).resolve(name, "sink").__name__ == expected


def test_secret_key_is_a_password() -> None:
    key = c.S3_CONFIG_DEF.config_keys()[c.AWS_SECRET_ACCESS_KEY_CONFIG]
    assert key.type is ConfigType.PASSWORD
