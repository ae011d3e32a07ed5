"""The Connect data model: schemas, structs and logical types (Kafka's
``org.apache.kafka.connect.data``).

Python value types per schema type:

=================================  ===========================================================
schema                             Python value
=================================  ===========================================================
INT8, INT16, INT32, INT64          ``int`` within the type's range (never ``bool``)
FLOAT32, FLOAT64                   ``float`` (an ``int`` is accepted; never ``bool``)
BOOLEAN / STRING                   ``bool`` / ``str``
BYTES                              ``bytes`` (``bytearray`` and ``memoryview`` accepted)
ARRAY / MAP / STRUCT               ``list`` / ``dict`` / :class:`Struct`
Decimal / Date / Time / Timestamp  ``decimal.Decimal`` / ``datetime.date`` /
                                   ``datetime.time`` / ``datetime.datetime`` (UTC)
=================================  ===========================================================

Schemaless data (schema ``None``) uses plain ``dict``, ``list``, ``str``, ``int``, ``float``,
``bool``, ``bytes`` and ``None``. All schema and value errors raise
:class:`~sparkcat.api.errors.DataError` (or its subclasses ``SchemaBuilderError`` and
``SchemaProjectorError``).
"""

from __future__ import annotations

from sparkcat.api._builder import SchemaAndValue, SchemaBuilder
from sparkcat.api._logical import Date, Decimal, Time, Timestamp
from sparkcat.api._projector import SchemaProjector
from sparkcat.api._schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT8_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Field,
    Schema,
    Type,
)
from sparkcat.api._struct import Struct

# Kafka's concrete schema class; here Schema is both the interface and the implementation.
ConnectSchema = Schema

__all__ = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
    "ConnectSchema",
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjector",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
]
