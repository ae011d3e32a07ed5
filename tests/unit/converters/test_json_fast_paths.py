"""JsonConverter's per-schema message functions (generated encoders/decoders used from the second
record of a schema on) give exactly what the general path gives a fresh converter: same bytes,
same values, same errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sparkcat.api.data import (
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
    Struct,
)
from sparkcat.api.errors import DataError
from sparkcat.converters.json import JsonConverter

RECORD = (
    SchemaBuilder.struct()
    .name("r")
    .doc("100% of the fields")  # a % in the schema bytes spliced around the payload
    .field("id", INT64_SCHEMA)
    .field("name", STRING_SCHEMA)
    .field("score", FLOAT64_SCHEMA)
    .field("level", SchemaBuilder.int8().default_value(3).build())
    .field("note", OPTIONAL_STRING_SCHEMA)
    .build()
)
OPTIONAL_RECORD = SchemaBuilder.struct().field("a", INT8_SCHEMA).optional().build()
ONE = SchemaBuilder.struct().field("only", STRING_SCHEMA).build()
EMPTY = SchemaBuilder.struct().build()
SCHEMAS = [RECORD, OPTIONAL_RECORD, ONE, EMPTY, SchemaBuilder.int32().build()]


def _converter(**configs: str) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(configs, False)
    return converter


def _outcome(call: Any, *args: Any) -> Any:
    try:
        return ("ok", call("t", *args))
    except DataError as e:
        return ("error", str(e))


def _envelope(schema: Schema, payload: str) -> bytes:
    prefix = JsonConverter().from_connect_data(
        "t", schema, None if schema.optional else _any(schema)
    )
    assert prefix is not None
    head = prefix[: prefix.index(b',"payload":') + len(b',"payload":')]
    return head + payload.encode() + b"}"


def _any(schema: Schema) -> Any:
    if schema is RECORD:
        return Struct.from_values(RECORD, [1, "a", 0.5, 3, None])
    if schema is ONE:
        return Struct(ONE).put("only", "x")
    if schema is EMPTY:
        return Struct(EMPTY)
    return 1


PAYLOADS = {
    RECORD: [
        '{"id":7,"name":"n","score":1.5,"level":2,"note":"x"}',
        '{"id":7,"name":"n","score":1.5,"level":2}',  # optional field missing
        '{"id":7,"name":"n","score":1.5}',  # field with default missing
        '{"id":7,"name":"n","score":1.5,"level":null,"note":null}',
        '{"name":"n","score":1.5,"level":2,"note":"x"}',  # required field missing
        '{"id":7,"name":"n","score":1,"level":2,"note":"x","extra":[1]}',  # int for double
        '{"id":"7","name":"n","score":1.5,"level":2,"note":"x"}',
        '{"id":7,"name":"n","score":1.5,"level":200,"note":"x"}',  # out of INT8 range
        '{"id":9223372036854775808,"name":"n","score":1.5,"level":2,"note":"x"}',
        '{"id":7,"name":5,"score":1.5,"level":2,"note":"x"}',
        '{"id":7,"name":"n","score":"NaN","level":2,"note":"x"}',
        '{"id":7,"name":"n","score":1.5,"level":true,"note":1}',
        '{"id":007,"name":"n","score":1.5,"level":2,"note":"x"}',  # leading zeros (Jackson)
        "null",
        "[1]",
        '"text"',
        '{"id":7,"name":"n","score":1.5,"level":2,"note":"x"},"extra":1',
        '{"id":7,"name":"n","score":1.5,"level":2,"note":"x"} ',
        "{bad",
    ],
    OPTIONAL_RECORD: ['{"a":1}', "null", "{}", '{"a":null}', '{"a":1000}', "1"],
    ONE: ['{"only":"x"}', "{}", '{"only":null}', '{"only":1}', "null"],
    EMPTY: ["{}", '{"x":1}', "null", "[]"],
    SCHEMAS[-1]: ["5", "null", '"5"', "5.5", "2147483648"],
}


@pytest.mark.parametrize("replace", ["true", "false"])
@pytest.mark.parametrize("schema", SCHEMAS, ids=["record", "optional", "one", "empty", "int32"])
def test_warm_decoding_equals_cold_decoding(schema: Schema, replace: str) -> None:
    configs = {"replace.null.with.default": replace}
    warm = _converter(**configs)
    first = _envelope(schema, PAYLOADS[schema][0])
    warm.to_connect_data("t", first)  # primes the message decoder of this schema
    for payload in PAYLOADS[schema]:
        data = _envelope(schema, payload)
        expected = _outcome(_converter(**configs).to_connect_data, data)
        assert _outcome(warm.to_connect_data, data) == expected, payload
        # ... and the fast path stays primed after a message that failed or fell back.
        assert warm.to_connect_data("t", first) == _converter(**configs).to_connect_data("t", first)


def _structs() -> list[Any]:
    unset_required = Struct(RECORD).put("name", "n").put("score", 1.0)
    return [
        Struct.from_values(RECORD, [1, "a", 0.5, 3, None]),
        # Java writes 1.0E7; "level" unset: its default (or null) is written
        Struct(RECORD).put("id", 1).put("name", "a").put("score", 1e7).put("note", "n"),
        Struct.from_values(RECORD, [1, "a", float("nan"), 3, "n"]),
        Struct.from_values(RECORD, [-(2**63), '\u00e9"\\', 1e-4, 3, "%s %b"]),
        unset_required,
        Struct(ONE).put("only", "x"),  # another schema: Mismatching schema
        {"id": 1},
        None,
        7,
    ]


@pytest.mark.parametrize("schemas_enable", ["true", "false"])
@pytest.mark.parametrize("replace", ["true", "false"])
def test_warm_encoding_equals_cold_encoding(schemas_enable: str, replace: str) -> None:
    configs = {"schemas.enable": schemas_enable, "replace.null.with.default": replace}
    for schema in (RECORD, OPTIONAL_RECORD):
        warm = _converter(**configs)
        warm.from_connect_data("t", schema, _any(schema) if schema is RECORD else None)
        for value in _structs():
            expected = _outcome(_converter(**configs).from_connect_data, schema, value)
            assert _outcome(warm.from_connect_data, schema, value) == expected


def test_envelope_keeps_percent_signs_of_the_schema() -> None:
    data = _converter().from_connect_data("t", RECORD, _any(RECORD))
    assert data is not None and b'"doc":"100% of the fields"' in data
    again = _converter()
    for _ in range(2):
        assert again.from_connect_data("t", RECORD, _any(RECORD)) == data
        assert again.to_connect_data("t", data).value == _any(RECORD)


def test_decoded_structs_are_valid_and_independent() -> None:
    converter = _converter()
    data = _envelope(RECORD, '{"id":7,"name":"n","score":1.5,"level":2,"note":"x"}')
    first, second = (converter.to_connect_data("t", data).value for _ in range(2))
    first.validate()
    assert first == second and first is not second
    first.put("name", "changed")
    assert second.get("name") == "n"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('{"id":7,"name":"n","score":1.5,"level":200}', "Invalid NUMBER value for INT8 field: 200"),
        ('{"id":"7","name":"n","score":1.5}', "Invalid STRING value for INT64 field: '7'"),
        ('{"name":"n","score":1.5}', "Invalid null value for required INT64 field"),
        ('{"id":7,"name":"n","score":true}', "Invalid BOOLEAN value for FLOAT64 field: True"),
    ],
)
def test_invalid_fields_raise_on_cold_and_warm_paths(payload: str, message: str) -> None:
    converter = _converter()
    good = _envelope(RECORD, '{"id":7,"name":"n","score":1.5}')
    data = _envelope(RECORD, payload)
    for _ in range(2):
        with pytest.raises(DataError, match=re.escape(message)):
            converter.to_connect_data("t", data)
        assert converter.to_connect_data("t", good).value.get("level") == 3
