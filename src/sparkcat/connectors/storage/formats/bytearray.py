"""``io.confluent.connect.s3.format.bytearray.ByteArrayFormat``: raw value bytes."""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from typing import Any

from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats.base import Format


class ByteArrayFormat(Format):
    """Each value's bytes followed by ``format.bytearray.separator`` (``\\n``), in a file
    ending ``format.bytearray.extension`` (``.bin``; plus ``.gz`` when gzip-compressed).
    Values must be bytes (``value.converter=...ByteArrayConverter``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.gzip = settings[c.COMPRESSION_TYPE_CONFIG] == "gzip"
        self.separator = settings[c.BYTEARRAY_SEPARATOR_CONFIG].encode()
        self.extension = settings[c.BYTEARRAY_EXTENSION_CONFIG] + (".gz" if self.gzip else "")

    def check(self, record: SinkRecord) -> None:
        if not isinstance(record.value, bytes | bytearray):
            raise DataError(
                f"ByteArrayFormat needs bytes values: record {record.topic}-"
                f"{record.kafka_partition}@{record.kafka_offset} has a "
                f"{type(record.value).__name__} (use value.converter="
                "org.apache.kafka.connect.converters.ByteArrayConverter)"
            )

    def encode(self, records: list[SinkRecord]) -> bytes:
        values = [bytes(r.value) for r in records]
        values.append(b"")
        data = self.separator.join(values)
        return gzip.compress(data, mtime=0) if self.gzip else data


__all__ = ["ByteArrayFormat"]
