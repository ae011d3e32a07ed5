"""Protobuf messages (upb's dynamic messages) -> Connect values, one reader per schema.

:mod:`.protobuf_data` builds the readers while it maps a descriptor to a Connect schema, so
each reader knows both sides: which attribute to read, whether presence decides null, and what
to convert. Struct readers are generated per schema (see :func:`struct_reader`).
"""

from __future__ import annotations

import datetime
import decimal
import keyword
import operator
from collections.abc import Callable
from typing import Any

from sparkcat.api.data import Schema, Struct, Timestamp

Convert = Callable[[Any], Any]
Read = Callable[[Any], Any]  # message -> the Connect value of one field

_new_struct = Struct.from_valid_values
_UTC = datetime.UTC


class FieldRead:
    """How one Connect field of a struct is read from its message."""

    __slots__ = ("convert", "name", "presence")

    def __init__(self, name: str, convert: Convert | None, presence: bool) -> None:
        self.name, self.convert, self.presence = name, convert, presence

    def reader(self) -> Read:
        name, convert = self.name, self.convert
        if self.presence:
            has = operator.methodcaller("HasField", name)
            get = operator.attrgetter(name)
            if convert is None:
                return lambda m: get(m) if has(m) else None
            return lambda m: convert(get(m)) if has(m) else None
        get = operator.attrgetter(name)
        if convert is None:
            return get
        return lambda m: convert(get(m))


def struct_reader(schema: Schema, fields: list[FieldRead | Read]) -> Convert:
    """message -> Struct of ``schema`` (``fields``: one reader per Connect field).

    One generated straight-line function per schema: attribute reads, presence checks and
    conversions inline, then ``Struct.from_valid_values``. Only indices and fixed snippets are
    spliced into the source; names and converters are passed as globals. A struct of plain
    fields (no conversion, no presence) reads them all with one C-level ``attrgetter``."""
    if len(fields) > 1 and all(
        isinstance(f, FieldRead) and f.convert is None and not f.presence for f in fields
    ):
        get_all = operator.attrgetter(*(f.name for f in fields if isinstance(f, FieldRead)))
        return lambda m: _new_struct(schema, list(get_all(m)))
    namespace: dict[str, Any] = {"new": _new_struct, "schema": schema}
    items = []
    for i, field in enumerate(fields):
        if not isinstance(field, FieldRead):
            namespace[f"r{i}"] = field
            items.append(f"r{i}(m)")
            continue
        namespace[f"n{i}"] = field.name
        get = f"m.{field.name}" if _attribute(field.name) else f"getattr(m, n{i})"
        if field.convert is not None:
            namespace[f"c{i}"] = field.convert
            get = f"c{i}({get})"
        if field.presence:
            get = f"({get} if m.HasField(n{i}) else None)"
        items.append(get)
    source = f"def read(m):\n    return new(schema, [{', '.join(items)}])\n"
    exec(compile(source, f"<sparkcat.protobuf {schema.name}>", "exec"), namespace)
    return namespace["read"]  # type: ignore[no-any-return]


def _attribute(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def union_reader(
    oneof: str, schema: Schema, members: dict[str, tuple[int, Convert | None]]
) -> Read:
    """The Struct of a oneof's union schema with the set member filled in (None if unset)."""
    size = len(members)

    def read(message: Any) -> Any:
        which = message.WhichOneof(oneof)
        if which is None:
            return None
        index, convert = members[which]
        values: list[Any] = [None] * size
        value = getattr(message, which)
        values[index] = value if convert is None else convert(value)
        return _new_struct(schema, values)

    return read


def repeated(convert: Convert | None) -> Convert:
    if convert is None:
        return list
    return lambda values: [convert(v) for v in values]


def map_reader(key: Convert | None, value: Convert | None, entries: bool) -> Convert:
    """A map field as a dict; ``entries``: a repeated entry message rather than a map field."""
    k: Convert = key or _same
    v: Convert = value or _same
    if entries:
        return lambda items: {k(e.key): v(e.value) for e in items}
    if key is None and value is None:
        return dict
    return lambda items: {k(kk): v(vv) for kk, vv in items.items()}


def _same(value: Any) -> Any:
    return value


def wrapped(convert: Convert | None) -> Convert:
    """A google.protobuf wrapper message -> its value."""
    if convert is None:
        return operator.attrgetter("value")
    return lambda m: convert(m.value)


def signed(bits: int) -> Convert:
    """Java's narrowing (``byteValue``, ``shortValue``) or a uint64 read as a long."""
    half, full = 1 << (bits - 1), 1 << bits

    def wrap(value: int) -> int:
        value &= full - 1
        return value - full if value >= half else value

    return wrap


def enum_names(numbers: dict[int, str]) -> Convert:
    return lambda number: numbers.get(number, str(number))


def decimal_value(message: Any) -> decimal.Decimal:
    unscaled = int.from_bytes(message.value, "big", signed=True)
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((1 if unscaled < 0 else 0, digits, -message.scale))


def date_value(message: Any) -> datetime.date:
    return datetime.date(message.year, message.month, message.day)


def time_value(message: Any) -> datetime.time:
    millis = message.nanos // 1_000_000
    return datetime.time(message.hours, message.minutes, message.seconds, millis * 1000)


def timestamp_value(schema: Schema) -> Convert:
    def convert(message: Any) -> datetime.datetime:
        millis = message.seconds * 1000 + message.nanos // 1_000_000
        return Timestamp.to_logical(schema, millis)

    return convert
