"""The per-schema fast path of InsertField/ReplaceField/MaskField (``FieldCopy``):
results equal the field-by-field ``put`` semantics, including Kafka's errors and defaults."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.data import INT8_SCHEMA, INT32_SCHEMA, SchemaBuilder, Struct
from sparkcat.api.errors import DataError
from sparkcat.api.records import SourceRecord
from sparkcat.transforms.insert_field import InsertField
from sparkcat.transforms.mask_field import MaskField
from sparkcat.transforms.replace_field import ReplaceField

SCHEMA = (
    SchemaBuilder.struct()
    .field("id", INT32_SCHEMA)
    .field("level", SchemaBuilder.int8().default_value(7).build())
    .field("tags", SchemaBuilder.array(INT8_SCHEMA).optional().build())
    .field("name", SchemaBuilder.string().optional().build())
    .build()
)


def _record(struct: Struct) -> SourceRecord:
    return SourceRecord({}, {}, "t", 0, None, None, struct.schema, struct, 1)


def _smt(cls: Any, **configs: str) -> Any:
    smt = cls.Value()
    smt.configure(configs)
    return smt


SMTS = [
    lambda **c: _smt(InsertField, **{"static.field": "s", "static.value": "v", **c}),
    lambda **c: _smt(ReplaceField, **{"exclude": "name", "renames": "id:key", **c}),
    lambda **c: _smt(MaskField, **{"fields": "tags,name", **c}),
]


@pytest.mark.parametrize("make", SMTS)
def test_required_null_raises_kafkas_error(make: Any) -> None:
    struct = Struct(SCHEMA).put("name", "n")  # "id" is required and unset
    with pytest.raises(DataError, match=r'null used for required field: "(id|key)"'):
        make().apply(_record(struct))


@pytest.mark.parametrize("make", SMTS)
@pytest.mark.parametrize("replace", ["true", "false"])
def test_defaults_follow_replace_null_with_default(make: Any, replace: str) -> None:
    struct = Struct(SCHEMA).put("id", 1).put("name", "n")  # "level" unset, has a default
    smt = make(**{"replace.null.with.default": replace})
    if replace == "false":  # the null is copied as is: put() rejects it for a required field
        with pytest.raises(DataError, match='null used for required field: "level"'):
            smt.apply(_record(struct))
        return
    out = smt.apply(_record(struct)).value
    assert out.get_without_default("level") == 7
    out.validate()


def test_repeated_records_share_no_mutable_masked_value() -> None:
    mask = _smt(MaskField, fields="tags,name")
    structs = [Struct(SCHEMA).put("id", i).put("tags", [i]).put("name", f"n{i}") for i in range(3)]
    outs = [mask.apply(_record(s)).value for s in structs]
    assert [o.get("tags") for o in outs] == [[], [], []]
    assert [o.get("name") for o in outs] == ["", "", ""]
    outs[0].get("tags").append(1)
    assert outs[1].get("tags") == []
    assert [s.get("tags") for s in structs] == [[0], [1], [2]]  # inputs untouched


def test_unmaskable_value_raises_every_time() -> None:
    schema = SchemaBuilder.struct().field("data", SchemaBuilder.bytes().build()).build()
    mask = _smt(MaskField, fields="data")
    struct = Struct(schema).put("data", b"x")
    for _ in range(2):
        with pytest.raises(DataError, match="Cannot mask value of type: bytes"):
            mask.apply(_record(struct))


def test_outputs_equal_put_built_structs_across_schemas() -> None:
    insert = _smt(InsertField, **{"static.field": "s", "static.value": "v"})
    other = SchemaBuilder.struct().field("x", INT32_SCHEMA).build()
    for schema, values in (
        (SCHEMA, [1, 2, None, "n"]),
        (other, [5]),
        (SCHEMA, [3, 4, [1], None]),
    ):
        struct = Struct.from_values(schema, values)
        out = insert.apply(_record(struct)).value
        expected = Struct(out.schema)
        for field in schema.fields:
            expected.put(field.name, struct.get(field))
        expected.put("s", "v")
        assert out == expected
        assert [f.name for f in out.schema.fields] == [*(f.name for f in schema.fields), "s"]
