"""The storage sinks in sink leases (the worker's lease loop, real broker, no Spark): every
record lands exactly once, in order, in deterministic objects on S3 (moto) and local files."""

from __future__ import annotations

import gzip
import io
import time
import uuid
from pathlib import Path
from typing import Any

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from tests.support.leases import lease_spec
from tests.support.orders import BASE_TS, order, produce_orders

from sparkcat.runtime.tasks.lease import run_lease

from .conftest import S3Server

pytestmark = pytest.mark.broker

PER_PARTITION = 100_000  # x 2 partitions: 200,000 records
JSON = "org.apache.kafka.connect.json.JsonConverter"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
FORMATS = "io.confluent.connect.s3.format."
PKG = "io.confluent.connect.storage.partitioner."


@pytest.fixture(scope="module")
def big_topic(servers: str) -> str:
    return produce_orders(servers, 2, PER_PARTITION)


def lease(servers: str, name: str, config: dict[str, str], offsets: dict[int, int | None],
          topic: str, max_records: int) -> Any:  # fmt: skip
    spec = lease_spec(
        servers, "sink", name, config, config, key_converter=BYTES, value_converter=BYTES,
        max_ms=120_000, max_records=max_records,
        assignment=tuple((topic, p, o) for p, o in sorted(offsets.items())),
    )  # fmt: skip
    result = run_lease(spec)
    assert result.trace is None, result.trace
    return result


def run_until_done(servers: str, config: dict[str, str], topic: str, per_partition: int,
                   max_records: int, target: int | None = None) -> int:  # fmt: skip
    """Leases until every partition committed ``target`` (default: all ``per_partition``
    records); returns the lease count."""
    target = per_partition if target is None else target
    offsets: dict[int, int | None] = {0: None, 1: None}
    name = f"storage-{uuid.uuid4().hex[:8]}"  # the pipeline (converters) is cached by name
    for count in range(1, 200):
        # Never ask for more than is left: a lease that runs dry waits out max.batch.ms.
        left = sum(per_partition - (o or 0) for o in offsets.values())
        result = lease(servers, name, config, offsets, topic, min(max_records, left))
        offsets.update({p: o for _, p, o in result.sink_offsets})
        if all(o == target for o in offsets.values()):
            return count
    raise AssertionError(f"not done after 200 leases: {offsets}")


def connector_config(topic: str, fmt: str, **extra: str) -> dict[str, str]:
    config = {
        "task.class": "io.confluent.connect.s3.S3SinkTask",
        "topics": topic, "format.class": FORMATS + fmt, "flush.size": "25000",
        "value.converter": JSON, "value.converter.schemas.enable": "true",
    }  # fmt: skip
    config.update(extra)
    return config


def read_back(fmt: str, data: bytes) -> list[Any]:
    if fmt == "parquet.ParquetFormat":
        return pq.read_table(io.BytesIO(data)).to_pylist()
    if fmt == "avro.AvroFormat":
        return list(fastavro.reader(io.BytesIO(data)))
    if fmt == "json.JsonFormat":
        return [orjson.loads(line) for line in data.splitlines()]
    return [orjson.loads(line)["payload"] for line in data.splitlines()]


FORMAT_CASES = [
    ("parquet.ParquetFormat", ".snappy.parquet", {}),
    ("avro.AvroFormat", ".avro", {}),
    ("json.JsonFormat", ".json", {}),
    ("bytearray.ByteArrayFormat", ".bin", {"value.converter": BYTES}),
]


def check_objects(objects: dict[str, bytes], topic: str, fmt: str, ext: str) -> None:
    """Every record exactly once, in order, in files named after their first offset."""
    for p in range(2):
        prefix = f"topics/{topic}/partition={p}/{topic}+{p}+"
        keys = sorted(k for k in objects if k.startswith(prefix))
        rows: list[Any] = []
        for key in keys:
            assert key.endswith(ext)
            assert key[len(prefix) : -len(ext)] == f"{len(rows):010d}"
            rows.extend(read_back(fmt, objects[key]))
        assert rows == [order(p * PER_PARTITION + i) for i in range(PER_PARTITION)]
    assert len(objects) == 2 * PER_PARTITION // 25_000


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "ext", "extra"), FORMAT_CASES)
def test_s3_200k_records_in_each_format(
    servers: str, s3_server: S3Server, big_topic: str, fmt: str, ext: str, extra: dict[str, str]
) -> None:
    bucket = s3_server.new_bucket()
    config = connector_config(big_topic, fmt, **{"s3.bucket.name": bucket, "store.url":
                              s3_server.endpoint, "aws.access.key.id": "testing",
                              "aws.secret.access.key": "testing", **extra})  # fmt: skip
    # 70,000 records per lease: leases end in the middle of files, which the next re-reads.
    leases = run_until_done(servers, config, big_topic, PER_PARTITION, 70_000)
    assert leases >= 3
    client = s3_server.client()
    listed = client.list_objects_v2(Bucket=bucket)["Contents"]
    objects = {o["Key"]: client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
               for o in listed}  # fmt: skip
    check_objects(objects, big_topic, fmt, ext)


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "ext", "extra"), FORMAT_CASES)
def test_local_files_200k_records_in_each_format(
    servers: str, big_topic: str, tmp_path: Path, fmt: str, ext: str, extra: dict[str, str]
) -> None:
    config = connector_config(big_topic, fmt, **{"store.url": f"file://{tmp_path}", **extra})
    config["task.class"] = "sparkcat.connectors.storage.FileSystemSinkTask"
    run_until_done(servers, config, big_topic, PER_PARTITION, 250_000)
    objects = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*.*")}
    check_objects(objects, big_topic, fmt, ext)


def test_a_lost_commit_rewrites_the_same_objects(servers: str, tmp_path: Path) -> None:
    topic = produce_orders(servers, 2, 1000)
    config = connector_config(topic, "json.JsonFormat", **{
        "store.url": f"file://{tmp_path}", "flush.size": "300", "s3.compression.type": "gzip",
        "task.class": "sparkcat.connectors.storage.FileSystemSinkTask"})  # fmt: skip
    lost = f"lost-{uuid.uuid4().hex[:8]}"
    lease(servers, lost, config, {0: None, 1: None}, topic, 1500)
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*.gz")}
    assert snapshot
    # The worker died before committing: the next lease starts where the last commit was and
    # (however far it gets) rewrites byte-identical objects under the same names.
    again = lease(servers, lost, config, {0: None, 1: None}, topic, 2000)
    assert {p: p.read_bytes() for p in snapshot} == snapshot
    committed = {p: o for _, p, o in again.sink_offsets}
    left = sum(1000 - o for o in committed.values())  # all of it: no wait for more data
    rest = lease(servers, lost, config, committed, topic, left)
    assert {p: o for _, p, o in rest.sink_offsets} == {0: 900, 1: 900}
    got = sorted(
        orjson.loads(line)["id"] for f in tmp_path.rglob("*.json.gz")
         for line in gzip.decompress(f.read_bytes()).splitlines()
    )  # fmt: skip
    assert got == sorted([i for i in range(900)] + [1000 + i for i in range(900)])


def test_field_and_time_partitioning_with_record_timestamps(servers: str, tmp_path: Path) -> None:
    topic = produce_orders(servers, 2, 4000)
    field_dir, time_dir = tmp_path / "field", tmp_path / "time"
    base = {"task.class": "sparkcat.connectors.storage.FileSystemSinkTask", "flush.size": "1000"}
    by_field = connector_config(topic, "json.JsonFormat", **base, **{
        "store.url": f"file://{field_dir}", "partitioner.class": PKG + "FieldPartitioner",
        "partition.field.name": "region"})  # fmt: skip
    by_hour = connector_config(topic, "avro.AvroFormat", **base, **{
        "store.url": f"file://{time_dir}", "partitioner.class": PKG + "HourlyPartitioner",
        "locale": "en-US", "timezone": "UTC", "timestamp.extractor": "Record",
        "rotate.interval.ms": "600000", "topics.dir": "exports"})  # fmt: skip
    run_until_done(servers, by_field, topic, 4000, 100_000)
    # The last file (records 3400-3999) stays open until a record 600 s later arrives, as in
    # Confluent's connector: its offsets are not committed.
    run_until_done(servers, by_hour, topic, 4000, 100_000, target=3400)

    def read(f: Path) -> list[Any]:
        return [orjson.loads(x) for x in f.read_bytes().splitlines()]

    for region in ("eu", "us", "ap"):
        rows = [r for f in (field_dir / "topics" / topic / f"region={region}").iterdir()
                for r in read(f)]  # fmt: skip
        assert {r["region"] for r in rows} == {region}
    all_rows = [r for f in field_dir.rglob("*.json") for r in read(f)]
    assert sorted(r["id"] for r in all_rows) == list(range(8000))
    # Record i has timestamp BASE_TS + i s: hour buckets of the record timestamps (UTC), files
    # rotating every 600 s of record time.
    for f in time_dir.rglob("*.avro"):
        rows = list(fastavro.reader(io.BytesIO(f.read_bytes())))
        start = int(f.name.split("+")[2].split(".")[0])
        first_ts = BASE_TS + start * 1000
        from datetime import UTC, datetime

        when = datetime.fromtimestamp(first_ts / 1000, UTC)
        assert f.parent.relative_to(time_dir / "exports" / topic).as_posix() == (
            f"year={when:%Y}/month={when:%m}/day={when:%d}/hour={when:%H}"
        )
        assert len(rows) <= 600
    total = sum(len(list(fastavro.reader(io.BytesIO(f.read_bytes()))))
                for f in time_dir.rglob("*.avro"))  # fmt: skip
    assert total == 6800
    hours = {f.parent.name for f in time_dir.rglob("*.avro")}
    assert hours == {"hour=22", "hour=23"}


def test_bad_records_reach_the_dlq_with_a_clear_message(servers: str, tmp_path: Path) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    topic, dlq = f"bad-{uuid.uuid4().hex[:8]}", f"dlq-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": servers})
    values = [{"region": "eu", "id": i} for i in range(6)]
    values[2] = {"id": 2}  # no partition field
    for value in values:
        producer.produce(topic, orjson.dumps(value), None, 0)
    producer.produce(topic, None, None, 0)  # a tombstone (behavior.on.null.values=fail)
    assert producer.flush(10) == 0
    config = {
        "task.class": "sparkcat.connectors.storage.FileSystemSinkTask", "topics": topic,
        "store.url": f"file://{tmp_path}", "flush.size": "5",
        "format.class": FORMATS + "json.JsonFormat", "partitioner.class": PKG + "FieldPartitioner",
        "partition.field.name": "region", "value.converter": JSON,
        "value.converter.schemas.enable": "false", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }  # fmt: skip
    spec = lease_spec(
        servers, "sink", f"bad-{uuid.uuid4().hex[:8]}", config, config, key_converter=BYTES,
        value_converter=BYTES, max_ms=60_000, max_records=7, assignment=((topic, 0, None),),
    )  # fmt: skip
    result = run_lease(spec)
    assert result.trace is None, result.trace
    assert result.sink_offsets == ((topic, 0, 7),)
    written = tmp_path / "topics" / topic / "region=eu" / f"{topic}+0+0000000000.json"
    assert [orjson.loads(x)["id"] for x in written.read_bytes().splitlines()] == [0, 1, 3, 4, 5]
    consumer = Consumer({"bootstrap.servers": servers, "group.id": dlq,
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([dlq])
    messages: list[Any] = []
    deadline = time.monotonic() + 30
    while len(messages) < 2 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            messages.append(message)
    consumer.close()
    reasons = {
        int(dict(m.headers())["__connect.errors.offset"]): dict(m.headers())[
            "__connect.errors.exception.message"
        ].decode()
        for m in messages
    }
    assert reasons == {
        2: "Field 'region' is not present in the record value.",
        6: f"Record {topic}-0@6 has a null value and behavior.on.null.values=fail (set "
        "behavior.on.null.values=ignore to skip tombstones)",
    }
