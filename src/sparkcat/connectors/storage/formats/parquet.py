"""``io.confluent.connect.s3.format.parquet.ParquetFormat``: Parquet files via pyarrow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sparkcat.api import Decimal, Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats.base import Format, needs_schema, to_native

_PRIMITIVE = {
    Type.INT8: pa.int8(),
    Type.INT16: pa.int16(),
    Type.INT32: pa.int32(),
    Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(),
    Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(),
    Type.STRING: pa.string(),
    Type.BYTES: pa.binary(),
}
_LOGICAL = {
    "org.apache.kafka.connect.data.Date": pa.date32(),
    "org.apache.kafka.connect.data.Time": pa.time32("ms"),
    "org.apache.kafka.connect.data.Timestamp": pa.timestamp("ms", tz="UTC"),
}


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema."""
    if schema.name in _LOGICAL:
        return _LOGICAL[schema.name]
    if schema.name == Decimal.LOGICAL_NAME:
        params = schema.parameters or {}
        precision = int(params.get("connect.decimal.precision", "38"))
        return pa.decimal128(min(precision, 38), int(params.get("scale", "0")))
    if schema.type in _PRIMITIVE:
        return _PRIMITIVE[schema.type]
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return pa.list_(arrow_field("element", schema.value_schema))
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(arrow_type(schema.key_schema), arrow_field("value", schema.value_schema))
    return pa.struct([arrow_field(f.name, f.schema) for f in schema.fields])


def arrow_field(name: str, schema: Schema) -> pa.Field:
    return pa.field(name, arrow_type(schema), nullable=schema.optional)


def arrow_schema(schema: Schema) -> pa.Schema:
    """Top-level struct fields become columns; any other value is one ``value`` column."""
    if schema.type is Type.STRUCT:
        return pa.schema([arrow_field(f.name, f.schema) for f in schema.fields])
    return pa.schema([arrow_field("value", schema)])


class ParquetFormat(Format):
    """One Parquet file per object; ``.snappy.parquet`` etc. after ``parquet.codec``
    (Confluent puts the codec's extension before ``.parquet``; ``none``: ``.parquet``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        codec = settings[c.PARQUET_CODEC_CONFIG]
        self.compression = "none" if codec == "none" else codec
        prefix = {"none": "", "gzip": ".gz", "brotli": ".br", "lz4": ".lz4", "zstd": ".zstd"}
        self.extension = prefix.get(codec, "." + codec) + ".parquet"
        self._schemas: dict[Schema, pa.Schema] = {}

    def check(self, record: SinkRecord) -> None:
        needs_schema(record, "ParquetFormat")

    def encode(self, records: list[SinkRecord]) -> bytes:
        schema = needs_schema(records[0], "ParquetFormat")
        target = self._schemas.get(schema)
        if target is None:
            target = arrow_schema(schema)
            self._schemas[schema] = target
        try:
            table = pa.Table.from_arrays(self._columns(schema, records, target), schema=target)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"ParquetFormat could not convert the records: {exc}") from exc
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=self.compression)
        return bytes(sink.getvalue())

    @staticmethod
    def _columns(schema: Schema, records: list[SinkRecord], target: pa.Schema) -> list[pa.Array]:
        if schema.type is not Type.STRUCT:
            values = [to_native(schema, r.value) for r in records]
            return [pa.array(values, type=target.field(0).type)]
        rows = [r.value.values if isinstance(r.value, Struct) else None for r in records]
        if any(row is None for row in rows):
            raise DataError("ParquetFormat: a record's value is not a Struct")
        columns = []
        for i, field in enumerate(schema.fields):
            column = [row[i] for row in rows]  # type: ignore[index]
            if not field.schema.type.is_primitive:
                column = [to_native(field.schema, v) for v in column]
            columns.append(pa.array(column, type=target.field(i).type))
        return columns


__all__ = ["ParquetFormat", "arrow_schema"]
