"""Envelopes, keys, schema names, tombstones, key changes and skipped operations."""

from __future__ import annotations

from sparkcat.api.data import Type
from sparkcat.connectors.debezium.envelope import (
    NEW_KEY_HEADER,
    OLD_KEY_HEADER,
    EventSettings,
    Position,
    change_events,
    read_event,
    truncate_event,
)
from sparkcat.connectors.debezium.schemas import TableSchema, source_schema, source_struct
from sparkcat.connectors.debezium.types import Column, TypeModes

SOURCE = source_schema("io.debezium.connector.postgresql.Source", [])
COLUMNS = [Column("id", "int32", False), Column("name", "string", False),
           Column("note", "string", True)]  # fmt: skip


def table(key: tuple[str, ...] = ("id",)) -> TableSchema:
    return TableSchema("srv.public.t", COLUMNS, key, TypeModes(), SOURCE)


def position() -> Position:
    fields = {"version": "v", "connector": "postgresql", "name": "srv", "ts_us": 1_500_000,
              "snapshot": "false", "db": "d"}  # fmt: skip
    source = source_struct(SOURCE, fields)
    return Position({"server": "srv"}, {"lsn": 1}, source)


def test_schema_names_and_envelope_field_order() -> None:
    t = table()
    assert t.key_schema is not None and t.key_schema.name == "srv.public.t.Key"
    assert t.value_schema.name == "srv.public.t.Value"
    envelope = t.envelope_schema
    assert (envelope.name, envelope.version) == ("srv.public.t.Envelope", 2)
    assert [f.name for f in envelope.fields] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]  # fmt: skip
    assert envelope.field("op").schema.type is Type.STRING  # type: ignore[union-attr]
    assert [f.name for f in SOURCE.fields] == [
        "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us",
        "ts_ns"]  # fmt: skip
    snapshot = SOURCE.field("snapshot").schema  # type: ignore[union-attr]
    assert (snapshot.name, snapshot.default_value) == ("io.debezium.data.Enum", "false")


def test_read_create_update() -> None:
    t, settings = table(), EventSettings()
    read = read_event(t, position(), {"id": 1, "name": "a", "note": None})
    assert read.value.get("op") == "r" and read.key.get("id") == 1
    assert read.value.get("source").get("ts_ms") == 1500
    (create,) = change_events(t, settings, position(), "c", None, {"id": 2, "name": "b"})
    assert (create.value.get("op"), create.value.get("before")) == ("c", None)
    (update,) = change_events(t, settings, position(), "u", None, {"id": 2, "name": "c"})
    assert update.value.get("after").get("name") == "c" and update.topic == "srv.public.t"


def test_delete_then_tombstone_with_key_only_before() -> None:
    records = change_events(table(), EventSettings(), position(), "d", {"id": 3}, None)
    delete, tombstone = records
    assert delete.value.get("op") == "d"
    # The required column the key-only old row lacks gets its type's empty value.
    assert delete.value.get("before").get("name") == ""
    assert (tombstone.key, tombstone.value, tombstone.value_schema) == (delete.key, None, None)
    no_tombstones = EventSettings(tombstones_on_delete=False)
    assert len(change_events(table(), no_tombstones, position(), "d", {"id": 3}, None)) == 1


def test_key_change_is_delete_tombstone_create() -> None:
    records = change_events(table(), EventSettings(), position(), "u",
                            {"id": 1, "name": "x"}, {"id": 9, "name": "x"})  # fmt: skip
    assert [r.value and r.value.get("op") for r in records] == ["d", None, "c"]
    assert records[0].headers.last_with_name(NEW_KEY_HEADER).value.get("id") == 9
    assert records[2].headers.last_with_name(OLD_KEY_HEADER).value.get("id") == 1


def test_skipped_operations_and_truncate() -> None:
    settings = EventSettings(skipped_operations=frozenset({"u", "t"}))
    assert change_events(table(), settings, position(), "u", None, {"id": 1, "name": "a"}) == []
    assert truncate_event(table(), settings, position()) == []
    (truncate,) = truncate_event(table(), EventSettings(skipped_operations=frozenset()), position())
    assert (truncate.key, truncate.value.get("op")) == (None, "t")


def test_table_without_key_has_null_key() -> None:
    t = table(key=())
    assert t.key_schema is None
    (create,) = change_events(t, EventSettings(), position(), "c", None, {"id": 1, "name": "a"})
    assert create.key is None
