"""JsonConverter decoding of enveloped messages whose schema holds a Decimal, against plain
``orjson.loads`` of the same message bytes, measured in one run.

    python bench/bench_json_decimal.py [--records N]

A 5-field struct (int64, string, Decimal(scale 2), boolean, optional string) is serialized
with ``decimal.format`` NUMERIC and BASE64 and decoded with ``to_connect_data``. The baseline
and the converter are timed in alternating chunks of 1,000 messages, so that a shared
machine's load hits both alike. Prints one ratio (converter rate / orjson rate) per format.
"""

from __future__ import annotations

import argparse
import decimal
import sys
import time

import orjson

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Decimal,
    SchemaBuilder,
    Struct,
)
from sparkcat.converters.json import JsonConverter

SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.Order")
    .field("id", INT64_SCHEMA)
    .field("name", STRING_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("active", BOOLEAN_SCHEMA)
    .field("note", OPTIONAL_STRING_SCHEMA)
    .build()
)
DISTINCT = 1000


def _messages(converter: JsonConverter) -> list[bytes]:
    out = []
    for i in range(DISTINCT):
        struct = Struct(SCHEMA)
        struct.put("id", 1_000_000 + i).put("name", f"user-{i}")
        struct.put("amount", decimal.Decimal(i * 7919).scaleb(-2)).put("active", i % 2 == 0)
        struct.put("note", None if i % 3 else f"note {i}")
        data = converter.from_connect_data("t", SCHEMA, struct)
        assert data is not None
        out.append(data)
    return out


def run(n: int, fmt: str) -> tuple[float, float]:
    converter = JsonConverter()
    converter.configure({"decimal.format": fmt}, False)
    messages = _messages(converter)
    decode, parse = converter.to_connect_data, orjson.loads
    case = base = 0.0
    for _ in range(max(1, n // DISTINCT)):
        start = time.perf_counter()
        for data in messages:
            parse(data)
        base += time.perf_counter() - start
        start = time.perf_counter()
        for data in messages:
            decode("t", data)
        case += time.perf_counter() - start
    done = max(1, n // DISTINCT) * DISTINCT
    return done / case, done / base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    print("| decimal.format | records/s | orjson baseline records/s | ratio |")
    print("|---|---:|---:|---:|")
    for fmt in ("NUMERIC", "BASE64"):
        rate, base = run(args.records, fmt)
        print(f"| {fmt} | {rate:,.0f} | {base:,.0f} | {rate / base:.2f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
