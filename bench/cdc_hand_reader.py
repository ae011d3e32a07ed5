"""The baseline of ``bench_cdc.py``: a hand-written reader of a logical replication slot.

psycopg2's ``LogicalReplicationConnection`` with pgoutput (protocol 1); the messages decoded
just enough (relation names, tuple texts) to produce one JSON object per change (``op``,
``lsn``, commit ``ts_ms``, ``before``/``after`` as text) with confluent-kafka, keyed by the
key columns, with the librdkafka settings of a source task's producer.
"""

from __future__ import annotations

import select
import struct
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import orjson
import psycopg2
import psycopg2.extras
from confluent_kafka import Producer

from sparkcat.kafka import clients

PUBLICATION = "bench_publication"
TABLES = ("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history")
_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U64 = struct.Struct(">Q")
_PG_EPOCH_MS = 946_684_800_000


def _string(data: bytes, pos: int) -> tuple[str, int]:
    end = data.index(b"\0", pos)
    return data[pos:end].decode(), end + 1


def _tuple(data: bytes, pos: int) -> tuple[list[str | None], int]:
    (count,) = _I16.unpack_from(data, pos)
    pos += 2
    values: list[str | None] = []
    for _ in range(count):
        kind = data[pos]
        pos += 1
        if kind == 0x74:  # t
            (length,) = _I32.unpack_from(data, pos)
            values.append(data[pos + 4 : pos + 4 + length].decode())
            pos += 4 + length
        else:  # n (NULL) or u (unchanged TOAST)
            values.append(None)
    return values, pos


class HandReader:
    """One replication connection; one JSON record per change, produced as it is decoded."""

    def __init__(
        self,
        server: Any,
        dbname: str,
        servers: str,
        slot: str,
        worker: Mapping[str, str] | None = None,
    ) -> None:
        self.prefix = f"hand{uuid.uuid4().hex[:6]}"
        self.dsn, self.slot = server.dsn(dbname), slot
        # ``worker``: worker settings such as producer.compression.type, as the task gets them.
        config = clients.producer_config({"bootstrap.servers": servers, **(worker or {})})
        self.producer = Producer(config)
        self.relations: dict[int, tuple[str, list[str], list[int]]] = {}
        self.records = 0
        self.stop = threading.Event()

    def topics(self) -> list[str]:
        return [f"{self.prefix}.public.{t}" for t in TABLES]

    def run(self, expected: int | None = None) -> None:
        conn = psycopg2.connect(
            self.dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection
        )
        cursor = conn.cursor()
        cursor.start_replication(slot_name=self.slot, decode=False, options={
            "proto_version": "1", "publication_names": PUBLICATION})  # fmt: skip
        produce, poll, commit_ms, last = self.producer.produce, self.producer.poll, 0, 0
        try:
            while not self.stop.is_set() and (expected is None or self.records < expected):
                message = cursor.read_message()
                if message is None:
                    poll(0)
                    select.select([conn], [], [], 0.1)
                    continue
                data, last = message.payload, message.data_start
                tag = data[0]
                if tag == 0x42:  # B: final LSN, commit time, xid
                    commit_ms = _U64.unpack_from(data, 9)[0] // 1000 + _PG_EPOCH_MS
                elif tag == 0x52:  # R
                    self._relation(data)
                elif tag in (0x49, 0x55, 0x44):  # I, U, D
                    topic, key, value = self._change(data, tag, commit_ms, last)
                    try:
                        produce(topic, value, key)
                    except BufferError:
                        poll(0.05)
                        produce(topic, value, key)
                    self.records += 1
                    if self.records % 1000 == 0:
                        poll(0)
            self.producer.flush(60)
            cursor.send_feedback(flush_lsn=last, force=True)
        finally:
            conn.close()

    def _relation(self, data: bytes) -> None:
        (relation_id,) = _U32.unpack_from(data, 1)
        namespace, pos = _string(data, 5)
        name, pos = _string(data, pos)
        pos += 1  # replica identity
        (count,) = _I16.unpack_from(data, pos)
        pos += 2
        names, keys = [], []
        for i in range(count):
            flags = data[pos]
            column, pos = _string(data, pos + 1)
            pos += 8  # type OID, modifier
            names.append(column)
            if flags & 1:
                keys.append(i)
        self.relations[relation_id] = (f"{self.prefix}.{namespace}.{name}", names, keys)

    def _change(self, data: bytes, tag: int, commit_ms: int, lsn: int) -> tuple[str, Any, Any]:
        (relation_id,) = _U32.unpack_from(data, 1)
        topic, names, keys = self.relations[relation_id]
        before = None
        pos = 5
        if data[pos] in (0x4B, 0x4F):  # K, O: the old key or row
            old, pos = _tuple(data, pos + 1)
            before = dict(zip(names, old, strict=True))
        after = None
        if tag != 0x44:
            new, _ = _tuple(data, pos + 1)
            after = dict(zip(names, new, strict=True))
        row = after if after is not None else before
        assert row is not None
        key = orjson.dumps([row[names[i]] for i in keys])
        op = "c" if tag == 0x49 else "u" if tag == 0x55 else "d"
        value = {"op": op, "lsn": lsn, "ts_ms": commit_ms, "before": before, "after": after}
        return topic, key, orjson.dumps(value)
