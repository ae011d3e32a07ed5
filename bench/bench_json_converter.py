"""JsonConverter throughput against plain orjson on the same payloads, measured in one run.

    python bench/bench_json_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) is converted both ways,
with and without schemas (``schemas.enable=false`` with the same Struct, and schemaless dicts
with ``schema=None``). The baseline is ``orjson.dumps``/``orjson.loads`` of the equivalent
payload dicts (bytes), timed in alternating chunks of 1,000 records with each case, so that a
shared machine's load hits both alike. Converter methods are called directly from the loop, as
the runtime pipeline calls them. Results are printed and appended to ``bench/RESULTS.md``
(``## JsonConverter``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
)
from sparkcat.converters.json import JsonConverter

SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.Record")
    .field("id", INT64_SCHEMA)
    .field("name", STRING_SCHEMA)
    .field("score", FLOAT64_SCHEMA)
    .field("active", BOOLEAN_SCHEMA)
    .field("note", OPTIONAL_STRING_SCHEMA)
    .build()
)
DISTINCT = 1000  # distinct records cycled through (keeps memory flat for large N)


def _payloads() -> list[dict[str, object]]:
    return [
        {
            "id": 1_000_000 + i,
            "name": f"user-{i}",
            "score": i * 0.25 + 0.5,
            "active": i % 2 == 0,
            "note": None if i % 3 else f"note {i}",
        }
        for i in range(DISTINCT)
    ]


def _struct(payload: dict[str, object]) -> Struct:
    struct = Struct(SCHEMA)
    for name, value in payload.items():
        struct.put(name, value)
    return struct


def _chunk1(fn: Callable[[Any], object], items: list[Any]) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return time.perf_counter() - start


def _chunk2(fn: Callable[[str, Any], object], items: list[Any]) -> float:
    start = time.perf_counter()
    for item in items:
        fn("t", item)
    return time.perf_counter() - start


def _chunk3(fn: Callable[..., object], items: list[Any]) -> float:
    schema = items[0].schema if isinstance(items[0], Struct) else None
    start = time.perf_counter()
    for item in items:
        fn("t", schema, item)
    return time.perf_counter() - start


def _rates(
    n: int,
    case: tuple[Any, Callable[..., Any], list[Any]],
    base: tuple[Callable[..., Any], list[Any]],
) -> tuple[float, float]:
    """Records per second of a converter case and of its orjson baseline, ``n`` records each.

    The two are timed in alternating chunks of ``DISTINCT`` records, so that a shared machine's
    changing load hits both alike; the rates are total records over total time. Both loops call
    the function directly, as the runtime pipeline does (no lambda in between).
    """
    chunk, fn, items = case
    base_fn, base_items = base
    case_time = base_time = 0.0
    for _ in range(max(1, n // len(items))):
        base_time += _chunk1(base_fn, base_items)
        case_time += chunk(fn, items)
    done = max(1, n // len(items)) * len(items)
    return done / case_time, done / base_time


def _converter(schemas_enable: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": str(schemas_enable).lower()}, False)
    return converter


def run(n: int) -> list[tuple[str, float, float]]:
    payloads = _payloads()
    structs = [_struct(p) for p in payloads]
    encoded = [orjson.dumps(p) for p in payloads]

    with_schema, without_schema = _converter(True), _converter(False)
    enveloped = [with_schema.from_connect_data("t", SCHEMA, s) for s in structs]
    plain = [without_schema.from_connect_data("t", SCHEMA, s) for s in structs]
    schemaless = [without_schema.from_connect_data("t", None, p) for p in payloads]
    assert [orjson.loads(b) for b in plain] == payloads, "payload bytes differ from orjson"
    assert plain == schemaless == encoded
    assert [with_schema.to_connect_data("t", b).value for b in enveloped] == structs

    dumps, loads = (orjson.dumps, payloads), (orjson.loads, encoded)
    cases: list[tuple[str, tuple[Any, Callable[..., Any], list[Any]], Any]] = [
        (
            "from_connect_data, schemas.enable=true (Struct)",
            (_chunk3, with_schema.from_connect_data, structs),
            dumps,
        ),
        (
            "from_connect_data, schemas.enable=false (Struct)",
            (_chunk3, without_schema.from_connect_data, structs),
            dumps,
        ),
        (
            "from_connect_data, schemaless dict",
            (_chunk3, without_schema.from_connect_data, payloads),
            dumps,
        ),
        (
            "to_connect_data, schemas.enable=true (-> Struct)",
            (_chunk2, with_schema.to_connect_data, enveloped),
            loads,
        ),
        (
            "to_connect_data, schemas.enable=false (-> dict)",
            (_chunk2, without_schema.to_connect_data, plain),
            loads,
        ),
    ]
    results = []
    for name, case, base in cases:
        rate, base_rate = _rates(n, case, base)
        results.append((name, rate, base_rate))
        print(f"{name}: {rate / base_rate:.2f}", file=sys.stderr)
    return results


def _report(n: int, results: list[tuple[str, float, float]], append: bool) -> None:
    lines = [
        f"### {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {n:,} records, "
        f"Python {platform.python_version()}, orjson {orjson.__version__}, "
        f"load average before {_LOAD_BEFORE}, after {_load()}",
        "",
        "| case | records/s | orjson baseline records/s | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, rate, base in results:
        lines.append(f"| {name} | {rate:,.0f} | {base:,.0f} | {rate / base:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not append:
        return
    path = Path(__file__).with_name("RESULTS.md")
    existing = path.read_text() if path.exists() else "# Benchmark results\n"
    if "## JsonConverter" not in existing:
        existing = existing.rstrip("\n") + (
            "\n\n## JsonConverter\n\n`python bench/bench_json_converter.py`: JsonConverter vs "
            "plain `orjson.dumps`/`orjson.loads` of the same payload dicts (5-field struct). "
            "Target ratio >= 0.5.\n"
        )
    head, _, tail = existing.partition("## JsonConverter")
    section, sep, rest = tail.partition("\n## ")
    updated = head + "## JsonConverter" + section.rstrip("\n") + "\n\n" + text
    if sep:
        updated += "\n## " + rest
    path.write_text(updated)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


_LOAD_BEFORE = _load()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--no-append", action="store_true", help="do not write RESULTS.md")
    args = parser.parse_args()
    _report(args.records, run(args.records), not args.no_append)


if __name__ == "__main__":
    main()
