"""AvroConverter throughput against fastavro's own schemaless writer/reader, in one run.

    python bench/bench_avro_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) goes both ways through
``AvroConverter`` (Confluent wire format, schema registered once in the test suite's Schema
Registry server, started here on a loopback port). The baseline is fastavro's
``schemaless_writer`` of the equivalent dict into a fresh ``BytesIO`` (``getvalue()``), and
``schemaless_reader`` of the payload into a dict, with the same parsed schema: what a
hand-written Avro loop does, without the Connect Struct, the header or the registry. Both are
timed in alternating chunks of 1,000 records so that a shared machine's load hits both alike.
Results are printed and appended to ``bench/RESULTS.md`` (``## AvroConverter``).
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import fastavro

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
)
from sparkcat.converters.avro import AvroConverter
from sparkcat.converters.avro.converter import parse_for_fastavro
from sparkcat.converters.schema_registry.client import close_clients

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
DISTINCT = 1000


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


def _timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _rates(n: int, case: Callable[[], None], base: Callable[[], None]) -> tuple[float, float]:
    case_time = base_time = 0.0
    rounds = max(1, n // DISTINCT)
    for _ in range(rounds):
        base_time += _timed(base)
        case_time += _timed(case)
    done = rounds * DISTINCT
    return done / case_time, done / base_time


def run(n: int, url: str) -> list[tuple[str, float, float]]:
    payloads = _payloads()
    structs = [Struct.from_values(SCHEMA, list(p.values())) for p in payloads]
    converter = AvroConverter()
    converter.configure({"schema.registry.url": url}, False)
    parsed = parse_for_fastavro(converter.avro_schema(SCHEMA))
    messages = [converter.from_connect_data("t", SCHEMA, s) for s in structs]
    assert all(m is not None for m in messages)

    def plain(payload: dict[str, object]) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, payload)
        return buffer.getvalue()

    bodies = [plain(p) for p in payloads]
    assert [m[5:] for m in messages if m] == bodies, "payload bytes differ from fastavro's"
    decoded = [converter.to_connect_data("t", m) for m in messages]
    assert [d.value.values for d in decoded] == [s.values for s in structs]

    encode = converter.from_connect_data
    decode = converter.to_connect_data
    writer, reader, bytes_io = fastavro.schemaless_writer, fastavro.schemaless_reader, io.BytesIO

    def case_encode() -> None:
        for s in structs:
            encode("t", SCHEMA, s)

    def base_encode() -> None:
        for p in payloads:
            buffer = bytes_io()
            writer(buffer, parsed, p)
            buffer.getvalue()

    def case_decode() -> None:
        for m in messages:
            decode("t", m)

    def base_decode() -> None:
        for b in bodies:
            reader(bytes_io(b), parsed, None)

    results = []
    for name, case, base in (
        ("from_connect_data (Struct -> Confluent Avro bytes)", case_encode, base_encode),
        ("to_connect_data (Confluent Avro bytes -> Struct)", case_decode, base_decode),
    ):
        rate, base_rate = _rates(n, case, base)
        results.append((name, rate, base_rate))
        print(f"{name}: {rate / base_rate:.2f}", file=sys.stderr)
    return results


def _report(n: int, results: list[tuple[str, float, float]], append: bool) -> None:
    lines = [
        f"### {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {n:,} records, "
        f"Python {platform.python_version()}, fastavro {fastavro.__version__}, "
        f"load average before {_LOAD_BEFORE}, after {_load()}",
        "",
        "| case | records/s | fastavro baseline records/s | ratio |",
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
    if "## AvroConverter" not in existing:
        existing = existing.rstrip("\n") + (
            "\n\n## AvroConverter\n\n`python bench/bench_avro_converter.py`: AvroConverter "
            "(Struct <-> Confluent-format bytes) vs fastavro's own `schemaless_writer`/"
            "`schemaless_reader` of the same dicts with the same parsed schema (5-field "
            "struct).\n"
        )
    head, _, tail = existing.partition("## AvroConverter")
    section, sep, rest = tail.partition("\n## ")
    updated = head + "## AvroConverter" + section.rstrip("\n") + "\n\n" + text
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
    # the test suite's registry server: run from a checkout, it is one directory up
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.support.schema_registry import SchemaRegistryServer

    server = SchemaRegistryServer().start()
    try:
        results = run(args.records, server.url)
    finally:
        close_clients()
        server.stop()
    _report(args.records, results, not args.no_append)


if __name__ == "__main__":
    main()
