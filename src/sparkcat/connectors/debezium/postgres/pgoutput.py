"""A decoder of ``pgoutput`` messages, protocol version 1 (PostgreSQL's "Logical Replication
Message Formats": https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html).

Each message is the payload of one ``XLogData`` of the replication stream. Integers are
big-endian, strings NUL-terminated, timestamps microseconds since 2000-01-01 UTC. Tuple
columns come as text (``t``), NULL (``n``) or "unchanged TOASTed value, not sent" (``u``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

PG_EPOCH_US = 946_684_800_000_000
"""2000-01-01T00:00:00Z in microseconds since the Unix epoch."""

UNCHANGED_TOAST = object()
"""A tuple column whose value PostgreSQL did not send (``u``)."""

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT64 = struct.Struct(">q")
_UINT64 = struct.Struct(">Q")


@dataclass(frozen=True, slots=True)
class RelationColumn:
    name: str
    type_oid: int
    type_modifier: int
    is_key: bool


@dataclass(frozen=True, slots=True)
class Relation:
    """``R``: the shape of a table, sent before its first change in a session (or after DDL)."""

    relation_id: int
    namespace: str
    name: str
    replica_identity: str
    """``d`` default, ``n`` nothing, ``f`` full, ``i`` index."""
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int
    commit_time_us: int
    """Unix epoch microseconds."""
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_time_us: int


@dataclass(frozen=True, slots=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True, slots=True)
class TypeMessage:
    type_oid: int
    namespace: str
    name: str


Tuple = tuple[object, ...]
"""Column values: ``str`` text, ``None`` for NULL, :data:`UNCHANGED_TOAST`."""


@dataclass(frozen=True, slots=True)
class Insert:
    relation_id: int
    new: Tuple


@dataclass(frozen=True, slots=True)
class Update:
    relation_id: int
    old: Tuple | None
    """The old key (``K``) or whole old row (``O``, REPLICA IDENTITY FULL), if sent."""
    old_is_key: bool
    new: Tuple


@dataclass(frozen=True, slots=True)
class Delete:
    relation_id: int
    old: Tuple
    old_is_key: bool


@dataclass(frozen=True, slots=True)
class Truncate:
    options: int
    """Bit 1: CASCADE, bit 2: RESTART IDENTITY."""
    relation_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Message:
    """``M``: ``pg_logical_emit_message`` (sent only with the ``messages`` option)."""

    transactional: bool
    lsn: int
    prefix: str
    content: bytes


PgOutputMessage = (
    Begin | Commit | Origin | Relation | TypeMessage | Insert | Update | Delete | Truncate | Message
)


class DecodeError(ValueError):
    """A payload that is not a pgoutput protocol 1 message."""


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, fmt: struct.Struct) -> int:
        try:
            (value,) = fmt.unpack_from(self.data, self.pos)
        except struct.error as exc:
            raise DecodeError(f"truncated message at byte {self.pos}") from exc
        self.pos += fmt.size
        return int(value)

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise DecodeError(f"truncated message at byte {self.pos}")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def int16(self) -> int:
        return self._take(_INT16)

    def int32(self) -> int:
        return self._take(_INT32)

    def uint32(self) -> int:
        return self._take(_UINT32)

    def int64(self) -> int:
        return self._take(_INT64)

    def lsn(self) -> int:
        return self._take(_UINT64)

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise DecodeError(f"unterminated string at byte {self.pos}")
        value = self.data[self.pos : end].decode("utf-8")
        self.pos = end + 1
        return value

    def raw(self, length: int) -> bytes:
        if self.pos + length > len(self.data):
            raise DecodeError(f"truncated message at byte {self.pos}")
        value = self.data[self.pos : self.pos + length]
        self.pos += length
        return bytes(value)

    def timestamp(self) -> int:
        return self.int64() + PG_EPOCH_US

    def tuple_data(self) -> Tuple:
        # The per-change hot path: one loop over the buffer without a method call a column.
        data, pos = self.data, self.pos
        try:
            (count,) = _INT16.unpack_from(data, pos)
            pos += 2
            values: list[object] = []
            append = values.append
            for _ in range(count):
                kind = data[pos]
                pos += 1
                if kind == 0x74:  # t
                    (length,) = _INT32.unpack_from(data, pos)
                    pos += 4
                    end = pos + length
                    if end > len(data):
                        raise IndexError
                    append(data[pos:end].decode("utf-8"))
                    pos = end
                elif kind == 0x6E:  # n
                    append(None)
                elif kind == 0x75:  # u
                    append(UNCHANGED_TOAST)
                elif kind == 0x62:  # b: binary, only with the binary option (not requested)
                    (length,) = _INT32.unpack_from(data, pos)
                    pos += 4
                    end = pos + length
                    if end > len(data):
                        raise IndexError
                    append(bytes(data[pos:end]))
                    pos = end
                else:
                    raise DecodeError(f"unknown tuple column kind {kind!r}")
        except (IndexError, struct.error) as exc:
            raise DecodeError(f"truncated message at byte {pos}") from exc
        self.pos = pos
        return tuple(values)


def decode(payload: bytes) -> PgOutputMessage:
    """The message in one ``XLogData`` payload."""
    if not payload:
        raise DecodeError("empty message")
    reader = _Reader(payload)
    tag = chr(reader.byte())
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise DecodeError(f"unknown pgoutput message type {tag!r}")
    return decoder(reader)


def _begin(r: _Reader) -> Begin:
    return Begin(r.lsn(), r.timestamp(), r.uint32())


def _commit(r: _Reader) -> Commit:
    return Commit(r.byte(), r.lsn(), r.lsn(), r.timestamp())


def _origin(r: _Reader) -> Origin:
    return Origin(r.lsn(), r.string())


def _relation(r: _Reader) -> Relation:
    relation_id, namespace, name = r.uint32(), r.string(), r.string()
    identity = chr(r.byte())
    columns = []
    for _ in range(r.int16()):
        flags = r.byte()
        columns.append(RelationColumn(r.string(), r.uint32(), r.int32(), bool(flags & 1)))
    return Relation(relation_id, namespace, name, identity, tuple(columns))


def _type(r: _Reader) -> TypeMessage:
    return TypeMessage(r.uint32(), r.string(), r.string())


def _expect(r: _Reader, *tags: str) -> str:
    tag = chr(r.byte())
    if tag not in tags:
        raise DecodeError(f"expected one of {tags} at byte {r.pos - 1}, found {tag!r}")
    return tag


def _insert(r: _Reader) -> Insert:
    relation_id = r.uint32()
    _expect(r, "N")
    return Insert(relation_id, r.tuple_data())


def _update(r: _Reader) -> Update:
    relation_id = r.uint32()
    tag = _expect(r, "K", "O", "N")
    old: Tuple | None = None
    if tag != "N":
        old = r.tuple_data()
        _expect(r, "N")
    return Update(relation_id, old, tag == "K", r.tuple_data())


def _delete(r: _Reader) -> Delete:
    relation_id = r.uint32()
    tag = _expect(r, "K", "O")
    return Delete(relation_id, r.tuple_data(), tag == "K")


def _truncate(r: _Reader) -> Truncate:
    count, options = r.int32(), r.byte()
    return Truncate(options, tuple(r.uint32() for _ in range(count)))


def _message(r: _Reader) -> Message:
    flags, lsn, prefix = r.byte(), r.lsn(), r.string()
    return Message(bool(flags & 1), lsn, prefix, r.raw(r.int32()))


_DECODERS: dict[str, Callable[[_Reader], PgOutputMessage]] = {
    "B": _begin,
    "C": _commit,
    "O": _origin,
    "R": _relation,
    "Y": _type,
    "I": _insert,
    "U": _update,
    "D": _delete,
    "T": _truncate,
    "M": _message,
}


def format_lsn(lsn: int) -> str:
    """PostgreSQL's text form of an LSN (``16/B374D848``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


__all__ = [
    "PG_EPOCH_US",
    "UNCHANGED_TOAST",
    "Begin",
    "Commit",
    "DecodeError",
    "Delete",
    "Insert",
    "Message",
    "Origin",
    "PgOutputMessage",
    "Relation",
    "RelationColumn",
    "Truncate",
    "TypeMessage",
    "Update",
    "decode",
    "format_lsn",
    "parse_lsn",
]
