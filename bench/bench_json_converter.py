"""JsonConverter throughput against plain orjson on the same payloads, measured in one run.

    python bench/bench_json_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) is converted both ways,
with and without schemas (``schemas.enable=false`` with the same Struct, and schemaless dicts
with ``schema=None``). The baseline is ``orjson.dumps``/``orjson.loads`` of the equivalent
payload dicts. Results are printed and appended to ``bench/RESULTS.md`` (``## JsonConverter``).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time
from collections.abc import Callable
from pathlib import Path

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


def _rate(n: int, items: list[object], fn: Callable[[object], object]) -> float:
    """Records per second of ``fn`` over ``n`` calls cycling through ``items`` (best of 3)."""
    rounds, rest = divmod(n, len(items))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            for item in items:
                fn(item)
        for item in items[:rest]:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return n / best


def _converter(schemas_enable: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": str(schemas_enable).lower()}, False)
    return converter


def run(n: int) -> list[tuple[str, float, float]]:
    payloads = _payloads()
    structs = [_struct(p) for p in payloads]
    encoded = [orjson.dumps(p) for p in payloads]
    base_dumps = _rate(n, payloads, orjson.dumps)  # type: ignore[arg-type]
    base_loads = _rate(n, encoded, orjson.loads)  # type: ignore[arg-type]

    with_schema, without_schema = _converter(True), _converter(False)
    enveloped = [with_schema.from_connect_data("t", SCHEMA, s) for s in structs]
    plain = [without_schema.from_connect_data("t", SCHEMA, s) for s in structs]
    schemaless = [without_schema.from_connect_data("t", None, p) for p in payloads]
    assert [orjson.loads(b) for b in plain] == payloads, "payload bytes differ from orjson"
    assert plain == schemaless == encoded

    results = [
        (
            "from_connect_data, schemas.enable=true (Struct)",
            _rate(n, structs, lambda s: with_schema.from_connect_data("t", SCHEMA, s)),
            base_dumps,
        ),
        (
            "from_connect_data, schemas.enable=false (Struct)",
            _rate(n, structs, lambda s: without_schema.from_connect_data("t", SCHEMA, s)),
            base_dumps,
        ),
        (
            "from_connect_data, schemaless dict",
            _rate(n, payloads, lambda p: without_schema.from_connect_data("t", None, p)),
            base_dumps,
        ),
        (
            "to_connect_data, schemas.enable=true (-> Struct)",
            _rate(n, enveloped, lambda b: with_schema.to_connect_data("t", b)),  # type: ignore[arg-type]
            base_loads,
        ),
        (
            "to_connect_data, schemas.enable=false (-> dict)",
            _rate(n, plain, lambda b: without_schema.to_connect_data("t", b)),  # type: ignore[arg-type]
            base_loads,
        ),
    ]
    return results


def _report(n: int, results: list[tuple[str, float, float]], append: bool) -> None:
    lines = [
        f"### {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {n:,} records, "
        f"Python {platform.python_version()}, orjson {orjson.__version__}",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--no-append", action="store_true", help="do not write RESULTS.md")
    args = parser.parse_args()
    _report(args.records, run(args.records), not args.no_append)


if __name__ == "__main__":
    main()
