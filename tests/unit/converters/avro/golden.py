"""Golden cases: a Connect schema and value, the Avro schema text Confluent's AvroData gives
for that schema (written out by hand from AvroData's rules and Avro's ``Schema.toString``),
and the Avro binary payload, built here from the Avro specification's encoding rules
(zig-zag varints, length-prefixed bytes/strings, blocks for arrays and maps, union index
first), independently of the converter and of fastavro."""

from __future__ import annotations

import datetime
import decimal
import struct
from dataclasses import dataclass
from typing import Any

from sparkcat.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp


def zz(n: int) -> bytes:
    """Avro int/long: zig-zag, then base-128 varint, low group first."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def text(s: str) -> bytes:
    raw = s.encode()
    return zz(len(raw)) + raw


def raw(b: bytes) -> bytes:
    return zz(len(b)) + b


@dataclass(frozen=True)
class Golden:
    id: str
    schema: Schema
    value: Any
    avro: str  # the Avro schema text Confluent's converter registers
    payload: bytes


def _primitive_cases() -> list[Golden]:
    return [
        Golden("int32", Schema.INT32_SCHEMA, 42, '"int"', zz(42)),
        Golden("int8", Schema.INT8_SCHEMA, -3, '{"type":"int","connect.type":"int8"}', zz(-3)),
        Golden("int16", Schema.INT16_SCHEMA, 300, '{"type":"int","connect.type":"int16"}', zz(300)),
        Golden("int64", Schema.INT64_SCHEMA, 2**40, '"long"', zz(2**40)),
        Golden("string", Schema.STRING_SCHEMA, "héllo", '"string"', text("héllo")),
        Golden("float64", Schema.FLOAT64_SCHEMA, 1.5, '"double"', struct.pack("<d", 1.5)),
        Golden("float32", Schema.FLOAT32_SCHEMA, 0.25, '"float"', struct.pack("<f", 0.25)),
        Golden("boolean", Schema.BOOLEAN_SCHEMA, True, '"boolean"', b"\x01"),
        Golden("bytes", Schema.BYTES_SCHEMA, b"\x00\xff", '"bytes"', raw(b"\x00\xff")),
    ]


def _flat_struct() -> Golden:
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("id", 7).put("name", "ab")
    avro = (
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"id","type":"int"},'
        '{"name":"name","type":["null","string"],"default":null},'
        '{"name":"note","type":["null","string"],"default":null}]}'
    )
    payload = zz(7) + zz(1) + text("ab") + zz(0)
    return Golden("flat-struct", schema, value, avro, payload)


def _order() -> Golden:
    customer = (
        SchemaBuilder.struct()
        .name("com.example.Customer")
        .field("name", Schema.STRING_SCHEMA)
        .build()
    )
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Order")
        .field("customer", customer)
        .field("items", SchemaBuilder.array(Schema.INT64_SCHEMA).build())
        .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("counts", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build())
        .field("price", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("at", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("status", SchemaBuilder.string().optional().default_value("new").build())
        .field("level", SchemaBuilder.int16().default_value(3).build())
        .build()
    )
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.UTC)
    value = (
        Struct(schema)
        .put("customer", Struct(customer).put("name", "Al"))
        .put("items", [1, -1])
        .put("tags", {"k": "v"})
        .put("counts", {5: 6})
        .put("price", decimal.Decimal("1.25"))
        .put("day", datetime.date(2024, 1, 2))
        .put("at", datetime.time(1, 0, 0, 500000))
        .put("ts", ts)
    )  # status and level unset: Connect's Struct.get gives their defaults, and so do the bytes
    avro = (
        '{"type":"record","name":"Order","namespace":"com.example","fields":['
        '{"name":"customer","type":{"type":"record","name":"Customer","fields":'
        '[{"name":"name","type":"string"}],"connect.name":"com.example.Customer"}},'
        '{"name":"items","type":{"type":"array","items":"long"}},'
        '{"name":"tags","type":{"type":"map","values":"string"}},'
        '{"name":"counts","type":{"type":"array","items":{"type":"record","name":"MapEntry",'
        '"namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"int"},'
        '{"name":"value","type":"int"}]}}},'
        '{"name":"price","type":{"type":"bytes","scale":2,"precision":64,"connect.version":1,'
        '"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal",'
        '"logicalType":"decimal"}},'
        '{"name":"day","type":{"type":"int","connect.version":1,'
        '"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}},'
        '{"name":"at","type":{"type":"int","connect.version":1,'
        '"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}},'
        '{"name":"ts","type":{"type":"long","connect.version":1,'
        '"connect.name":"org.apache.kafka.connect.data.Timestamp",'
        '"logicalType":"timestamp-millis"}},'
        '{"name":"status","type":[{"type":"string","connect.default":"new"},"null"],'
        '"default":"new"},'
        '{"name":"level","type":{"type":"int","connect.default":3,"connect.type":"int16"},'
        '"default":3}],'
        '"connect.name":"com.example.Order"}'
    )
    days = (datetime.date(2024, 1, 2) - datetime.date(1970, 1, 1)).days
    millis = int((ts - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)).total_seconds() * 1000)
    payload = (
        text("Al")
        + zz(2)
        + zz(1)
        + zz(-1)
        + zz(0)  # array: one block of 2, end
        + zz(1)
        + text("k")
        + text("v")
        + zz(0)  # map: one block of 1, end
        + zz(1)
        + zz(5)
        + zz(6)
        + zz(0)  # MapEntry array
        + raw(bytes([125]))  # 1.25 at scale 2: unscaled 125, two's complement
        + zz(days)
        + zz(3600 * 1000 + 500)
        + zz(millis)
        + zz(0)
        + text("new")  # union branch 0 (string), the default
        + zz(3)
    )
    return Golden("order", schema, value, avro, payload)


def _reused_struct() -> Golden:
    point = (
        SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).field("y", Schema.INT32_SCHEMA)
    ).build()
    optional_point = (
        SchemaBuilder.struct()
        .field("x", Schema.INT32_SCHEMA)
        .field("y", Schema.INT32_SCHEMA)
        .optional()
        .build()
    )
    schema = (
        SchemaBuilder.struct()
        .field("a", point)
        .field("b", SchemaBuilder.array(point).build())
        .field("c", optional_point)
        .build()
    )
    p = Struct(point).put("x", 1).put("y", 2)
    value = Struct(schema).put("a", p).put("b", [p, p]).put("c", None)
    avro = (
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"a","type":{"type":"record","name":"ConnectDefault2","fields":'
        '[{"name":"x","type":"int"},{"name":"y","type":"int"}]}},'
        '{"name":"b","type":{"type":"array","items":"ConnectDefault2"}},'
        '{"name":"c","type":["null","ConnectDefault2"],"default":null}]}'
    )
    xy = zz(1) + zz(2)
    payload = xy + zz(2) + xy + xy + zz(0) + zz(0)
    return Golden("reused-struct", schema, value, avro, payload)


GOLDEN = [*_primitive_cases(), _flat_struct(), _order(), _reused_struct()]
