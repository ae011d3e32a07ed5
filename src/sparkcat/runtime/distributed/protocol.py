"""Kafka Connect's group protocol encodings, byte-exact with Kafka's.

Kafka's ``ConnectProtocol`` (v0, protocol name ``default``, eager rebalancing) and
``IncrementalCooperativeConnectProtocol`` (v1 ``compatible`` and v2 ``sessioned``,
incremental cooperative rebalancing; v2 adds signed internal requests). Every message starts
with an INT16 version header; Kafka's protocol types are big-endian: INT16/INT32/INT64,
STRING = INT16 length + UTF-8, NULLABLE_BYTES = INT32 length (-1: null) + bytes, ARRAY =
INT32 count (-1: null) + elements.

Member metadata (JoinGroup)::

    v0:    version | url STRING | config-offset INT64
    v1/v2: version | url STRING | config-offset INT64 | allocation NULLABLE_BYTES
           (allocation = the member's current assignment, itself encoded as an assignment
           with its own header; null when the member has none)

Assignment (SyncGroup)::

    v0:    version | error INT16 | leader STRING | leader-url STRING | config-offset INT64
           | assignment ARRAY[connector STRING, tasks ARRAY[INT32]]
    v1/v2: the same, then revoked ARRAY[connector, tasks] (nullable) | delay INT32

A connector itself is task id ``-1`` (:data:`CONNECTOR_TASK`) inside its ``tasks`` array:
``["c", [-1, 0, 1]]`` assigns connector ``c`` and its tasks 0 and 1. Decoders read any
version >= 0 the way Kafka's v1 decoder does: fields missing at the end of the buffer take
their defaults (allocation null, revoked empty, delay 0).

Public API:

- :class:`ConnectProtocolCompatibility` — ``EAGER``/``COMPATIBLE``/``SESSIONED``, with
  ``protocol`` (the group protocol name) and ``version``; :meth:`~ConnectProtocolCompatibility.
  from_config` parses ``connect.protocol``, :meth:`~ConnectProtocolCompatibility.from_protocol`
  a protocol name.
- :class:`ExtendedAssignment` (Kafka's ``ExtendedAssignment``; v0 assignments decode to it
  with nothing revoked) and :class:`ExtendedWorkerState` (url, config offset, assignment).
- :func:`metadata_request` — the ``[(protocol name, metadata bytes)]`` list a member sends,
  most preferred first, as Kafka's ``metadataRequest``.
- :func:`serialize_metadata` / :func:`deserialize_metadata`,
  :func:`serialize_assignment` / :func:`deserialize_assignment` for one version.
- :class:`ConnectProtocolError` for malformed bytes (Kafka's ``SchemaException``).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from sparkcat.runtime.rest.entities import ConnectorTaskId

CONNECTOR_TASK = -1
CONNECT_PROTOCOL_V0 = 0
CONNECT_PROTOCOL_V1 = 1
CONNECT_PROTOCOL_V2 = 2
NO_ERROR = 0
# The leader's config is behind a member's: everyone reads the config topic to its end and rejoins.
CONFIG_MISMATCH = 1


class ConnectProtocolError(ValueError):
    """Bytes that are not a valid Connect protocol message (Kafka's ``SchemaException``)."""


class ConnectProtocolCompatibility(enum.Enum):
    """Kafka's ``ConnectProtocolCompatibility``: the ``connect.protocol`` modes."""

    EAGER = ("default", CONNECT_PROTOCOL_V0)
    COMPATIBLE = ("compatible", CONNECT_PROTOCOL_V1)
    SESSIONED = ("sessioned", CONNECT_PROTOCOL_V2)

    @property
    def protocol(self) -> str:
        """The group protocol name sent in JoinGroup (``default`` for eager, as Kafka)."""
        return self.value[0]

    @property
    def version(self) -> int:
        return self.value[1]

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def from_config(cls, name: str) -> ConnectProtocolCompatibility:
        """The mode named by ``connect.protocol`` (case-insensitive); ValueError otherwise."""
        for mode in cls:
            if mode.name.lower() == name.lower():
                return mode
        raise ValueError(f"Unknown Connect protocol compatibility mode: {name}")

    @classmethod
    def from_protocol(cls, protocol: str) -> ConnectProtocolCompatibility:
        """The mode whose group protocol name is ``protocol``; ValueError otherwise."""
        for mode in cls:
            if mode.protocol.lower() == protocol.lower():
                return mode
        raise ValueError(f"Not found Connect protocol compatibility mode for protocol: {protocol}")

    @classmethod
    def from_version(cls, version: int) -> ConnectProtocolCompatibility:
        for mode in cls:
            if mode.version == version:
                return mode
        raise ValueError(f"Unknown Connect protocol version: {version}")


@dataclass(frozen=True, slots=True)
class ExtendedAssignment:
    """One member's assignment from the leader (Kafka's ``ExtendedAssignment``).

    ``connectors``/``tasks`` are what the member is newly given (incremental protocols) or
    everything it runs (eager); ``revoked_*`` what it must stop; ``delay`` the ms until the
    leader wants a follow-up rebalance (scheduled rebalance), 0 if none.
    ``config_offset`` is the config topic offset the assignment was computed at: a member
    behind it must read the config topic up to it before starting the work.
    """

    version: int
    error: int
    leader: str | None
    leader_url: str | None
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[ConnectorTaskId, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay: int = 0

    @property
    def failed(self) -> bool:
        """True when the leader could not assign (``error != NO_ERROR``, CONFIG_MISMATCH)."""
        return self.error != NO_ERROR

    @staticmethod
    def empty() -> ExtendedAssignment:
        """Kafka's ``ExtendedAssignment.empty()``: encoded as a null allocation."""
        return _EMPTY


_EMPTY = ExtendedAssignment(CONNECT_PROTOCOL_V1, NO_ERROR, None, None, -1)


@dataclass(frozen=True, slots=True)
class ExtendedWorkerState:
    """One member's JoinGroup metadata: REST url, config offset, current assignment."""

    url: str
    config_offset: int
    assignment: ExtendedAssignment | None = field(default=None)


# --- wire primitives ---------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self._parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self._parts.append(struct.pack(">i", value))

    def int64(self, value: int) -> None:
        self._parts.append(struct.pack(">q", value))

    def string(self, value: str | None, name: str) -> None:
        if value is None:
            raise ConnectProtocolError(
                f"Missing value for field '{name}' which has no default value."
            )
        data = value.encode("utf-8")
        if len(data) > 0x7FFF:
            raise ConnectProtocolError(
                f"String length {len(data)} is larger than the maximum string length."
            )
        self.int16(len(data))
        self._parts.append(data)

    def nullable_bytes(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
            return
        self.int32(len(value))
        self._parts.append(value)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, size: int, what: str) -> bytes:
        if size > self.remaining:
            raise ConnectProtocolError(f"Error reading field '{what}': not enough bytes")
        chunk = bytes(self._data[self._pos : self._pos + size])
        self._pos += size
        return chunk

    def int16(self, what: str) -> int:
        return int(struct.unpack(">h", self._take(2, what))[0])

    def int32(self, what: str) -> int:
        return int(struct.unpack(">i", self._take(4, what))[0])

    def int64(self, what: str) -> int:
        return int(struct.unpack(">q", self._take(8, what))[0])

    def string(self, what: str) -> str:
        size = self.int16(what)
        if size < 0:
            raise ConnectProtocolError(
                f"Error reading field '{what}': String length {size} cannot be negative"
            )
        try:
            return self._take(size, what).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConnectProtocolError(f"Error reading field '{what}': {e}") from None

    def nullable_bytes(self, what: str) -> bytes | None:
        size = self.int32(what)
        if size < 0:
            return None
        return self._take(size, what)


# --- assignments -------------------------------------------------------------------------


def _as_map(connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> dict[str, list[int]]:
    # Kafka groups by connector: the connector's own entry (-1) first, then its task ids.
    result: dict[str, list[int]] = {}
    for connector in dict.fromkeys(connectors):
        result.setdefault(connector, []).append(CONNECTOR_TASK)
    for task in tasks:
        result.setdefault(task.connector, []).append(task.task)
    return result


def _write_connector_assignments(out: _Writer, assignments: dict[str, list[int]]) -> None:
    out.int32(len(assignments))
    for connector, task_ids in assignments.items():
        out.string(connector, "connector")
        out.int32(len(task_ids))
        for task_id in task_ids:
            out.int32(task_id)


def _read_connector_assignments(
    reader: _Reader, what: str
) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    count = reader.int32(what)
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    for _ in range(max(count, 0)):
        connector = reader.string("connector")
        size = reader.int32("tasks")
        if size < 0:
            raise ConnectProtocolError("Error reading field 'tasks': null array")
        for _ in range(size):
            task_id = reader.int32("tasks")
            if task_id == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append(ConnectorTaskId(connector, task_id))
    return tuple(connectors), tuple(tasks)


def _write_assignment_body(out: _Writer, assignment: ExtendedAssignment) -> None:
    out.int16(assignment.error)
    out.string(assignment.leader, "leader")
    out.string(assignment.leader_url, "leader-url")
    out.int64(assignment.config_offset)
    _write_connector_assignments(out, _as_map(assignment.connectors, assignment.tasks))


def serialize_assignment(assignment: ExtendedAssignment | None, version: int) -> bytes | None:
    """Kafka's encoding of ``assignment`` at ``version`` (0: ``ConnectProtocol``, 1/2:
    ``IncrementalCooperativeConnectProtocol``). For v1/v2, ``None`` and
    :meth:`ExtendedAssignment.empty` encode as ``None`` (a null allocation), as in Kafka."""
    if version == CONNECT_PROTOCOL_V0:
        if assignment is None:
            raise ConnectProtocolError("A v0 assignment cannot be null")
        out = _Writer()
        out.int16(CONNECT_PROTOCOL_V0)
        _write_assignment_body(out, assignment)
        return out.getvalue()
    if assignment is None or assignment is _EMPTY:
        return None
    out = _Writer()
    out.int16(version)
    _write_assignment_body(out, assignment)
    _write_connector_assignments(
        out, _as_map(assignment.revoked_connectors, assignment.revoked_tasks)
    )
    out.int32(assignment.delay)
    return out.getvalue()


def deserialize_assignment(data: bytes | None) -> ExtendedAssignment | None:
    """Decode an assignment of any version (``None`` for ``None``)."""
    if data is None:
        return None
    reader = _Reader(data)
    version = _read_version(reader)
    error = reader.int16("error")
    leader = reader.string("leader")
    leader_url = reader.string("leader-url")
    config_offset = reader.int64("config-offset")
    connectors, tasks = _read_connector_assignments(reader, "assignment")
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay = 0
    # Kafka's v1 schema tolerates missing trailing fields, which is how v0 bytes decode.
    if reader.remaining:
        revoked_connectors, revoked_tasks = _read_connector_assignments(reader, "revoked")
    if reader.remaining:
        delay = reader.int32("delay")
    return ExtendedAssignment(
        version, error, leader, leader_url, config_offset,
        connectors, tasks, revoked_connectors, revoked_tasks, delay,
    )  # fmt: skip


# --- metadata ----------------------------------------------------------------------------


def _read_version(reader: _Reader) -> int:
    version = reader.int16("version")
    if version < CONNECT_PROTOCOL_V0:
        raise ConnectProtocolError(f"Unsupported subscription version: {version}")
    return version


def serialize_metadata(state: ExtendedWorkerState, version: int) -> bytes:
    """A member's JoinGroup metadata at ``version`` (0: url and offset only; 1/2: with the
    current assignment encoded at the same version as the allocation)."""
    out = _Writer()
    out.int16(version)
    out.string(state.url, "url")
    out.int64(state.config_offset)
    if version != CONNECT_PROTOCOL_V0:
        out.nullable_bytes(serialize_assignment(state.assignment, version))
    return out.getvalue()


def deserialize_metadata(data: bytes) -> ExtendedWorkerState:
    """Decode member metadata of any version (a v0 member has no assignment)."""
    reader = _Reader(data)
    _read_version(reader)
    url = reader.string("url")
    config_offset = reader.int64("config-offset")
    allocation = reader.nullable_bytes("allocation") if reader.remaining else None
    return ExtendedWorkerState(url, config_offset, deserialize_assignment(allocation))


def metadata_request(
    state: ExtendedWorkerState, compatibility: ConnectProtocolCompatibility
) -> list[tuple[str, bytes]]:
    """The protocols a member offers in JoinGroup, most preferred first (Kafka's order):
    sessioned -> [sessioned, compatible, default]; compatible -> [compatible, default];
    eager -> [default]."""
    modes = [
        mode
        for mode in (
            ConnectProtocolCompatibility.SESSIONED,
            ConnectProtocolCompatibility.COMPATIBLE,
            ConnectProtocolCompatibility.EAGER,
        )
        if mode.version <= compatibility.version
    ]
    return [(mode.protocol, serialize_metadata(state, mode.version)) for mode in modes]


__all__ = [
    "CONFIG_MISMATCH",
    "CONNECTOR_TASK",
    "CONNECT_PROTOCOL_V0",
    "CONNECT_PROTOCOL_V1",
    "CONNECT_PROTOCOL_V2",
    "NO_ERROR",
    "ConnectProtocolCompatibility",
    "ConnectProtocolError",
    "ExtendedAssignment",
    "ExtendedWorkerState",
    "deserialize_assignment",
    "deserialize_metadata",
    "metadata_request",
    "serialize_assignment",
    "serialize_metadata",
]
