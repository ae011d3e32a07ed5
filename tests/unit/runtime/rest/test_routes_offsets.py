"""The offsets API (KIP-875) and ``initial_offsets`` on create (KIP-995), source side
(sink offsets live in a consumer group: see tests/integration/runtime/test_rest_sink_offsets.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkcat.api.source import SourceConnector
from sparkcat.runtime.stores.offsets import MemoryOffsetStore

SOURCE = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
SINK = {"connector.class": "FileStreamSink", "topics": "t", "file": "out.txt"}
P = {"filename": "in.txt"}
STOP_FIRST = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
    "done for the specified connector by issuing a 'PUT' request to the '/connectors/{}/stop' "
    "endpoint"
)
FRAMEWORK = (
    "The Connect framework-managed offsets for this connector have been {0} successfully. "
    "However, if this connector manages offsets externally, they will need to be manually {0} "
    "in the system that the connector uses."
)


def error(status: int, message: str) -> dict[str, Any]:
    return {"error_code": status, "message": message}


def entries(*pairs: tuple[Any, Any]) -> dict[str, Any]:
    return {"offsets": [{"partition": p, "offset": o} for p, o in pairs]}


class ExternalOffsetsSource(SourceConnector):
    """A source that says it handled offset changes itself (alter_offsets → True)."""

    def version(self) -> str:
        return "1"

    def start(self, props: Any) -> None:
        pass

    def task_class(self) -> type:
        from sparkcat.connectors.file.source_task import FileStreamSourceTask

        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass

    def config(self) -> Any:
        from sparkcat.api.config import ConfigDef

        return ConfigDef()

    def alter_offsets(self, config: Any, offsets: Any) -> bool:
        if any(o is not None and o.get("position") == -1 for _, o in offsets):
            from sparkcat.api.errors import ConnectError

            raise ConnectError("negative positions are not allowed")
        return True


class FixedOffsetsSource(ExternalOffsetsSource):
    def alter_offsets(self, config: Any, offsets: Any) -> bool:
        raise NotImplementedError


EXTERNAL = {"connector.class": f"{__name__}:ExternalOffsetsSource"}


def test_get_offsets(client: TestClient, offset_store: MemoryOffsetStore) -> None:
    assert client.get("/connectors/x/offsets").json() == error(404, "Connector x not found")
    client.put("/connectors/s/config", json=SOURCE)
    assert client.get("/connectors/s/offsets").json() == {"offsets": []}
    offset_store.put_batch("s", [(P, {"position": 30})])
    offset_store.put_batch("other", [(P, {"position": 1})])
    assert client.get("/connectors/s/offsets").json() == entries((P, {"position": 30}))


def test_alter_and_reset_source_offsets(
    client: TestClient, offset_store: MemoryOffsetStore
) -> None:
    client.put("/connectors/s/config", json=SOURCE)
    body = entries((P, {"position": 5}))
    assert client.patch("/connectors/s/offsets", json=body).json() == error(
        400, STOP_FIRST.format("s")
    )
    assert client.delete("/connectors/s/offsets").json() == error(400, STOP_FIRST.format("s"))
    client.put("/connectors/s/stop")
    altered = client.patch("/connectors/s/offsets", json=body)
    assert altered.status_code == 200
    assert altered.json() == {
        "message": "The offsets for this connector have been altered successfully"
    }
    assert offset_store.get("s", P) == {"position": 5}
    other = {"filename": "in.txt", "x": 1}
    client.patch("/connectors/s/offsets", json=entries((other, {"position": 1})))
    client.patch("/connectors/s/offsets", json=entries((other, None)))  # null resets one
    assert client.get("/connectors/s/offsets").json() == body
    reset = client.delete("/connectors/s/offsets")
    assert reset.json() == {
        "message": "The offsets for this connector have been reset successfully"
    }
    assert client.get("/connectors/s/offsets").json() == {"offsets": []}
    assert client.delete("/connectors/s/offsets").status_code == 200  # idempotent


def test_success_message_follows_alter_offsets(client: TestClient) -> None:
    client.post("/connectors", json={"name": "e", "config": EXTERNAL, "initial_state": "STOPPED"})
    ok = client.patch("/connectors/e/offsets", json=entries(({"k": "v"}, {"position": 1})))
    assert ok.json() == {"message": "The offsets for this connector have been altered successfully"}
    rejected = client.patch("/connectors/e/offsets", json=entries(({"k": "v"}, {"position": -1})))
    assert rejected.json() == error(500, "negative positions are not allowed")
    fixed = {"connector.class": f"{__name__}:FixedOffsetsSource"}
    client.post("/connectors", json={"name": "f", "config": fixed, "initial_state": "STOPPED"})
    assert client.delete("/connectors/f/offsets").json() == error(
        500, "Failed to modify offsets for connector f because it doesn't support external "
        "modification of offsets",
    )  # fmt: skip


def test_framework_message_for_a_connector_without_alter_offsets(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkcat.connectors.file.source_connector import FileStreamSourceConnector

    # FileStreamSource validates and answers True; the base class default is False.
    monkeypatch.setattr(FileStreamSourceConnector, "alter_offsets", SourceConnector.alter_offsets)
    client.post("/connectors", json={"name": "s", "config": SOURCE, "initial_state": "STOPPED"})
    assert client.delete("/connectors/s/offsets").json() == {"message": FRAMEWORK.format("reset")}
    altered = client.patch("/connectors/s/offsets", json=entries((P, {"position": 1})))
    assert altered.json() == {"message": FRAMEWORK.format("altered")}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "Partitions / offsets need to be provided for an alter offsets request"),
        ({"offsets": []}, "Partitions / offsets need to be provided for an alter offsets request"),
        (None, "Partitions / offsets need to be provided for an alter offsets request"),
        (entries((None, {"a": 1})), "Partition objects cannot be null"),
        (entries(({"a": [1]}, {"b": 1})),
         "Offsets may only contain primitive types as values, but field a contains ARRAY"),
        (entries(({"a": 1}, {"b": {"c": 1}})),
         "Offsets may only contain primitive types as values, but field b contains MAP"),
    ],
)  # fmt: skip
def test_source_offsets_validation(client: TestClient, body: Any, message: str) -> None:
    client.post("/connectors", json={"name": "s", "config": SOURCE, "initial_state": "STOPPED"})
    response = client.patch("/connectors/s/offsets", json=body)
    assert response.json() == error(400, message)


def test_empty_body_is_checked_before_the_connector_lookup(client: TestClient) -> None:
    assert client.patch("/connectors/nope/offsets", json={}).json() == error(
        400, "Partitions / offsets need to be provided for an alter offsets request"
    )
    assert client.patch("/connectors/nope/offsets", json=entries((P, None))).json() == error(
        404, "Connector nope not found"
    )
    assert client.delete("/connectors/nope/offsets").json() == error(
        404, "Connector nope not found"
    )


MALFORMED = [[], {"offsets": {}}, {"offsets": [123]}, {"offsets": [{"extra": 1}]}, "text"]


@pytest.mark.parametrize("body", MALFORMED)
def test_malformed_offsets_bodies_are_400(client: TestClient, body: Any) -> None:
    client.post("/connectors", json={"name": "s", "config": SOURCE, "initial_state": "STOPPED"})
    response = client.patch("/connectors/s/offsets", json=body)
    assert response.status_code == 400
    assert set(response.json()) == {"error_code", "message"}


K = {"kafka_topic": "t", "kafka_partition": 0}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"offset": {"kafka_offset": 1}},
         "The partition for a sink connector offset cannot be null or missing"),
        ({"partition": {"kafka_topic": "t"}, "offset": None},
         "The partition for a sink connector offset must contain the keys 'kafka_topic' and "
         "'kafka_partition'"),
        ({"partition": {"kafka_topic": None, "kafka_partition": 0}, "offset": None},
         "Kafka topic names must be valid strings and may not be null"),
        ({"partition": {"kafka_topic": "t", "kafka_partition": None}, "offset": None},
         "Kafka partitions must be valid numbers and may not be null"),
        ({"partition": {"kafka_topic": "t", "kafka_partition": "zero"}, "offset": None},
         "Failed to parse the following Kafka partition value in the provided offsets: 'zero'. "
         "Partition values for sink connectors need to be integers."),
        ({"partition": K, "offset": {"position": 1}},
         "The offset for a sink connector should either be null or contain the key "
         "'kafka_offset'"),
        ({"partition": K, "offset": {"kafka_offset": "ten"}},
         "Failed to parse the following Kafka offset value in the provided offsets: 'ten'. "
         "Offset values for sink connectors need to be integers."),
    ],
)  # fmt: skip
def test_sink_offsets_validation(client: TestClient, entry: dict[str, Any], message: str) -> None:
    client.post("/connectors", json={"name": "k", "config": SINK, "initial_state": "STOPPED"})
    response = client.patch("/connectors/k/offsets", json={"offsets": [entry]})
    assert response.json() == error(400, message)


# -- KIP-995 ----------------------------------------------------------------------------------
def test_create_with_initial_offsets(client: TestClient, offset_store: MemoryOffsetStore) -> None:
    offset_store.put_batch("s", [({"filename": "old.txt"}, {"position": 99})])  # a remnant
    initial = [{"partition": P, "offset": {"position": 7}}]
    created = client.post("/connectors", json={"name": "s", "config": SOURCE,
                                               "initial_offsets": initial})  # fmt: skip
    assert created.status_code == 201
    assert created.json()["offsets_status"] == (
        "The offsets for this connector have been set successfully"
    )
    # Existing offsets were wiped, not merged.
    assert client.get("/connectors/s/offsets").json() == {"offsets": initial}
    assert client.get("/connectors/s/status").json()["connector"]["state"] == "RUNNING"
    plain = client.post("/connectors", json={"name": "p", "config": SOURCE})
    assert "offsets_status" not in plain.json()


def test_initial_offsets_with_initial_state_and_the_framework_message(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkcat.connectors.file.source_connector import FileStreamSourceConnector

    monkeypatch.setattr(FileStreamSourceConnector, "alter_offsets", SourceConnector.alter_offsets)
    created = client.post("/connectors", json={
        "name": "s", "config": SOURCE, "initial_state": "STOPPED",
        "initial_offsets": {"offsets": [{"partition": P, "offset": {"position": 3}}]},
    })  # fmt: skip
    assert created.json()["offsets_status"] == (
        "The framework-managed offsets for this connector have been set successfully. However, "
        "if this connector manages offsets externally, they will need to be manually set in the "
        "system that the connector uses."
    )
    assert client.get("/connectors/s/status").json()["connector"]["state"] == "STOPPED"
    assert client.get("/connectors/s/offsets").json()["offsets"][0]["offset"] == {"position": 3}


def test_initial_offsets_failures_name_the_step(
    client: TestClient, offset_store: MemoryOffsetStore
) -> None:
    invalid = client.post(
        "/connectors", json={"name": "s", "config": SOURCE, "initial_offsets": []}
    )
    assert invalid.json() == error(
        400, "Failed to create connector s: its initial offsets are invalid: Partitions / offsets "
        "need to be provided for an alter offsets request",
    )  # fmt: skip
    offset_store.put_batch("e", [({"k": "old"}, {"position": 1})])
    rejected = client.post("/connectors", json={
        "name": "e", "config": EXTERNAL,
        "initial_offsets": [{"partition": {"k": "v"}, "offset": {"position": -1}}],
    })  # fmt: skip
    assert rejected.json() == error(
        500, "Failed to create connector e: its initial offsets could not be written (its "
        "previous offsets were wiped): negative positions are not allowed",
    )  # fmt: skip
    assert offset_store.get_all("e") == []  # KIP-995: the previous offsets are gone
    assert client.get("/connectors").json() == []
    bad_config = client.post("/connectors", json={
        "name": "b", "config": {"connector.class": "FileStreamSource"},
        "initial_offsets": [{"partition": P, "offset": {"position": 1}}],
    })  # fmt: skip
    assert bad_config.status_code == 400
    assert bad_config.json()["message"].startswith("Connector configuration is invalid")
    assert offset_store.get_all("b") == []


def test_initial_offsets_on_an_existing_name_keep_its_offsets(
    client: TestClient, offset_store: MemoryOffsetStore
) -> None:
    client.post("/connectors", json={"name": "s", "config": SOURCE})
    offset_store.put_batch("s", [(P, {"position": 4})])
    initial = [{"partition": P, "offset": None}]
    again = client.post(
        "/connectors", json={"name": "s", "config": SOURCE, "initial_offsets": initial}
    )
    assert again.json() == error(409, "Connector s already exists")
    assert offset_store.get("s", P) == {"position": 4}


def test_config_write_failure_wipes_the_initial_offsets(
    client: TestClient, offset_store: MemoryOffsetStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkcat.runtime.standalone.herder import StandaloneHerder

    def broken(self: Any, managed: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(StandaloneHerder, "_start", broken)
    initial = [{"partition": P, "offset": {"position": 2}}]
    failed = client.post(
        "/connectors", json={"name": "s", "config": SOURCE, "initial_offsets": initial}
    )
    assert failed.json() == error(
        500, "Failed to create connector s: its config could not be written (its initial offsets "
        "were wiped): disk full",
    )  # fmt: skip
    assert offset_store.get_all("s") == []
    assert client.get("/connectors").json() == []
