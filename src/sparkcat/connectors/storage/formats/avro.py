"""``io.confluent.connect.s3.format.avro.AvroFormat``: Avro object container files."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping
from typing import Any

import fastavro

from sparkcat.api import Decimal, Schema, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats.base import Format, needs_schema, to_native

# The same table as the AvroConverter's (sparkcat.converters.avro.avro_data.PRIMITIVES): a
# connector imports only sparkcat.api, as a third party's would, so it keeps its own.
_PRIMITIVE = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
_LOGICAL = {
    "org.apache.kafka.connect.data.Date": {"type": "int", "logicalType": "date"},
    "org.apache.kafka.connect.data.Time": {"type": "int", "logicalType": "time-millis"},
    "org.apache.kafka.connect.data.Timestamp": {"type": "long", "logicalType": "timestamp-millis"},
}
_NAMESPACE = "io.confluent.connect.avro"
# Avro writers pick a random sync marker; a fixed one makes a rewritten file byte-identical.
_SYNC_MARKER = hashlib.md5(b"sparkcat storage sink").digest()


def avro_schema(schema: Schema) -> Any:
    """The Avro schema of a Connect schema (as Confluent's AvroData names things: unnamed
    structs are ``io.confluent.connect.avro.ConnectDefault``, optional is a union with null)."""
    counter = [0]
    return _avro(schema, counter)


def _avro(schema: Schema, counter: list[int]) -> Any:
    result = _avro_required(schema, counter)
    if schema.optional:
        return ["null", result]
    return result


def _avro_required(schema: Schema, counter: list[int]) -> Any:
    if schema.name in _LOGICAL:
        return dict(_LOGICAL[schema.name])
    if schema.name == Decimal.LOGICAL_NAME:
        params = schema.parameters or {}
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": int(params.get("connect.decimal.precision", "64")),
            "scale": int(params.get("scale", "0")),
        }
    if schema.type in _PRIMITIVE:
        return _PRIMITIVE[schema.type]
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return {"type": "array", "items": _avro(schema.value_schema, counter)}
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is not Type.STRING:
            raise DataError("AvroFormat writes maps with string keys only")
        return {"type": "map", "values": _avro(schema.value_schema, counter)}
    counter[0] += 1
    name = schema.name or ("ConnectDefault" + (str(counter[0]) if counter[0] > 1 else ""))
    namespace, _, simple = name.rpartition(".")
    fields = []
    for field in schema.fields:
        entry: dict[str, Any] = {"name": field.name, "type": _avro(field.schema, counter)}
        if field.schema.optional:
            entry["default"] = None
        fields.append(entry)
    return {
        "type": "record",
        "name": simple,
        "namespace": namespace or _NAMESPACE,
        "fields": fields,
    }


class AvroFormat(Format):
    """One container file (``.avro``) per object, schema from the records' value schema,
    compressed with ``avro.codec`` (``null`` by default)."""

    extension = ".avro"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.codec = settings[c.AVRO_CODEC_CONFIG]
        self._parsed: dict[Schema, Any] = {}

    def check(self, record: SinkRecord) -> None:
        needs_schema(record, "AvroFormat")

    def encode(self, records: list[SinkRecord]) -> bytes:
        schema = needs_schema(records[0], "AvroFormat")
        parsed = self._parsed.get(schema)
        if parsed is None:
            parsed = fastavro.parse_schema(avro_schema(schema))
            self._parsed[schema] = parsed
        out = io.BytesIO()
        fastavro.writer(
            out,
            parsed,
            (to_native(schema, r.value) for r in records),
            codec=self.codec,
            sync_marker=_SYNC_MARKER,
        )
        return out.getvalue()


__all__ = ["AvroFormat", "avro_schema"]
