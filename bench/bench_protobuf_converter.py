"""ProtobufConverter throughput against a hand-written protobuf loop, in one run.

    python bench/bench_protobuf_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) goes both ways through
``ProtobufConverter`` (Confluent wire format, schema registered once in the test suite's Schema
Registry server, started here on a loopback port). The baseline is a hand-written loop over the
same message class (upb's dynamic message built from the descriptor the converter registers):
``Record(**fields).SerializeToString()`` of the equivalent dict, and ``Record.FromString`` of
the payload with its five fields read into a dict: what a hand-written protobuf loop does,
without the Connect Struct, the header or the registry. Both are timed in alternating chunks of
1,000 records so that a shared machine's load hits both alike; the batch methods get the
same 1,000 records as one column. Results are printed and
appended to ``bench/RESULTS.md`` (``## ProtobufConverter``).
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

import google.protobuf

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
)
from sparkcat.converters.protobuf import ProtobufConverter
from sparkcat.converters.protobuf.converter import message_class
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
SECTION = "## ProtobufConverter"


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
    converter = ProtobufConverter()
    converter.configure({"schema.registry.url": url}, False)
    record = message_class(converter.protobuf_schema(SCHEMA), "bench.Record")
    messages = [converter.from_connect_data("t", SCHEMA, s) for s in structs]
    bodies = [record(**p).SerializeToString() for p in payloads]
    assert [m[6:] for m in messages if m] == bodies, "payload bytes differ from the hand loop's"
    decoded = [converter.to_connect_data("t", m) for m in messages]
    # proto3 without presence: a null optional string reads back as ""
    expected = [[v if v is not None else "" for v in s.values] for s in structs]
    assert [d.value.values for d in decoded] == expected

    encode = converter.from_connect_data
    decode = converter.to_connect_data
    parse = record.FromString

    def case_encode() -> None:
        for s in structs:
            encode("t", SCHEMA, s)

    def base_encode() -> None:
        for p in payloads:
            record(**p).SerializeToString()

    def case_decode() -> None:
        for m in messages:
            decode("t", m)

    encode_batch = converter.from_connect_data_batch
    decode_batch = converter.to_connect_data_batch
    assert encode_batch("t", SCHEMA, structs) == messages
    assert [v.values for v in decode_batch("t", messages).values] == expected

    def case_encode_batch() -> None:
        encode_batch("t", SCHEMA, structs)

    def case_decode_batch() -> None:
        decode_batch("t", messages)

    def base_decode() -> None:
        for b in bodies:
            m = parse(b)
            _ = {"id": m.id, "name": m.name, "score": m.score, "active": m.active, "note": m.note}

    results = []
    for name, case, base in (
        ("from_connect_data (Struct -> Confluent Protobuf bytes)", case_encode, base_encode),
        ("to_connect_data (Confluent Protobuf bytes -> Struct)", case_decode, base_decode),
        ("from_connect_data_batch (columns of 1,000)", case_encode_batch, base_encode),
        ("to_connect_data_batch (columns of 1,000)", case_decode_batch, base_decode),
    ):
        rate, base_rate = _rates(n, case, base)
        results.append((name, rate, base_rate))
        print(f"{name}: {rate / base_rate:.2f}", file=sys.stderr)
    return results


def _report(n: int, results: list[tuple[str, float, float]], append: bool) -> None:
    lines = [
        f"### {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {n:,} records, "
        f"Python {platform.python_version()}, protobuf {google.protobuf.__version__}, "
        f"load average before {_LOAD_BEFORE}, after {_load()}",
        "",
        "| case | records/s | hand-written loop records/s | ratio |",
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
    if SECTION not in existing:
        existing = existing.rstrip("\n") + (
            f"\n\n{SECTION}\n\n`python bench/bench_protobuf_converter.py`: ProtobufConverter "
            "(Struct <-> Confluent-format bytes) vs a hand-written loop over the same upb "
            "message class (`Record(**fields).SerializeToString()`, `Record.FromString` and "
            "five attribute reads) (5-field struct).\n"
        )
    head, _, tail = existing.partition(SECTION)
    section, sep, rest = tail.partition("\n## ")
    updated = head + SECTION + section.rstrip("\n") + "\n\n" + text
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
