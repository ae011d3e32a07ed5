"""A source task returning SourceRecordBatches with every per-record column, that writes
each ``commit_batch`` call it gets to the JSON-lines file its config names."""

from __future__ import annotations

from typing import Any

import orjson

from sparkcat.api.batch import RecordMetadataBatch, SourceRecordBatch, SourceRun
from sparkcat.api.data import OPTIONAL_BYTES_SCHEMA
from sparkcat.api.source import SourceTask

Row = tuple[bytes | None, bytes | None, int, int, list[tuple[str, bytes | None]] | None]

# Two polls' worth of records: (value, key, partition, timestamp, headers).
BATCHES: list[list[Row]] = [
    [(b"v0", b"k0", 0, 1_600_000_000_000, [("h", b"0"), ("empty", None)]),
     (b"v1", None, 1, 1_600_000_000_001, None),
     (b"drop-v2", b"k2", 0, 1_600_000_000_002, [("drop", b"yes")])],
    [(b"v3", b"k3", 1, 1_600_000_000_003, [("h", b"3")]),
     (None, b"k4", 0, 1_600_000_000_004, None)],
]  # fmt: skip


class BatchesWithCommitBatch(SourceTask):
    """Config: ``topic``, ``calls.file``, and ``explicit.partitions`` (``false``: records
    name no partition, the producer's partitioner picks)."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self._topic = props["topic"]
        self._calls = props["calls.file"]
        self._explicit = props.get("explicit.partitions", "true") == "true"
        self._polled = 0

    def poll(self) -> SourceRecordBatch | None:
        if self._polled == len(BATCHES):
            return None
        rows = BATCHES[self._polled]
        self._polled += 1
        runs = [SourceRun({"batch": self._polled}, {"done": True}, len(rows))]
        return SourceRecordBatch(
            self._topic, [r[0] for r in rows], OPTIONAL_BYTES_SCHEMA, runs,
            keys=[r[1] for r in rows], key_schema=OPTIONAL_BYTES_SCHEMA,
            kafka_partitions=[r[2] for r in rows] if self._explicit else None,
            timestamps=[r[3] for r in rows], headers=[r[4] for r in rows],
        )  # fmt: skip

    def commit_batch(self, batch: SourceRecordBatch, metadata: RecordMetadataBatch) -> None:
        call: dict[str, Any] = {
            "values": [None if v is None else v.decode() for v in batch.values],
            "topics": metadata.topics,
            "partitions": metadata.partitions,
            "offsets": metadata.offsets,
        }
        with open(self._calls, "ab") as out:
            out.write(orjson.dumps(call) + b"\n")

    def stop(self) -> None:
        pass
