"""The fair baseline of ``bench_cdc.py``: a hand-written slot reader writing the connector's bytes.

:class:`~cdc_hand_reader.HandReader` writes a 218-byte JSON object per change; the connector
writes Debezium's envelope with its schema, about 14 times as many bytes, so comparing the two
mixes the framework's cost with the broker's cost of those bytes. This reader writes the same
records as the connector (topics, keys and values byte for byte, Debezium's JSON envelope with
schemas as JsonConverter writes it) with nothing but psycopg2, orjson and confluent-kafka on
its hot path, as a careful hand-written program would: the schema JSON of each table's key and
envelope is a constant it is given (here taken from the connector's own first record of each
topic, as one would paste it from Debezium's output), and each column's conversion is decided
once per relation from that schema.

The envelope's processing time (``ts_ms``/``ts_us``/``ts_ns`` at its end) is this reader's own;
everything else equals the connector's record for the same change, given the same topic
prefix length (``bench_cdc.py`` checks it record by record).
"""

from __future__ import annotations

import select
import struct
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import orjson
import psycopg2
import psycopg2.extras
from cdc_hand_reader import PUBLICATION, TABLES
from confluent_kafka import Producer

from sparkcat.kafka import clients

_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_BEGIN = struct.Struct(">QqI")  # final LSN, commit time, xid
_COMMIT_END = struct.Struct(">Q")  # at byte 10, after flags and commit LSN
_PG_EPOCH_US = 946_684_800_000_000
_EPOCH = datetime(1970, 1, 1)


def _micro_timestamp(text: str) -> int:
    """``timestamp`` text → ``io.debezium.time.MicroTimestamp`` (µs since the epoch)."""
    delta = datetime.fromisoformat(text) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _converter(field: Mapping[str, Any]) -> Callable[[str], Any]:
    """A column's text → its JSON value, from its field in the schema JSON (the types
    ``pgbench``'s tables use)."""
    if field.get("name") == "io.debezium.time.MicroTimestamp":
        return _micro_timestamp
    if field["type"] in ("int16", "int32", "int64"):
        return int
    if field["type"] == "string":
        return str
    raise ValueError(f"no conversion for {field}")


class TableFormat:
    """One table's constants: topic, the key's and envelope's JSON around their payloads,
    the columns' conversions and the ``source`` block's fixed values."""

    def __init__(self, topic: str, key: bytes, value: bytes) -> None:
        key_message, value_message = orjson.loads(key), orjson.loads(value)
        self.topic = topic
        self.key_prefix = b'{"schema":' + orjson.dumps(key_message["schema"]) + b',"payload":'
        schema = value_message["schema"]
        self.value_prefix = b'{"schema":' + orjson.dumps(schema) + b',"payload":'
        row_fields = schema["fields"][1]["fields"]  # the "after" struct
        self.columns = {f["field"]: _converter(f) for f in row_fields}
        self.row_names = [f["field"] for f in row_fields]
        self.key_names = [f["field"] for f in key_message["schema"]["fields"]]
        source = value_message["payload"]["source"]
        self.version, self.connector = source["version"], source["connector"]
        self.db, self.schema, self.table = source["db"], source["schema"], source["table"]


class SameBytesReader:
    """One replication connection; the connector's key and value bytes per change."""

    def __init__(
        self,
        server: Any,
        dbname: str,
        servers: str,
        slot: str,
        samples: Mapping[str, tuple[bytes, bytes]],
        worker: Mapping[str, str] | None = None,
    ) -> None:
        """``samples``: per table of :data:`TABLES`, one key and value the connector wrote
        (their schema JSON is what this reader writes). Topics are ``<prefix>.public.<table>``
        with a prefix as long as the connector's, so records are the same size."""
        self.prefix = f"same{uuid.uuid4().hex[:7]}"
        self.dsn, self.slot, self.server, self.dbname = server.dsn(dbname), slot, server, dbname
        config = clients.producer_config({"bootstrap.servers": servers, **(worker or {})})
        self.producer = Producer(config)
        self.formats: dict[str, TableFormat] = {}
        for table, (key, value) in samples.items():
            old_prefix = orjson.loads(value)["payload"]["source"]["name"]
            key, value = (
                b.replace(old_prefix.encode(), self.prefix.encode()) for b in (key, value)
            )
            self.formats[table] = TableFormat(f"{self.prefix}.public.{table}", key, value)
        self.relations: dict[int, tuple[TableFormat, list[str]]] = {}
        self.records = 0
        self.stop = threading.Event()

    def topics(self) -> list[str]:
        return [f"{self.prefix}.public.{t}" for t in TABLES]

    def run(self, expected: int | None = None) -> None:
        (flushed,) = self.server.execute(
            "SELECT (confirmed_flush_lsn - '0/0')::bigint FROM pg_replication_slots "
            "WHERE slot_name = %s", (self.slot,), dbname=self.dbname,
        )[0]  # fmt: skip
        conn = psycopg2.connect(
            self.dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection
        )
        cursor = conn.cursor()
        cursor.start_replication(slot_name=self.slot, decode=False, options={
            "proto_version": "1", "publication_names": PUBLICATION})  # fmt: skip
        produce, poll = self.producer.produce, self.producer.poll
        # The stream position as Debezium's source block shows it.
        commit_lsn, tx_id, commit_us, last = int(flushed), 0, 0, 0
        try:
            while not self.stop.is_set() and (expected is None or self.records < expected):
                message = cursor.read_message()
                if message is None:
                    poll(0)
                    select.select([conn], [], [], 0.1)
                    continue
                data, last = message.payload, message.data_start
                tag = data[0]
                if tag == 0x42:  # B
                    _, commit_pg_us, tx_id = _BEGIN.unpack_from(data, 1)
                    commit_us = commit_pg_us + _PG_EPOCH_US
                elif tag == 0x43:  # C
                    commit_lsn = _COMMIT_END.unpack_from(data, 10)[0]
                elif tag == 0x52:  # R
                    self._relation(data)
                elif tag in (0x49, 0x55, 0x44):  # I, U, D
                    source = (commit_us, tx_id, f'["{commit_lsn}","{last}"]', last)
                    topic, key, value = self._change(data, tag, source)
                    try:
                        produce(topic, value, key)
                    except BufferError:
                        self._produce_when_room(topic, value, key)
                    self.records += 1
                    if tag == 0x44:  # D: Debezium's tombstone after a delete
                        self._produce_when_room(topic, None, key)
                        self.records += 1
                    if self.records % 1000 == 0:
                        poll(0)
            self.producer.flush(60)
            cursor.send_feedback(flush_lsn=last, force=True)
        finally:
            conn.close()

    def _produce_when_room(self, topic: str, value: bytes | None, key: bytes) -> None:
        # Records of ~3 KB fill librdkafka's queue (bounded in bytes) long before the
        # hand-written reader's 218 B ones do: wait for room as the connector's producer does.
        while True:
            try:
                self.producer.produce(topic, value, key)
                return
            except BufferError:
                self.producer.poll(0.05)

    def _relation(self, data: bytes) -> None:
        (relation_id,) = _U32.unpack_from(data, 1)
        namespace_end = data.index(b"\0", 5)
        name_end = data.index(b"\0", namespace_end + 1)
        name = data[namespace_end + 1 : name_end].decode()
        pos = name_end + 2  # after the replica identity
        (count,) = _I16.unpack_from(data, pos)
        pos += 2
        names = []
        for _ in range(count):
            column_end = data.index(b"\0", pos + 1)
            names.append(data[pos + 1 : column_end].decode())
            pos = column_end + 9  # type OID, modifier
        self.relations[relation_id] = (self.formats[name], names)

    def _row(
        self, table: TableFormat, names: list[str], data: bytes, pos: int
    ) -> tuple[dict[str, Any], int]:
        (count,) = _I16.unpack_from(data, pos)
        pos += 2
        row: dict[str, Any] = {}
        columns = table.columns
        for i in range(count):
            kind = data[pos]
            if kind == 0x74:  # t
                (length,) = _I32.unpack_from(data, pos + 1)
                name = names[i]
                row[name] = columns[name](data[pos + 5 : pos + 5 + length].decode())
                pos += 5 + length
            else:  # n (NULL); pgbench's tables have no TOASTed values
                row[names[i]] = None
                pos += 1
        return {name: row.get(name) for name in table.row_names}, pos

    def _change(self, data: bytes, tag: int, source: tuple[int, int, str, int]) -> Any:
        table, names = self.relations[_U32.unpack_from(data, 1)[0]]
        before: dict[str, Any] | None = None
        after: dict[str, Any] | None = None
        pos = 5
        if data[pos] in (0x4B, 0x4F):  # K, O: the old key or row
            before, pos = self._row(table, names, data, pos + 1)
        if tag != 0x44:
            after, _ = self._row(table, names, data, pos + 1)
        row = after if after is not None else before
        assert row is not None  # a change has an old or a new tuple
        key = table.key_prefix + orjson.dumps({k: row[k] for k in table.key_names}) + b"}"
        commit_us, tx_id, sequence, lsn = source
        now_us = time.time_ns() // 1000
        payload = {
            "before": before,
            "after": after,
            "source": {
                "version": table.version, "connector": table.connector, "name": self.prefix,
                "ts_ms": commit_us // 1000, "snapshot": "false", "db": table.db,
                "sequence": sequence, "ts_us": commit_us, "ts_ns": commit_us * 1000,
                "schema": table.schema, "table": table.table, "txId": tx_id, "lsn": lsn,
                "xmin": None,
            },
            "transaction": None,
            "op": "c" if tag == 0x49 else "u" if tag == 0x55 else "d",
            "ts_ms": now_us // 1000,
            "ts_us": now_us,
            "ts_ns": now_us * 1000,
        }  # fmt: skip
        return table.topic, key, table.value_prefix + orjson.dumps(payload) + b"}"
