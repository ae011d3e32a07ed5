"""Schemaless Connect values (schema ``None``) as Confluent's ``AvroData`` carries them: in the
self-referencing record ``io.confluent.connect.avro.Anything`` with one optional field per
kind of value (``boolean``, ``bytes``, ``double``, ``float``, ``int``, ``long``, ``string``,
``array`` of Anything, ``map`` as an array of ``MapEntry`` records of Anything key/value)."""

from __future__ import annotations

from typing import Any

from sparkcat.api.errors import DataError


def _optional(name: str, avro: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro], "default": None}


ANYTHING_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Anything",
    "namespace": "io.confluent.connect.avro",
    "fields": [
        *(
            _optional(kind, kind)
            for kind in ("boolean", "bytes", "double", "float", "int", "long", "string")
        ),
        _optional("array", {"type": "array", "items": "Anything"}),
        _optional(
            "map",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "fields": [
                        {"name": "key", "type": "Anything"},
                        {"name": "value", "type": "Anything"},
                    ],
                },
            },
        ),
    ],
}
_FIELDS = tuple(f["name"] for f in ANYTHING_SCHEMA["fields"])
_EMPTY = dict.fromkeys(_FIELDS)


def is_anything(avro: Any) -> bool:
    return (
        isinstance(avro, dict)
        and avro.get("name")
        in (
            "Anything",
            "io.confluent.connect.avro.Anything",
        )
        and avro.get("namespace", "io.confluent.connect.avro") == "io.confluent.connect.avro"
    )


def wrap(value: Any) -> dict[str, Any]:
    """The Anything record of a schemaless Connect value (Python ints are Connect INT64, floats
    FLOAT64, as schemaless JSON gives them)."""
    record = dict(_EMPTY)
    if value is None:
        return record
    cls = value.__class__
    if cls is bool:
        record["boolean"] = value
    elif cls is int:
        record["long"] = value
    elif cls is float:
        record["double"] = value
    elif cls is str:
        record["string"] = value
    elif isinstance(value, bytes | bytearray | memoryview):
        record["bytes"] = bytes(value)
    elif isinstance(value, list | tuple):
        record["array"] = [wrap(item) for item in value]
    elif isinstance(value, dict):
        record["map"] = [{"key": wrap(k), "value": wrap(v)} for k, v in value.items()]
    else:
        raise DataError(f"Unknown Java type for schemaless data: {cls.__name__}")
    return record


def unwrap(record: Any) -> Any:
    """The schemaless Connect value held by an Anything record."""
    if not isinstance(record, dict):
        raise DataError("Invalid Avro data for schemaless Connect data")
    for kind in ("boolean", "bytes", "double", "float", "int", "long", "string"):
        value = record.get(kind)
        if value is not None:
            return value
    items = record.get("array")
    if items is not None:
        return [unwrap(item) for item in items]
    entries = record.get("map")
    if entries is not None:
        return {unwrap(e["key"]): unwrap(e["value"]) for e in entries}
    return None
