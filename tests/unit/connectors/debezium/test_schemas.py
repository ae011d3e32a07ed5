"""TableSchema.shared: the same table described twice in one process (two leases) gets the
same schema objects, which converters' schema caches find by identity."""

from __future__ import annotations

from sparkcat.connectors.debezium.schemas import TableSchema, source_schema
from sparkcat.connectors.debezium.types import Column, TypeModes

SOURCE = source_schema("io.debezium.connector.postgresql.Source", [])


def columns(note_optional: bool = True) -> list[Column]:
    return [Column("id", "int32", False), Column("note", "string", note_optional)]


def test_same_description_same_objects() -> None:
    first = TableSchema.shared("srv.public.t", columns(), ["id"], TypeModes(), SOURCE)
    second = TableSchema.shared("srv.public.t", columns(), ("id",), TypeModes(), SOURCE)
    assert second is first
    assert second.envelope_schema is first.envelope_schema


def test_another_description_other_schemas() -> None:
    base = TableSchema.shared("srv.public.t", columns(), ["id"], TypeModes(), SOURCE)
    altered = TableSchema.shared("srv.public.t", columns(False), ["id"], TypeModes(), SOURCE)
    string_decimals = TableSchema.shared(
        "srv.public.t", columns(), ["id"], TypeModes(decimal="string"), SOURCE
    )
    narrowed = TableSchema.shared("srv.public.t", columns(), ["id"], TypeModes(), SOURCE, ["id"])
    assert len({id(t) for t in (base, altered, string_decimals, narrowed)}) == 4
    assert altered.value_schema != base.value_schema
    assert narrowed.value_fields == ("id",)
