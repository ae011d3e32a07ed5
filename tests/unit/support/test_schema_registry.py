"""Pins the behaviour of the test suite's Schema-Registry-compatible server over real HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from google.protobuf import descriptor_pb2
from tests.support.schema_registry import SchemaRegistryServer, avro_can_read

V1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
V2_OPTIONAL = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": ["null", "string"], "default": None},
    ],
}
V2_REQUIRED = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
}


@pytest.fixture
def server() -> Iterator[SchemaRegistryServer]:
    srv = SchemaRegistryServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def http(server: SchemaRegistryServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url) as client:
        yield client


def _body(schema: Any, schema_type: str | None = None) -> dict[str, Any]:
    body = {"schema": json.dumps(schema)}
    if schema_type:
        body["schemaType"] = schema_type
    return body


def test_register_gives_global_ids_and_versions(http: httpx.Client) -> None:
    first = http.post("/subjects/a-value/versions", json=_body(V1))
    assert first.status_code == 200 and first.json() == {"id": 1}
    # the same schema in another subject keeps its id; again in the same subject: no new version
    assert http.post("/subjects/b-value/versions", json=_body(V1)).json() == {"id": 1}
    assert http.post("/subjects/a-value/versions", json=_body(V1)).json() == {"id": 1}
    assert http.get("/subjects/a-value/versions").json() == [1]
    assert http.post("/subjects/a-value/versions", json=_body(V2_OPTIONAL)).json() == {"id": 2}
    assert http.get("/subjects/a-value/versions").json() == [1, 2]
    latest = http.get("/subjects/a-value/versions/latest").json()
    assert latest == {
        "subject": "a-value",
        "version": 2,
        "id": 2,
        "schema": json.dumps(V2_OPTIONAL, separators=(",", ":")),
    }
    assert http.get("/subjects/a-value/versions/1").json()["id"] == 1
    assert json.loads(http.get("/schemas/ids/2").json()["schema"]) == V2_OPTIONAL
    assert http.get("/subjects").json() == ["a-value", "b-value"]


def test_lookup(http: httpx.Client) -> None:
    http.post("/subjects/s/versions", json=_body(V1))
    found = http.post("/subjects/s", json=_body(V1))
    assert found.json()["version"] == 1 and found.json()["id"] == 1
    missing = http.post("/subjects/s", json=_body(V2_OPTIONAL))
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 40403, "message": "Schema not found"}


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/subjects/nope/versions", 404, 40401),
        ("/subjects/nope/versions/latest", 404, 40401),
        ("/schemas/ids/99", 404, 40403),
    ],
)
def test_not_found_errors(http: httpx.Client, path: str, status: int, code: int) -> None:
    response = http.get(path)
    assert response.status_code == status
    assert response.json()["error_code"] == code


def test_version_errors(http: httpx.Client) -> None:
    http.post("/subjects/s/versions", json=_body(V1))
    assert http.get("/subjects/s/versions/7").json() == {
        "error_code": 40402,
        "message": "Version 7 not found.",
    }
    bad = http.get("/subjects/s/versions/x")
    assert bad.status_code == 422 and bad.json()["error_code"] == 42202


def test_invalid_schema_is_422(http: httpx.Client) -> None:
    response = http.post("/subjects/s/versions", json={"schema": '{"type":"nope"}'})
    assert response.status_code == 422
    assert response.json()["error_code"] == 42201


def _proto(name: str, dependency: str | None = None, type_name: str = ".acme.Base") -> str:
    file = descriptor_pb2.FileDescriptorProto(name=name, package="acme", syntax="proto3")
    message = file.message_type.add(name=name.split("/")[-1].split(".")[0].title())
    if dependency:
        file.dependency.append(dependency)
        message.field.add(name="base", number=1, type=11, type_name=type_name, label=1)
    else:
        message.field.add(name="x", number=1, type=5, label=1)
    return base64.b64encode(file.SerializeToString()).decode()


def test_protobuf_schemas_are_serialized_descriptors_checked_with_their_references(
    http: httpx.Client,
) -> None:
    base = {"schema": _proto("acme/base.proto"), "schemaType": "PROTOBUF"}
    assert http.post("/subjects/base/versions", json=base).json() == {"id": 1}
    user = {"schema": _proto("acme/user.proto", "acme/base.proto"), "schemaType": "PROTOBUF"}
    missing = http.post("/subjects/user/versions", json=user)  # the import is not resolvable
    assert missing.status_code == 422 and missing.json()["error_code"] == 42201
    user["references"] = [{"name": "acme/base.proto", "subject": "base", "version": 1}]
    assert http.post("/subjects/user/versions", json=user).json() == {"id": 2}
    stored = http.get("/schemas/ids/2", params={"format": "serialized"}).json()
    assert stored["schemaType"] == "PROTOBUF" and stored["references"] == user["references"]
    # well-known imports need no reference
    stamp = _proto(
        "acme/stamp.proto", "google/protobuf/timestamp.proto", ".google.protobuf.Timestamp"
    )
    ok = http.post("/subjects/stamp/versions", json={"schema": stamp, "schemaType": "PROTOBUF"})
    assert ok.json() == {"id": 3}
    text = http.post(
        "/subjects/t/versions", json={"schema": "message M {}", "schemaType": "PROTOBUF"}
    )
    assert text.status_code == 422  # .proto text is not parsed here


def test_backward_refuses_a_required_field_and_accepts_an_optional_one(
    http: httpx.Client,
) -> None:
    http.post("/subjects/s/versions", json=_body(V1))
    refused = http.post("/subjects/s/versions", json=_body(V2_REQUIRED))
    assert refused.status_code == 409
    assert refused.json()["error_code"] == 409
    assert refused.json()["message"].startswith(
        'Schema being registered is incompatible with an earlier schema for subject "s"'
    )
    assert http.post("/subjects/s/versions", json=_body(V2_OPTIONAL)).json() == {"id": 2}


def test_compatibility_config(http: httpx.Client) -> None:
    assert http.get("/config").json() == {"compatibilityLevel": "BACKWARD"}
    missing = http.get("/config/s")
    assert missing.status_code == 404 and missing.json()["error_code"] == 40408
    assert http.get("/config/s?defaultToGlobal=true").json() == {"compatibilityLevel": "BACKWARD"}
    assert http.put("/config/s", json={"compatibility": "NONE"}).json() == {"compatibility": "NONE"}
    assert http.get("/config/s").json() == {"compatibilityLevel": "NONE"}
    invalid = http.put("/config", json={"compatibility": "SIDEWAYS"})
    assert invalid.status_code == 422 and invalid.json()["error_code"] == 42203
    http.post("/subjects/s/versions", json=_body(V1))
    assert http.post("/subjects/s/versions", json=_body(V2_REQUIRED)).json() == {"id": 2}


def test_compatibility_endpoint(http: httpx.Client) -> None:
    http.post("/subjects/s/versions", json=_body(V1))
    url = "/compatibility/subjects/s/versions/latest"
    assert http.post(url, json=_body(V2_OPTIONAL)).json() == {"is_compatible": True}
    assert http.post(url, json=_body(V2_REQUIRED)).json()["is_compatible"] is False
    http.put("/config/s", json={"compatibility": "FORWARD"})
    # FORWARD: the old schema must read the new one; dropping a field without default is fine
    assert http.post(url, json=_body(V2_REQUIRED)).json() == {"is_compatible": True}


@pytest.mark.parametrize(
    ("reader", "writer", "ok"),
    [
        ("long", "int", True),
        ("double", "float", True),
        ("int", "long", False),
        ("bytes", "string", True),
        (["null", "string"], "string", True),
        ("string", ["null", "string"], False),
        ({"type": "array", "items": "long"}, {"type": "array", "items": "int"}, True),
        ({"type": "map", "values": "int"}, {"type": "map", "values": "string"}, False),
        (V1, V2_REQUIRED, True),  # a removed field is ignored by the reader
        (V2_REQUIRED, V1, False),  # an added field without default
        (V2_OPTIONAL, V1, True),  # an added field with default
        (
            {"type": "enum", "name": "E", "symbols": ["A", "B"]},
            {"type": "enum", "name": "E", "symbols": ["A"]},
            True,
        ),
        (
            {"type": "enum", "name": "E", "symbols": ["A"]},
            {"type": "enum", "name": "E", "symbols": ["A", "B"]},
            False,
        ),
    ],
)
def test_avro_resolution_rules(reader: Any, writer: Any, ok: bool) -> None:
    assert (not avro_can_read(reader, writer)) is ok


def test_confluent_client_round_trip(server: SchemaRegistryServer) -> None:
    with SchemaRegistryClient({"url": server.url}) as client:
        text = json.dumps(V1)
        schema_id = client.register_schema("c-value", Schema(text, "AVRO"))
        assert client.get_schema(schema_id).schema_str == json.dumps(V1, separators=(",", ":"))
        assert client.get_latest_version("c-value").version == 1
        assert client.lookup_schema("c-value", Schema(text, "AVRO")).version == 1
        assert client.test_compatibility("c-value", Schema(json.dumps(V2_OPTIONAL), "AVRO"))
        with pytest.raises(SchemaRegistryError) as refused:
            client.register_schema("c-value", Schema(json.dumps(V2_REQUIRED), "AVRO"))
        assert refused.value.http_status_code == 409


def test_basic_auth_is_required_when_configured() -> None:
    server = SchemaRegistryServer(basic_auth="ann:secret").start()
    try:
        assert httpx.get(f"{server.url}/subjects").status_code == 401
        assert httpx.get(f"{server.url}/subjects", auth=("ann", "secret")).json() == []
    finally:
        server.stop()
