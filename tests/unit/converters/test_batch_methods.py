"""The converters' columnar methods give exactly what their per-record methods give.

For every built-in converter with a fast batch method (StringConverter, ByteArrayConverter,
JsonConverter) and for a converter that only has the per-record methods (the API's default
batch methods), a column of inputs — including nulls, non-ASCII text, odd floats, bytes and
values that fail — is converted both ways and compared value by value, schema by schema,
byte by byte; a column with a bad value raises the per-record method's error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from sparkcat.api.batch import ConnectDataBatch
from sparkcat.api.converter import Converter
from sparkcat.api.data import (
    BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
)
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters.bytes import ByteArrayConverter
from sparkcat.converters.json import JsonConverter
from sparkcat.converters.numbers import IntegerConverter
from sparkcat.converters.string import StringConverter


def make(cls: type[Converter], **configs: str) -> Converter:
    converter = cls()
    converter.configure(configs, False)
    return converter


CONVERTERS: dict[str, Callable[[], Converter]] = {
    "string": lambda: make(StringConverter),
    "string-latin1": lambda: make(StringConverter, **{"converter.encoding": "ISO-8859-1"}),
    "bytes": lambda: make(ByteArrayConverter),
    "json-schemaless": lambda: make(JsonConverter, **{"schemas.enable": "false"}),
    "json-envelope": lambda: make(JsonConverter, **{"schemas.enable": "true"}),
    "integer (per-record only)": lambda: make(IntegerConverter),
}

POINT = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).field("s", OPTIONAL_STRING_SCHEMA)
POINT_SCHEMA = POINT.build()

# Strings JSON writes as they are (non-ASCII, DEL, U+2028 included), and ones it escapes.
PLAIN_STRINGS = ["", "a b", "wörld ✓", "日本", "\x7f", "\u2028", "😀", "x" * 2000]
NEEDS_ESCAPING = ['q"uote', "back\\slash", "new\nline", "\x00", "tab\t", "\x1f"]

# (schema, values) columns per converter; every value is valid for the converter.
GOOD_COLUMNS: dict[str, list[tuple[Schema | None, list[Any]]]] = {
    "string": [
        (STRING_SCHEMA, ["a", "", "wörld ✓", "x" * 1000]),
        (None, ["a", None, 12, 1.5, True]),
    ],
    "string-latin1": [(STRING_SCHEMA, ["a", "é", ""])],
    "bytes": [(None, [b"a", b"", None, bytearray(b"x")]), (BYTES_SCHEMA, [b"\x00\xff"])],
    "json-schemaless": [
        # Columns of str: one join/encode/split unless a value needs escaping (then per value).
        (STRING_SCHEMA, PLAIN_STRINGS),
        (None, PLAIN_STRINGS),
        *[(STRING_SCHEMA, ["plain", odd]) for odd in NEEDS_ESCAPING],
        *[(None, [odd, "plain"]) for odd in NEEDS_ESCAPING],
        (None, [{"a": 1}, [1, "x"], "s", 3, None, True]),
        (None, [{"f": 1.5}, {"f": 1e7}, {"f": float("nan")}, 0.0001]),
        (None, [b"raw", {"k": b"v"}]),
        (STRING_SCHEMA, ["a", "wörld", ""]),
        (POINT_SCHEMA, [Struct(POINT_SCHEMA).put("x", 1).put("s", "a")]),
    ],
    "json-envelope": [
        (STRING_SCHEMA, ["a", "b"]),
        (STRING_SCHEMA, PLAIN_STRINGS),
        (OPTIONAL_STRING_SCHEMA, [*PLAIN_STRINGS, None]),
        *[(STRING_SCHEMA, [odd, "plain"]) for odd in NEEDS_ESCAPING],
        (None, [{"a": 1}, None, "s"]),
        (POINT_SCHEMA, [Struct(POINT_SCHEMA).put("x", i) for i in range(3)]),
    ],
    "integer (per-record only)": [(Schema.INT32_SCHEMA, [1, -5, 2**31 - 1])],
}
BAD_COLUMNS: dict[str, tuple[Schema | None, list[Any]]] = {
    "string-latin1": (STRING_SCHEMA, ["ok", "✓ not latin-1"]),
    "bytes": (None, [b"ok", "not bytes"]),
    "json-envelope": (POINT_SCHEMA, [Struct(POINT_SCHEMA).put("x", 1), "not a struct"]),
    "integer (per-record only)": (Schema.INT32_SCHEMA, [1, "x"]),
}
GOOD_MESSAGES: dict[str, list[list[bytes | None]]] = {
    "string": [[b"a", b"", "wörld".encode(), None], [b"plain"] * 5],
    "string-latin1": [["é".encode("latin-1"), b"x"]],
    "bytes": [[b"a", None, b""]],
    "json-schemaless": [
        [b'{"a":1}', b"[1,2]", b'"s"', b"3.5", b"null"],
        [b'{"a":1}', b"", None],
    ],
    "json-envelope": [
        [b'{"schema":{"type":"string","optional":false},"payload":"a"}', None],
        [b'{"schema":null,"payload":{"a":1}}', b'{"schema":{"type":"int32"},"payload":5}'],
    ],
    "integer (per-record only)": [[b"\x00\x00\x00\x01", None]],
}
BAD_MESSAGES: dict[str, list[bytes | None]] = {
    "string": [b"ok", b"\xff\xfe not utf-8"],
    "json-schemaless": [b'{"a":1}', b"{not json"],
    "json-envelope": [b'{"schema":null,"payload":1}', b'{"payload":1}'],
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b  # NaN
    return type(a) is type(b) and a == b


def cases(table: Mapping[str, list[Any]]) -> list[Any]:
    return [
        pytest.param(name, item, id=f"{name}-{i}")
        for name in table
        for i, item in enumerate(table[name])
    ]


@pytest.mark.parametrize(("name", "column"), cases(GOOD_COLUMNS))
def test_from_connect_data_batch_gives_the_per_record_bytes(
    name: str, column: tuple[Schema | None, list[Any]]
) -> None:
    schema, values = column
    converter = CONVERTERS[name]()
    expected = [converter.from_connect_data("t", schema, v) for v in values]
    assert CONVERTERS[name]().from_connect_data_batch("t", schema, values) == expected
    assert converter.from_connect_data_batch("t", schema, values) == expected  # warm caches


@pytest.mark.parametrize(
    ("name", "column"), [pytest.param(n, c, id=n) for n, c in BAD_COLUMNS.items()]
)
def test_from_connect_data_batch_raises_the_per_record_error(
    name: str, column: tuple[Schema | None, list[Any]]
) -> None:
    schema, values = column
    with pytest.raises(DataError) as per_record:
        for value in values:
            CONVERTERS[name]().from_connect_data("t", schema, value)
    with pytest.raises(DataError) as batch:
        CONVERTERS[name]().from_connect_data_batch("t", schema, values)
    assert str(batch.value) == str(per_record.value)


@pytest.mark.parametrize(("name", "datas"), cases(GOOD_MESSAGES))
def test_to_connect_data_batch_gives_the_per_record_schemas_and_values(
    name: str, datas: list[bytes | None]
) -> None:
    expected = [CONVERTERS[name]().to_connect_data("t", d) for d in datas]
    batch = CONVERTERS[name]().to_connect_data_batch("t", datas)
    assert isinstance(batch, ConnectDataBatch)
    got = list(zip(batch.schema_column(), batch.values, strict=True))
    assert len(got) == len(expected)
    for (schema, value), want in zip(got, expected, strict=True):
        assert schema == want.schema
        assert _same(value, want.value), (value, want.value)


@pytest.mark.parametrize(
    ("name", "datas"), [pytest.param(n, d, id=n) for n, d in BAD_MESSAGES.items()]
)
def test_to_connect_data_batch_raises_the_per_record_error(
    name: str, datas: list[bytes | None]
) -> None:
    with pytest.raises(DataError) as per_record:
        for data in datas:
            CONVERTERS[name]().to_connect_data("t", data)
    with pytest.raises(DataError) as batch:
        CONVERTERS[name]().to_connect_data_batch("t", datas)
    assert str(batch.value) == str(per_record.value)


class OnlyPerRecord(Converter):
    """A third party's converter: no batch methods of its own; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        pass

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        self.calls += 1
        return None if value is None else f"{topic}:{value}".encode()

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        self.calls += 1
        if data == b"s":
            return SchemaAndValue(STRING_SCHEMA, "s")
        return SchemaAndValue(None, data)


def test_the_default_batch_methods_call_the_per_record_methods_in_order() -> None:
    converter = OnlyPerRecord()
    assert converter.from_connect_data_batch("t", None, [1, None, "x"]) == [b"t:1", None, b"t:x"]
    assert converter.calls == 3
    same = converter.to_connect_data_batch("t", [b"a", b"b"])
    assert same == ConnectDataBatch(None, [b"a", b"b"])
    mixed = converter.to_connect_data_batch("t", [b"a", b"s"])
    assert mixed.schema_column() == [None, STRING_SCHEMA]
    assert mixed.values == [b"a", "s"]
    assert converter.to_connect_data_batch("t", []) == ConnectDataBatch(None, [])


_INT = b'{"schema":{"type":"int32","optional":true},"payload":'
_DEC = (
    b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
    b'"version":1,"parameters":{"scale":"2"}},"payload":'
)
WARM_ENVELOPES: dict[str, list[bytes | None]] = {
    "same schema": [_INT + b"%d}" % i for i in range(5)] + [_INT + b"null}"],
    "another schema among them": [_INT + b"1}", b'{"schema":{"type":"string"},"payload":"s"}'],
    "a payload orjson rejects": [_INT + b"1}", _INT + b"007}"],
    "whitespace around a payload": [_INT + b" 1 }", _INT + b"2}"],
    "a decimal": [_DEC + b'"AQ=="}', _DEC + b'"Ag=="}'],
    "a null among them": [_INT + b"1}", None],
}


@pytest.mark.parametrize("datas", WARM_ENVELOPES.values(), ids=WARM_ENVELOPES.keys())
def test_envelopes_of_the_schema_seen_last_decode_as_a_column_like_per_record(
    datas: list[bytes | None],
) -> None:
    """After a first message, a converter decodes the envelopes of that message's schema
    column-wise: the same schemas and values as per record, whatever the batch holds."""
    first = next(d for d in datas if d is not None)
    per_record, batched = CONVERTERS["json-envelope"](), CONVERTERS["json-envelope"]()
    for converter in (per_record, batched):
        converter.to_connect_data("t", first)  # both have seen the first message's schema
    expected = [per_record.to_connect_data("t", d) for d in datas]
    batch = batched.to_connect_data_batch("t", datas)
    got = list(zip(batch.schema_column(), batch.values, strict=True))
    assert [schema for schema, _ in got] == [want.schema for want in expected]
    for (_, value), want in zip(got, expected, strict=True):
        assert _same(value, want.value), (value, want.value)


def test_a_payload_that_does_not_fit_the_schema_raises_the_per_record_error() -> None:
    datas: list[bytes | None] = [_INT + b"1}", _INT + b'"text"}']
    per_record, batched = CONVERTERS["json-envelope"](), CONVERTERS["json-envelope"]()
    for converter in (per_record, batched):
        converter.to_connect_data("t", datas[0])
    with pytest.raises(DataError) as one:
        for data in datas:
            per_record.to_connect_data("t", data)
    with pytest.raises(DataError) as column:
        batched.to_connect_data_batch("t", datas)
    assert str(column.value) == str(one.value)
