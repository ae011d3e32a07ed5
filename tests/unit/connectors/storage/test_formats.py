"""Each format's bytes read back with pyarrow, fastavro, orjson."""

from __future__ import annotations

import decimal
import gzip
import io
from datetime import UTC, date, datetime
from typing import Any

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest

from sparkcat.api import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp
from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats import format_for

INNER = SchemaBuilder.struct().field("x", SchemaBuilder.int64().build()).build()
SCHEMA = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", SchemaBuilder.int64().build())
    .field("name", SchemaBuilder.string().optional().build())
    .field("blob", SchemaBuilder.bytes().build())
    .field("tags", SchemaBuilder.array(SchemaBuilder.string().build()).build())
    .field("attrs", SchemaBuilder.map(SchemaBuilder.string().build(),
                                      SchemaBuilder.int32().build()).build())
    .field("inner", INNER)
    .field("at", Timestamp.SCHEMA)
    .field("day", Date.SCHEMA)
    .field("price", Decimal.schema(2))
    .build()
)  # fmt: skip
AT = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def settings(fmt: str, **extra: str) -> dict[str, Any]:
    props = {"format.class": fmt, "flush.size": "3", **extra}
    return dict(c.parse(c.FILESYSTEM_CONFIG_DEF, props).values)


def order(i: int, name: str | None = "n") -> Struct:
    return (
        Struct(SCHEMA).put("id", i).put("name", name).put("blob", bytes([i % 256]))
        .put("tags", ["a", str(i)]).put("attrs", {"k": i}).put("inner", Struct(INNER).put("x", i))
        .put("at", AT).put("day", date(2024, 5, 6)).put("price", decimal.Decimal("12.34"))
    )  # fmt: skip


def records(values: list[Any], schema: Schema | None = SCHEMA) -> list[SinkRecord]:
    return [SinkRecord("t", 0, None, None, schema, v, i) for i, v in enumerate(values)]


def test_parquet() -> None:
    fmt = format_for(settings(c.PARQUET_FORMAT))
    assert fmt.extension == ".snappy.parquet"
    table = pq.read_table(io.BytesIO(fmt.encode(records([order(1), order(2, None)]))))
    rows = table.to_pylist()
    assert [r["id"] for r in rows] == [1, 2]
    assert rows[1]["name"] is None
    assert rows[0]["blob"] == b"\x01"
    assert rows[0]["tags"] == ["a", "1"]
    assert dict(rows[0]["attrs"]) == {"k": 1}
    assert rows[0]["inner"] == {"x": 1}
    assert rows[0]["at"] == AT
    assert rows[0]["day"] == date(2024, 5, 6)
    assert rows[0]["price"] == decimal.Decimal("12.34")
    assert not table.schema.field("id").nullable


@pytest.mark.parametrize(("codec", "extension"), [("none", ".parquet"), ("gzip", ".gz.parquet"),
                                                  ("zstd", ".zstd.parquet")])  # fmt: skip
def test_parquet_codecs(codec: str, extension: str) -> None:
    fmt = format_for(settings(c.PARQUET_FORMAT, **{"parquet.codec": codec}))
    assert fmt.extension == extension
    data = fmt.encode(records([order(1)]))
    assert pq.read_table(io.BytesIO(data)).num_rows == 1


def test_avro() -> None:
    fmt = format_for(settings(c.AVRO_FORMAT, **{"avro.codec": "deflate"}))
    assert fmt.extension == ".avro"
    reader = fastavro.reader(io.BytesIO(fmt.encode(records([order(1), order(2, None)]))))
    assert reader.writer_schema["name"] == "com.example.Order"  # type: ignore[call-overload,index]
    rows: list[Any] = list(reader)
    assert [r["id"] for r in rows] == [1, 2]
    assert rows[1]["name"] is None
    assert rows[0]["at"] == AT and rows[0]["price"] == decimal.Decimal("12.34")
    assert rows[0]["inner"] == {"x": 1} and rows[0]["attrs"] == {"k": 1}


def test_json_lines_and_gzip() -> None:
    fmt = format_for(settings(c.JSON_FORMAT))
    data = fmt.encode(records([order(1), {"free": [1, 2]}, "text", 5], None))
    lines = data.decode().splitlines()
    first = orjson.loads(lines[0])
    assert (
        first["id"] == 1 and first["blob"] == "AQ==" and first["at"] == int(AT.timestamp() * 1000)
    )
    assert first["day"] == 19849 and first["inner"] == {"x": 1}
    assert [orjson.loads(x) for x in lines[1:]] == [{"free": [1, 2]}, "text", 5]
    zipped = format_for(settings(c.JSON_FORMAT, **{"s3.compression.type": "gzip"}))
    assert zipped.extension == ".json.gz"
    assert gzip.decompress(zipped.encode(records([1, 2], None))) == b"1\n2\n"


def test_bytearray() -> None:
    fmt = format_for(settings(c.BYTEARRAY_FORMAT))
    assert fmt.extension == ".bin"
    assert fmt.encode(records([b"a", b"bc"], None)) == b"a\nbc\n"
    custom = format_for(
        settings(
            c.BYTEARRAY_FORMAT,
            **{"format.bytearray.separator": "|", "format.bytearray.extension": ".raw"},
        )
    )
    assert custom.extension == ".raw" and custom.encode(records([b"a", b"b"], None)) == b"a|b|"
    with pytest.raises(DataError, match="ByteArrayConverter"):
        fmt.check(records(["text"], None)[0])


@pytest.mark.parametrize("fmt", [c.PARQUET_FORMAT, c.AVRO_FORMAT])
def test_schema_formats_need_a_schema(fmt: str) -> None:
    with pytest.raises(DataError, match="needs a value schema"):
        format_for(settings(fmt)).check(records([{"a": 1}], None)[0])
