"""Golden bytes written by hand from Kafka's schemas (ConnectProtocol.java,
IncrementalCooperativeConnectProtocol.java), checked in both directions, plus round trips.

The golden messages here were also produced by Kafka's own serializers (its protocol classes
compiled from apache/kafka 1eb7644 with stubs for their unrelated imports) and matched byte
for byte; Kafka's deserializers read sparkcat's v2 assignment and metadata back unchanged."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkcat.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    ConnectProtocolCompatibility,
    ConnectProtocolError,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_assignment,
    deserialize_metadata,
    metadata_request,
    serialize_assignment,
    serialize_metadata,
)
from sparkcat.runtime.rest.entities import ConnectorTaskId


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(text: str) -> bytes:
    return i16(len(text.encode())) + text.encode()


URL = "http://w1:8083/"

METADATA_V0 = bytes.fromhex("0000000f") + b"http://w1:8083/" + bytes.fromhex("000000000000002a")


def test_metadata_v0_golden() -> None:
    state = ExtendedWorkerState(URL, 42)
    assert serialize_metadata(state, 0) == METADATA_V0
    assert deserialize_metadata(METADATA_V0) == ExtendedWorkerState(URL, 42, None)


def test_metadata_v1_without_assignment_has_null_allocation() -> None:
    expected = i16(1) + s(URL) + i64(42) + i32(-1)
    assert serialize_metadata(ExtendedWorkerState(URL, 42), 1) == expected
    assert serialize_metadata(ExtendedWorkerState(URL, 42, ExtendedAssignment.empty()), 1) == (
        expected
    )
    assert deserialize_metadata(expected) == ExtendedWorkerState(URL, 42, None)


def _assignment(version: int) -> ExtendedAssignment:
    return ExtendedAssignment(
        version=version,
        error=0,
        leader="leader-1",
        leader_url="http://w0:8083/",
        config_offset=7,
        connectors=("a",),
        tasks=(ConnectorTaskId("a", 0), ConnectorTaskId("b", 1)),
        revoked_connectors=("c",),
        revoked_tasks=(ConnectorTaskId("c", 2),),
        delay=1500,
    )


def _assignment_v2_bytes() -> bytes:
    return (
        i16(2)  # version header
        + i16(0)  # error
        + s("leader-1")
        + s("http://w0:8083/")
        + i64(7)
        + i32(2)  # two connector entries
        + s("a") + i32(2) + i32(-1) + i32(0)  # connector a itself, then task a-0
        + s("b") + i32(1) + i32(1)
        + i32(1)  # revoked
        + s("c") + i32(2) + i32(-1) + i32(2)
        + i32(1500)  # delay
    )  # fmt: skip


def test_assignment_v2_golden_both_directions() -> None:
    golden = _assignment_v2_bytes()
    assert serialize_assignment(_assignment(2), 2) == golden
    assert deserialize_assignment(golden) == _assignment(2)


def test_metadata_v2_embeds_current_assignment() -> None:
    allocation = _assignment_v2_bytes()
    golden = i16(2) + s(URL) + i64(9) + i32(len(allocation)) + allocation
    state = ExtendedWorkerState(URL, 9, _assignment(2))
    assert serialize_metadata(state, 2) == golden
    assert deserialize_metadata(golden) == state


def test_assignment_v0_golden_and_read_by_v1_decoder() -> None:
    assignment = ExtendedAssignment(
        0, CONFIG_MISMATCH, "m", "http://m/", 3, ("x",), (ConnectorTaskId("x", 0),)
    )
    golden = i16(0) + i16(1) + s("m") + s("http://m/") + i64(3) + i32(1)
    golden += s("x") + i32(2) + i32(-1) + i32(0)
    assert serialize_assignment(assignment, 0) == golden
    decoded = deserialize_assignment(golden)
    assert decoded == assignment
    assert decoded is not None and decoded.failed
    assert decoded.revoked_connectors == () and decoded.delay == 0


def test_null_revoked_array_decodes_empty() -> None:
    data = i16(1) + i16(0) + s("l") + s("u") + i64(0) + i32(-1) + i32(-1) + i32(0)
    decoded = deserialize_assignment(data)
    assert decoded == ExtendedAssignment(1, 0, "l", "u", 0)


def test_metadata_request_order() -> None:
    state = ExtendedWorkerState(URL, 1)
    sessioned = metadata_request(state, ConnectProtocolCompatibility.SESSIONED)
    assert [name for name, _ in sessioned] == ["sessioned", "compatible", "default"]
    assert [data[:2] for _, data in sessioned] == [i16(2), i16(1), i16(0)]
    assert [n for n, _ in metadata_request(state, ConnectProtocolCompatibility.COMPATIBLE)] == [
        "compatible",
        "default",
    ]
    assert metadata_request(state, ConnectProtocolCompatibility.EAGER) == [
        ("default", METADATA_V0[:-8] + i64(1))
    ]


def test_compatibility_names() -> None:
    assert ConnectProtocolCompatibility.from_config("Sessioned").version == 2
    assert ConnectProtocolCompatibility.from_protocol("default") is (
        ConnectProtocolCompatibility.EAGER
    )
    assert str(ConnectProtocolCompatibility.COMPATIBLE) == "compatible"
    with pytest.raises(ValueError, match="Unknown Connect protocol compatibility mode: x"):
        ConnectProtocolCompatibility.from_config("x")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        i16(-1) + s("u") + i64(0),
        i16(1) + s("u"),
        i16(0) + i16(-5),
        i16(1) + s("u") + i64(0) + i32(9),
    ],
)
def test_malformed_bytes(data: bytes) -> None:
    with pytest.raises(ConnectProtocolError):
        deserialize_metadata(data)


names = st.text(min_size=1, max_size=12)
task_ids = st.builds(ConnectorTaskId, names, st.integers(0, 2**31 - 1))


def canon(a: ExtendedAssignment | None) -> object:
    # Kafka's encoding groups tasks by connector, so compare task order-insensitively.
    assert a is not None
    key = lambda t: (t.connector, t.task)  # noqa: E731
    return (
        a.version, a.error, a.leader, a.leader_url, a.config_offset, a.connectors,
        sorted(a.tasks, key=key), a.revoked_connectors, sorted(a.revoked_tasks, key=key), a.delay,
    )  # fmt: skip


@st.composite
def assignments(draw: st.DrawFn, version: int) -> ExtendedAssignment:
    revoking = version > 0
    return ExtendedAssignment(
        version,
        draw(st.sampled_from([0, 1])),
        draw(names),
        draw(st.text(max_size=30)),
        draw(st.integers(-1, 2**63 - 1)),
        tuple(dict.fromkeys(draw(st.lists(names, max_size=4)))),
        tuple(draw(st.lists(task_ids, max_size=6))),
        tuple(dict.fromkeys(draw(st.lists(names, max_size=3)))) if revoking else (),
        tuple(draw(st.lists(task_ids, max_size=4))) if revoking else (),
        draw(st.integers(0, 2**31 - 1)) if revoking else 0,
    )


@given(st.sampled_from([0, 1, 2]).flatmap(lambda v: st.tuples(st.just(v), assignments(v))))
def test_assignment_round_trip(case: tuple[int, ExtendedAssignment]) -> None:
    version, assignment = case
    assert canon(deserialize_assignment(serialize_assignment(assignment, version))) == canon(
        assignment
    )


@given(
    st.text(max_size=40),
    st.integers(-1, 2**63 - 1),
    st.sampled_from([1, 2]).flatmap(assignments),
)
def test_metadata_round_trip(url: str, offset: int, assignment: ExtendedAssignment) -> None:
    state = deserialize_metadata(
        serialize_metadata(ExtendedWorkerState(url, offset, assignment), assignment.version)
    )
    assert (state.url, state.config_offset) == (url, offset)
    assert canon(state.assignment) == canon(assignment)
