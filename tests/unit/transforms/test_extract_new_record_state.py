from __future__ import annotations

from typing import Any

import pytest
from tests.support.cdc_envelopes import Table
from tests.unit.transforms.conftest import make_record

from sparkcat.api.data import Schema, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import Header, Headers
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.transforms.extract_new_record_state import ExtractNewRecordState

INT32 = SchemaBuilder.int32().build()
OPT_STRING = SchemaBuilder.string().optional().build()
OPT_INT32_DEFAULT = SchemaBuilder.int32().optional().default_value(7).build()
T = Table.of("dbserver1", "public", "customers",
             {"id": INT32, "name": OPT_STRING, "score": OPT_INT32_DEFAULT})  # fmt: skip


def unwrap(**config: str) -> ExtractNewRecordState:
    smt = ExtractNewRecordState()
    smt.configure(config)
    return smt


def record(kind: str, key: Struct | None, value: Struct | None, **kwargs: Any) -> Any:
    schema = None if value is None else value.schema
    return make_record(kind, T.key_schema, key, schema, value, topic=T.topic, **kwargs)


def event(kind: str, op: str, before: Any, after: Any, lsn: int = 100, **kwargs: Any) -> Any:
    key, value = T.event(op, before, after, lsn)
    return record(kind, key, value, **kwargs)


ROW1 = {"id": 1, "name": "Anne", "score": 3}
ROW1B = {"id": 1, "name": "Anne Marie", "score": None}


@pytest.mark.parametrize("op", ["c", "r", "u"])
def test_create_read_update_become_the_after_row(record_kind, apply, op) -> None:
    before = ROW1 if op == "u" else None
    original = event(record_kind, op, before, ROW1B)
    out = apply(unwrap(), original)
    assert out.value_schema is T.row_schema
    assert out.value == T.row(ROW1B)
    assert out.value.get_without_default("score") is None
    assert (out.topic, out.key, out.key_schema) == (T.topic, original.key, T.key_schema)
    assert (out.timestamp, out.headers) == (original.timestamp, original.headers)


# (mode config, delete result, tombstone kept): "null" is a null value with the row schema.
DELETE_CASES = [
    ({}, "null", False),
    ({"delete.tombstone.handling.mode": "drop"}, "dropped", False),
    ({"delete.tombstone.handling.mode": "tombstone"}, "null", False),
    ({"delete.tombstone.handling.mode": "rewrite"}, "rewritten", False),
    ({"delete.tombstone.handling.mode": "REWRITE-with-tombstone"}, "rewritten", True),
    ({"delete.tombstone.handling.mode": "delete-to-tombstone"}, "tombstone", False),
    ({"drop.tombstones": "true"}, "dropped", False),
    ({"delete.handling.mode": "drop", "drop.tombstones": "false"}, "dropped", True),
    ({"delete.handling.mode": "none"}, "null", False),
    ({"delete.handling.mode": "none", "drop.tombstones": "false"}, "null", True),
    ({"delete.handling.mode": "rewrite"}, "rewritten", False),
    ({"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, "rewritten", True),
    # the new key wins over the legacy ones
    ({"delete.tombstone.handling.mode": "drop", "delete.handling.mode": "rewrite",
      "drop.tombstones": "false"}, "dropped", False),
]  # fmt: skip


@pytest.mark.parametrize(("config", "delete", "tombstone_kept"), DELETE_CASES)
def test_deletes_and_tombstones_per_mode(record_kind, apply, config, delete, tombstone_kept):
    smt = unwrap(**config)
    deleted = apply(smt, event(record_kind, "d", ROW1, None))
    tombstone = record(record_kind, T.key(ROW1), None)
    if delete == "dropped":
        assert deleted is None
    elif delete == "null":
        assert (deleted.value_schema, deleted.value) == (T.row_schema, None)
    elif delete == "tombstone":
        assert (deleted.value_schema, deleted.value) == (None, None)
    else:
        assert deleted.value == _with_deleted(ROW1, "true")
    if delete != "dropped":
        assert (deleted.key, deleted.topic) == (T.key(ROW1), T.topic)
    kept = apply(smt, tombstone)
    assert (kept is tombstone) if tombstone_kept else (kept is None)
    rewrite = delete == "rewritten"
    created = apply(smt, event(record_kind, "c", None, ROW1))
    assert created.value == (_with_deleted(ROW1, "false") if rewrite else T.row(ROW1))


def _with_deleted(row: dict[str, Any], flag: str) -> Struct:
    schema = _deleted_schema()
    out = Struct(schema)
    for name, value in row.items():
        out.put(name, value)
    return out.put("__deleted", flag)


def _deleted_schema() -> Schema:
    # Kafka's InsertField copies name, version, doc and parameters: the row is no longer optional
    builder = SchemaBuilder.struct().name(T.row_schema.name or "")
    for field in T.row_schema.fields:
        builder.field(field.name, field.schema)
    return builder.field("__deleted", OPT_STRING).build()


def test_rewrite_replaces_null_with_default_unless_told_not_to(record_kind) -> None:
    original = event(record_kind, "u", ROW1, ROW1B)
    out = unwrap(**{"delete.tombstone.handling.mode": "rewrite"}).apply(original)
    assert out.value_schema == _deleted_schema()
    assert out.value.get_without_default("score") == 7
    raw = unwrap(**{"delete.tombstone.handling.mode": "rewrite",
                    "replace.null.with.default": "false"}).apply(original)  # fmt: skip
    assert raw.value.get_without_default("score") is None


def test_truncate_is_dropped(record_kind) -> None:
    truncate = T.envelope("t", None, None, 10)
    assert unwrap().apply(record(record_kind, None, truncate)) is None


def test_records_that_are_not_envelopes_pass_unchanged(record_kind) -> None:
    heartbeat_schema = (
        SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat")
        .field("ts_ms", SchemaBuilder.int64().build()).build()
    )  # fmt: skip
    heartbeat = make_record(record_kind, value_schema=heartbeat_schema,
                            value=Struct(heartbeat_schema).put("ts_ms", 5))  # fmt: skip
    # Debezium tells an envelope by its schema name: a schemaless envelope passes as it is.
    schemaless = make_record(record_kind, key={"id": 1},
                             value={"before": None, "after": {"id": 1}, "op": "c"})  # fmt: skip
    smt = unwrap(**{"add.fields": "op", "add.headers": "op"})
    for original in (heartbeat, schemaless):
        assert smt.apply(original) is original


def test_a_schemaless_tombstone_is_handled_as_a_tombstone(record_kind) -> None:
    tombstone = make_record(record_kind, key={"id": 1})
    assert unwrap().apply(tombstone) is None
    smt = unwrap(**{"delete.tombstone.handling.mode": "rewrite-with-tombstone",
                    "add.headers": "op,table"})  # fmt: skip
    kept = smt.apply(tombstone)
    assert list(kept.headers) == [Header("__op", OPT_STRING, "d")]
    assert (kept.key, kept.value) == ({"id": 1}, None)


def test_add_fields_from_the_envelope_source_and_transaction(record_kind, apply) -> None:
    key, value = T.event("u", ROW1, ROW1B, 4242)
    value = Struct(T.envelope_schema)
    for field in T.envelope_schema.fields:
        value.put(field, T.envelope("u", ROW1, ROW1B, 4242).get_without_default(field))
    value.put("transaction", T.transaction("571:4242", 3, 2))
    smt = unwrap(**{"add.fields": "op, table,lsn,source.ts_ms,ts_ms,id,snapshot:SNAP,nosuch"})
    out = apply(smt, record(record_kind, key, value))
    added = [(f.name, f.schema.optional) for f in out.value_schema.fields[3:]]
    assert added == [("__op", True), ("__table", True), ("__lsn", True),
                     ("__source_ts_ms", True), ("__ts_ms", True), ("__id", True),
                     ("__SNAP", True)]  # fmt: skip
    assert out.value_schema.name == T.row_schema.name
    snap = out.value_schema.field("__SNAP").schema
    assert (snap.name, snap.default_value) == ("io.debezium.data.Enum", None)
    got = {name: out.value.get_without_default(name) for name, _ in added}
    assert got == {"__op": "u", "__table": "customers", "__lsn": 4242,
                   "__source_ts_ms": 1_700_000_004_242, "__ts_ms": 1_700_000_004_742,
                   "__id": "571:4242", "__SNAP": "false"}  # fmt: skip
    assert out.value.get_without_default("score") is None  # copied without defaults


def test_add_fields_with_a_prefix_on_rewritten_deletes(record_kind) -> None:
    smt = unwrap(**{"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,lsn",
                    "add.fields.prefix": "cdc_"})  # fmt: skip
    out = smt.apply(event(record_kind, "d", ROW1, None, lsn=9))
    names = [f.name for f in out.value_schema.fields]
    assert names == ["id", "name", "score", "__deleted", "cdc_op", "cdc_lsn"]
    assert [out.value.get(n) for n in names[3:]] == ["true", "d", 9]
    # a delete that stays a null value gets no fields
    plain = unwrap(**{"add.fields": "op"}).apply(event(record_kind, "d", ROW1, None))
    assert (plain.value_schema, plain.value) == (T.row_schema, None)


def test_add_headers(record_kind) -> None:
    existing = [Header("trace", None, "x")]
    smt = unwrap(**{"add.headers": "op,db,source.ts_ms,nosuch,lsn:POS",
                    "add.headers.prefix": "dbz."})  # fmt: skip
    out = smt.apply(event(record_kind, "c", None, ROW1, lsn=5, headers=existing))
    assert [(h.key, h.value) for h in out.headers] == [
        ("trace", "x"), ("dbz.op", "c"), ("dbz.db", "inventory"),
        ("dbz.source_ts_ms", 1_700_000_000_005), ("dbz.POS", 5)]  # fmt: skip
    assert out.headers[1].schema == OPT_STRING
    assert out.headers[4].schema == SchemaBuilder.int64().optional().build()


def test_route_by_field(record_kind) -> None:
    smt = unwrap(**{"route.by.field": "name", "delete.tombstone.handling.mode": "rewrite"})
    assert smt.apply(event(record_kind, "c", None, ROW1)).topic == "Anne"
    assert smt.apply(event(record_kind, "d", ROW1B, None)).topic == "Anne Marie"
    blank = smt.apply(event(record_kind, "c", None, {"id": 2, "name": " "}))
    assert blank.topic == T.topic
    with pytest.raises(DataError, match="not of type STRING"):
        unwrap(**{"route.by.field": "id"}).apply(event(record_kind, "c", None, ROW1))


def test_drop_fields_named_by_a_header(record_kind) -> None:
    headers = [Header("drop", None, ["name", "id", "missing"])]
    smt = unwrap(**{"drop.fields.header.name": "drop", "drop.fields.from.key": "true"})
    out = smt.apply(event(record_kind, "c", None, ROW1, headers=headers))
    # only optional fields go by default: the schemas stay compatible
    assert [f.name for f in out.value_schema.fields] == ["id", "score"]
    assert [f.name for f in out.key_schema.fields] == ["id"]
    strict = unwrap(**{"drop.fields.header.name": "drop", "drop.fields.from.key": "true",
                       "drop.fields.keep.schema.compatible": "false"})  # fmt: skip
    out = strict.apply(event(record_kind, "c", None, ROW1, headers=headers))
    assert [f.name for f in out.value_schema.fields] == ["score"]
    assert out.key_schema.fields == ()
    untouched = smt.apply(event(record_kind, "c", None, ROW1, headers=[Header("drop", None, [])]))
    assert untouched.value == T.row(ROW1)


def test_bad_configs_are_rejected() -> None:
    with pytest.raises(ConfigError, match=r"delete\.tombstone\.handling\.mode"):
        unwrap(**{"delete.tombstone.handling.mode": "nope"})
    with pytest.raises(ConfigError, match=r"delete\.handling\.mode"):
        unwrap(**{"delete.handling.mode": "rewrite-with-tombstone"})


@pytest.mark.parametrize(
    "name", ["io.debezium.transforms.ExtractNewRecordState", "ExtractNewRecordState"]
)
def test_resolves_by_debezium_class_name_and_alias(name: str) -> None:
    assert PluginRegistry().resolve(name, "transformation") is ExtractNewRecordState


def test_headers_of_the_input_are_not_changed(record_kind) -> None:
    original = event(record_kind, "c", None, ROW1)
    unwrap(**{"add.headers": "op"}).apply(original)
    assert original.headers == Headers()
