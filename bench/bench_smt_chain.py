"""Throughput of a 3-SMT chain over schema'd SourceRecords, against a rebuild-only baseline.

Chain: InsertField$Value (static field) → ReplaceField$Value (rename + exclude) →
MaskField$Value. Baseline, measured in the same run: ``new_record`` with a copied Struct (the
minimum any value-changing SMT pays), timed in alternating chunks of 1,000 records with the
chain. Run: ``.venv/bin/python bench/bench_smt_chain.py [N]``.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Any

from sparkcat.api.data import SchemaBuilder, Struct
from sparkcat.api.records import SourceRecord
from sparkcat.runtime.transformation_chain import TransformationChain
from sparkcat.transforms.insert_field import InsertField
from sparkcat.transforms.mask_field import MaskField
from sparkcat.transforms.replace_field import ReplaceField

T = "org.apache.kafka.connect.transforms."
CLASSES = {
    T + "InsertField$Value": InsertField.Value,
    T + "ReplaceField$Value": ReplaceField.Value,
    T + "MaskField$Value": MaskField.Value,
}
PROPS = {
    "transforms": "insert,replace,mask",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.static.field": "source",
    "transforms.insert.static.value": "bench",
    "transforms.replace.type": T + "ReplaceField$Value",
    "transforms.replace.renames": "name:full_name",
    "transforms.replace.exclude": "score",
    "transforms.mask.type": T + "MaskField$Value",
    "transforms.mask.fields": "email",
}
SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.User")
    .field("id", SchemaBuilder.int64().build())
    .field("name", SchemaBuilder.string().build())
    .field("email", SchemaBuilder.string().build())
    .field("age", SchemaBuilder.int32().optional().build())
    .field("score", SchemaBuilder.float64().build())
    .build()
)


CHUNK = 1000


def make_records(n: int) -> list[SourceRecord]:
    records = []
    for i in range(n):
        value = (
            Struct(SCHEMA).put("id", i).put("name", f"user{i}").put("email", f"u{i}@x.io")
            .put("age", i % 90).put("score", i * 0.5)
        )  # fmt: skip
        records.append(SourceRecord({"f": "a"}, {"p": i}, "users", 0, None, None, SCHEMA, value, i))
    return records


def baseline(records: list[SourceRecord]) -> None:
    fields = SCHEMA.fields
    for r in records:
        copy = Struct(SCHEMA)
        old = r.value
        for f in fields:
            copy.put(f, old.get(f))
        r.new_record(r.topic, r.kafka_partition, r.key_schema, r.key, SCHEMA, copy, r.timestamp)


def run_chain(chain: TransformationChain, records: list[SourceRecord]) -> Any:
    apply = chain.apply
    last = None
    for r in records:
        last = apply(r)
    return last


def timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    records = make_records(n)
    # The input list stays alive for the whole run (a real batch does not): keep the collector
    # from rescanning it on every generation-2 pass, which would dominate both measurements.
    gc.collect()
    gc.freeze()
    chain = TransformationChain.from_config(PROPS, lambda name, kind: CLASSES[name])
    out = run_chain(chain, records[:1])
    assert [f.name for f in out.value_schema.fields] == [
        "id", "full_name", "email", "age", "source",
    ], out.value_schema  # fmt: skip
    assert out.value.get("email") == ""
    # Alternating chunks, so that a shared machine's changing load hits both alike.
    base = smt = 0.0
    for start in range(0, n, CHUNK):
        chunk = records[start : start + CHUNK]
        base += timed(baseline, chunk)
        smt += timed(run_chain, chain, chunk)
    print(f"records: {n:,} schema'd SourceRecords, 5-field struct")
    print(f"baseline (new_record + copied Struct): {n / base:,.0f} records/s ({base:.2f} s)")
    print(f"3-SMT chain (InsertField, ReplaceField, MaskField): {n / smt:,.0f} records/s "
          f"({smt:.2f} s)")  # fmt: skip
    print(f"chain / baseline time: {smt / base:.2f}x (≈{smt / base / 3:.2f}x per SMT)")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
