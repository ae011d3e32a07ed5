"""``io.confluent.connect.s3.format.json.JsonFormat``: one JSON document per line."""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from typing import Any

import orjson

from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats.base import Format, to_json_value

_PLAIN = (str, int, float, bool, type(None))


class JsonFormat(Format):
    """Values as JsonConverter writes them with ``schemas.enable=false``, one per line
    (``.json``; ``.json.gz`` with ``s3.compression.type=gzip``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.gzip = settings[c.COMPRESSION_TYPE_CONFIG] == "gzip"
        self.extension = ".json.gz" if self.gzip else ".json"

    def encode(self, records: list[SinkRecord]) -> bytes:
        dumps = orjson.dumps
        lines = [
            dumps(v if isinstance(v, _PLAIN) else to_json_value(v))
            for v in (r.value for r in records)
        ]
        lines.append(b"")
        data = b"\n".join(lines)
        return gzip.compress(data, mtime=0) if self.gzip else data


__all__ = ["JsonFormat"]
