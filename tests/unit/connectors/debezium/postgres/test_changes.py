"""The one-pass change path gives the records the general decoder gives, message for message,
and hands what it does not handle (unchanged TOAST, a changed key) to the general path."""

from __future__ import annotations

import decimal
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.pgoutput_bytes import s, tuple_data

from sparkcat.api.batch import SourceRecordBatch, SourceRun
from sparkcat.api.data import Struct
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import EventSettings
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.postgres import changes, database, values
from sparkcat.connectors.debezium.postgres.database import TableShape
from sparkcat.connectors.debezium.postgres.offsets import StreamPosition
from sparkcat.connectors.debezium.postgres.pgoutput import UNCHANGED_TOAST
from sparkcat.connectors.debezium.postgres.stream import StreamReader
from sparkcat.connectors.debezium.postgres.tables import SchemaSettings, Tables
from sparkcat.connectors.debezium.types import TypeModes

# (name, type OID, modifier, nullable, key)
COLUMNS = [
    ("id", values.INT4, -1, False, True),
    ("name", values.TEXT, -1, False, False),
    ("price", values.NUMERIC, (10 << 16 | 2) + 4, True, False),
    ("seen", values.TIMESTAMP, 3, True, False),
    ("flag", values.BOOL, -1, True, False),
    ("ratio", values.FLOAT8, -1, True, False),
    ("big", values.INT8, -1, True, False),
]


class FixedTables(Tables):
    """Tables whose shape is given rather than read from a database."""

    def __init__(self, settings: SchemaSettings, shape: TableShape) -> None:
        super().__init__(None, settings)
        self.shape = shape

    def _build(self, schema: str, table: str) -> Any:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(database, "table_shape", lambda *_: self.shape)
            return super()._build(schema, table)


class Message:
    def __init__(self, lsn: int, payload: bytes) -> None:
        self.data_start, self.payload = lsn, payload


class Cursor:
    def __init__(self, messages: list[Message]) -> None:
        self.messages: Iterator[Message] = iter(messages)
        self.connection = None

    def read_message(self) -> Message | None:
        return next(self.messages, None)


def relation() -> bytes:
    out = b"R" + struct.pack(">I", 7) + s("public") + s("t") + b"d" + struct.pack(">h", 7)
    for name, oid, modifier, _, key in COLUMNS:
        out += bytes([1 if key else 0]) + s(name) + struct.pack(">Ii", oid, modifier)
    return out


ROW = (1, "ann", "1.50", "2024-01-02 03:04:05.123", "t", "0.25", 2**40)
CHANGES = {
    "insert": b"I" + struct.pack(">I", 7) + b"N" + tuple_data(*ROW),
    "insert-nulls": b"I" + struct.pack(">I", 7) + b"N" + tuple_data(2, "é", *[None] * 5),
    "update": b"U" + struct.pack(">I", 7) + b"N" + tuple_data(1, "bo", "2", None, "f", "-1e-9", 0),
    "update-full-old": b"U" + struct.pack(">I", 7) + b"O" + tuple_data(*ROW) + b"N"
    + tuple_data(1, "b", None, None, None, None, None),
    "update-key-old": b"U" + struct.pack(">I", 7) + b"K" + tuple_data(1, *[None] * 6) + b"N"
    + tuple_data(*ROW),
    "delete-key": b"D" + struct.pack(">I", 7) + b"K" + tuple_data(1, *[None] * 6),
    "delete-full": b"D" + struct.pack(">I", 7) + b"O" + tuple_data(*ROW),
    # Handed to the general path: a changed key, an unchanged TOASTed column.
    "key-change": b"U" + struct.pack(">I", 7) + b"K" + tuple_data(1, *[None] * 6) + b"N"
    + tuple_data(9, *ROW[1:]),
    "toast": b"U" + struct.pack(">I", 7) + b"N" + tuple_data(1, UNCHANGED_TOAST, *[None] * 5),
}  # fmt: skip


def stream_reader(payloads: list[bytes]) -> StreamReader:
    """A reader of one transaction of ``payloads`` on the relation ``COLUMNS``."""
    shape = TableShape(
        tuple(values.column(n, oid, mod, nullable) for n, oid, mod, nullable, _ in COLUMNS),
        ("id",),
    )
    settings = SchemaSettings("srv", ".", "db", TypeModes(), KeyColumns.parse(""),
                              NameFilter.of("", ""), 2)  # fmt: skip
    begin = b"B" + struct.pack(">QqI", 500, 1_000_000, 42)
    commit = b"C" + struct.pack(">BQQq", 0, 500, 510, 1_000_000)
    messages = [Message(0, relation()), Message(0, begin)]
    messages += [Message(400 + i, p) for i, p in enumerate(payloads)]
    messages.append(Message(510, commit))
    return StreamReader(
        Cursor(messages), FixedTables(settings, shape), lambda *_: True, EventSettings(),
        {"server": "srv"}, StreamPosition(lsn=100, lsn_proc=100, lsn_commit=100), None,
    )  # fmt: skip


def read(payloads: list[bytes], one_pass: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    if not one_pass:
        monkeypatch.setattr(changes.ChangePlan, "change", lambda *_: False)
    records = stream_reader(payloads).read(1000, 0).batch()
    monkeypatch.undo()
    return [comparable(r) for r in records]


def comparable(record: SourceRecord) -> Any:
    value = record.value
    if isinstance(value, Struct):  # the envelope's ts_* say when it was processed
        value = (value.schema, value.values[:5])
    return (record.source_partition, record.source_offset, record.topic, record.key_schema,
            record.key, record.value_schema, value, list(record.headers))  # fmt: skip


@pytest.mark.parametrize("name", list(CHANGES))
def test_one_pass_equals_the_general_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = read([CHANGES[name]], False, monkeypatch)
    assert read([CHANGES[name]], True, monkeypatch) == expected
    assert expected  # every change gave at least one record


def test_a_transaction_of_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = list(CHANGES.values())
    records = read(payloads, True, monkeypatch)
    assert records == read(payloads, False, monkeypatch)
    _, offset, topic, _, key, _, (_, after), _ = records[0]
    assert topic == "srv.public.t" and key.values == [1]
    assert offset == {"ts_usec": 1_000_000 + 946_684_800_000_000, "txId": 42, "lsn": 400,
                      "lsn_proc": 400, "lsn_commit": 100}  # fmt: skip
    assert after[1].values[:4] == [1, "ann", decimal.Decimal("1.50"), 1704164645123]


def test_tuple_reader_converts_in_place() -> None:
    tables = FixedTables(
        SchemaSettings("srv", ".", "db", TypeModes(), KeyColumns.parse(""),
                       NameFilter.of("", ""), 2),
        TableShape(tuple(values.column(n, o, m, nl) for n, o, m, nl, _ in COLUMNS), ("id",)),
    )  # fmt: skip
    from sparkcat.connectors.debezium.postgres.pgoutput import decode

    rel = decode(relation())
    reader = changes.tuple_reader(tables.get("public", "t"), rel)  # type: ignore[arg-type]
    data = tuple_data(*ROW)
    row, key, end = reader(data, 0)  # type: ignore[misc]
    assert row[0] == 1 and row[4] is True and row[5] == 0.25 and row[6] == 2**40
    assert key == [1] and end == len(data)
    assert reader(tuple_data(1, UNCHANGED_TOAST, *[None] * 5), 0) is None


@pytest.mark.parametrize("name", list(CHANGES))
def test_which_changes_take_the_one_pass(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []
    original = changes.ChangePlan.change

    def spy(self: Any, *args: Any) -> bool:
        taken.append(original(self, *args))
        return taken[-1]

    monkeypatch.setattr(changes.ChangePlan, "change", spy)
    read([CHANGES[name]], True, pytest.MonkeyPatch())
    assert taken == [name not in ("key-change", "toast")]


def stream_batch(payloads: list[bytes]) -> Any:
    return stream_reader(payloads).read(1000, 0).batch()


def test_a_poll_of_changes_is_one_batch_with_a_run_and_an_offset_per_change() -> None:
    payloads = [CHANGES["insert"], CHANGES["update"], CHANGES["delete-key"]]
    batch = stream_batch(payloads)
    assert isinstance(batch, SourceRecordBatch)
    assert len(batch) == 4  # the delete's tombstone too
    assert batch.topics == ["srv.public.t"] * 4
    assert batch.value_schema_column()[3] is None and batch.values[3] is None
    (run,) = batch.runs
    offsets: list[Any] = [r.source_offset for r in batch]
    assert run == SourceRun({"server": "srv"}, offsets[-1], 4)
    assert [o["lsn"] for o in offsets] == [400, 401, 402, 402]


def test_a_change_with_headers_makes_the_poll_a_list() -> None:
    records = stream_batch([CHANGES["insert"], CHANGES["key-change"]])
    assert isinstance(records, list)
    assert [r.headers for r in records][1:] and any(len(r.headers) for r in records)


def test_runs_split_by_source_partition() -> None:
    columns = changes.ChangeColumns()
    for partition, offset in (({"s": 1}, {"o": 1}), ({"s": 1}, {"o": 2}), ({"s": 2}, {"o": 3})):
        columns.add(partition, offset, "t", None, None, None, "v")
    batch = columns.batch()
    assert isinstance(batch, SourceRecordBatch)
    assert batch.runs == (SourceRun({"s": 1}, {"o": 2}, 2), SourceRun({"s": 2}, {"o": 3}, 1))
