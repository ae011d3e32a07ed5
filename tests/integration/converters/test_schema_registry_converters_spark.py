"""Schema Registry converters end to end: FileStream source -> the real broker -> FileStream sink,
through the worker's Spark engine, with the test Schema Registry holding the schemas."""

from __future__ import annotations

import base64
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import descriptor_pb2
from tests.support.engine import RecordingListener
from tests.support.files import lines_of
from tests.support.plans import file_sink, file_source
from tests.support.registry_converters import versions
from tests.support.waiting import wait_for

from sparkcat.engine import SparkEngine
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

AVRO = "io.confluent.connect.avro.AvroConverter"


@pytest.fixture
def engine(
    spark: Any, kafka_broker: Any, plugins_dir: Path, tmp_path: Path
) -> Iterator[SparkEngine]:
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.path": str(plugins_dir),
        "max.batch.ms": "2000",
        "offset.flush.interval.ms": "4000",
    }
    sys.path.insert(0, worker["plugin.path"])
    engine = SparkEngine(worker, MemoryOffsetStore(), session=spark)
    yield engine
    engine.close()
    sys.path.remove(worker["plugin.path"])


def avro(url: str) -> dict[str, str]:
    return {"value.converter": AVRO, "value.converter.schema.registry.url": url}


def hoist(**extra: str) -> dict[str, str]:
    return {
        "transforms": "hoist",
        "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.hoist.field": "line",
        **extra,
    }


def test_avro_through_kafka_with_a_backward_compatible_evolution(
    engine: SparkEngine, schema_registry: str, tmp_path: Path
) -> None:
    topic = f"avro-e2e-{uuid.uuid4().hex[:8]}"
    first, second, out = tmp_path / "v1.txt", tmp_path / "v2.txt", tmp_path / "sink.txt"
    first.write_text("foo\nbar\n")
    listener = RecordingListener()
    plan = file_source(f"v1-{topic}", first, topic, **{**avro(schema_registry), **hoist()})
    engine.start_connector(plan, listener)
    engine.start_connector(
        file_sink(f"sink-{topic}", out, topic, **avro(schema_registry)), listener
    )
    wait_for(lambda: lines_of(out) == ["Struct{line=foo}", "Struct{line=bar}"], 240, "v1 records")
    assert versions(schema_registry, f"{topic}-value") == [1]

    # v2 adds an optional field (InsertField's static field): BACKWARD compatible
    engine.stop_connector(f"v1-{topic}")
    second.write_text("baz\n")
    insert = hoist(
        transforms="hoist,origin",
        **{
            "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.origin.static.field": "origin",
            "transforms.origin.static.value": "v2",
        },
    )
    plan = file_source(f"v2-{topic}", second, topic, **{**avro(schema_registry), **insert})
    engine.start_connector(plan, listener)
    wait_for(lambda: lines_of(out)[2:] == ["Struct{line=baz,origin=v2}"], 240, "the v2 record")
    assert versions(schema_registry, f"{topic}-value") == [1, 2]
    latest = json.loads(
        httpx.get(f"{schema_registry}/subjects/{topic}-value/versions/2").json()["schema"]
    )
    assert latest["fields"][1] == {"name": "origin", "type": ["null", "string"], "default": None}
    assert not listener.traces


def test_incompatible_schema_fails_the_task_with_the_registry_message(
    engine: SparkEngine, schema_registry: str, tmp_path: Path
) -> None:
    topic = f"avro-e2e-{uuid.uuid4().hex[:8]}"
    # What the topic held so far: plain strings. A record is not BACKWARD compatible with it.
    httpx.post(
        f"{schema_registry}/subjects/{topic}-value/versions", json={"schema": '"string"'}
    ).raise_for_status()
    path = tmp_path / "in.txt"
    path.write_text("foo\n")
    listener = RecordingListener()
    plan = file_source(f"src-{topic}", path, topic, **{**avro(schema_registry), **hoist()})
    engine.start_connector(plan, listener)
    trace = wait_for(lambda: listener.traces.get((f"src-{topic}", 0)), 240, "the task to fail")
    assert listener.states[(f"src-{topic}", 0)] == "FAILED"
    assert f"Failed to serialize Avro data from topic {topic}" in trace
    assert "Schema being registered is incompatible with an earlier schema" in trace
    assert versions(schema_registry, f"{topic}-value") == [1]


@pytest.mark.parametrize(
    ("converter", "schema_type"),
    [
        ("io.confluent.connect.json.JsonSchemaConverter", "JSON"),
        ("io.confluent.connect.protobuf.ProtobufConverter", "PROTOBUF"),
    ],
    ids=["json-schema", "protobuf"],
)
def test_schema_converter_through_kafka(
    engine: SparkEngine, schema_registry: str, tmp_path: Path, converter: str, schema_type: str
) -> None:
    topic = f"{schema_type.lower()}-e2e-{uuid.uuid4().hex[:8]}"
    source_file, out = tmp_path / "in.txt", tmp_path / "sink.txt"
    source_file.write_text("foo\nbar\n")
    converters = {
        "value.converter": converter,
        "value.converter.schema.registry.url": schema_registry,
    }
    listener = RecordingListener()
    plan = file_source(f"src-{topic}", source_file, topic, **{**converters, **hoist()})
    engine.start_connector(plan, listener)
    engine.start_connector(file_sink(f"sink-{topic}", out, topic, **converters), listener)
    wait_for(lambda: lines_of(out) == ["Struct{line=foo}", "Struct{line=bar}"], 240, "the records")
    registered = httpx.get(f"{schema_registry}/subjects/{topic}-value/versions/latest").json()
    assert registered["schemaType"] == schema_type
    if schema_type == "JSON":
        assert json.loads(registered["schema"])["properties"]["line"]["type"] == "string"
    else:
        file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(registered["schema"]))
        (field,) = file.message_type[0].field
        assert (field.name, field.type) == ("line", field.TYPE_STRING)
    assert not listener.traces
