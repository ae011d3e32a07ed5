"""What the Schema Registry converter benchmarks share: the record, the alternating-chunk
timing, the registry server and the RESULTS.md section writer.

Each ``bench_<format>_converter.py`` supplies the cases (converter vs a hand-written loop of
its format's own library); this module runs them the same way so their ratios compare.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
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
"""Records per chunk; the same chunk is converted again and again."""

Result = tuple[str, float, float]
"""(case, records/s, baseline records/s)"""


def payloads() -> list[dict[str, object]]:
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


def measure(
    n: int, cases: Sequence[tuple[str, Callable[[], None], Callable[[], None]]]
) -> list[Result]:
    """Each ``(name, case, baseline)`` timed over ``n`` records in alternating chunks, so a
    shared machine's load hits both alike."""
    results = []
    for name, case, base in cases:
        case_time = base_time = 0.0
        rounds = max(1, n // DISTINCT)
        for _ in range(rounds):
            base_time += _timed(base)
            case_time += _timed(case)
        done = rounds * DISTINCT
        results.append((name, done / case_time, done / base_time))
        print(f"{name}: {base_time / case_time:.2f}", file=sys.stderr)
    return results


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


_LOAD_BEFORE = _load()


def report(n: int, results: list[Result], *, library: str, baseline: str) -> str:
    """The run's table, printed and returned."""
    lines = [
        f"### {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {n:,} records, "
        f"Python {platform.python_version()}, {library}, "
        f"load average before {_LOAD_BEFORE}, after {_load()}",
        "",
        f"| case | records/s | {baseline} records/s | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, rate, base in results:
        lines.append(f"| {name} | {rate:,.0f} | {base:,.0f} | {rate / base:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    return text


def append_results(text: str, section: str, intro: str) -> None:
    path = Path(__file__).with_name("RESULTS.md")
    existing = path.read_text() if path.exists() else "# Benchmark results\n"
    if section not in existing:
        existing = existing.rstrip("\n") + f"\n\n{section}\n\n{intro}\n"
    head, _, tail = existing.partition(section)
    body, sep, rest = tail.partition("\n## ")
    updated = head + section + body.rstrip("\n") + "\n\n" + text
    if sep:
        updated += "\n## " + rest
    path.write_text(updated)


def main(
    doc: str,
    run: Callable[[int, str], list[Result]],
    *,
    section: str,
    intro: str,
    library: str,
    baseline: str,
) -> None:
    """Parse ``--records``/``--no-append``, start the test suite's registry server, run."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
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
    text = report(args.records, results, library=library, baseline=baseline)
    if not args.no_append:
        append_results(text, section, intro)
