"""Task metrics on vs off: the record path of source and sink leases, A/B in one run.

    python bench/bench_metrics.py [--records N] [--repeat R] [--no-append]

One FileStreamSource lease (a file of N lines of ~100 B -> Kafka) and one FileStreamSink
lease (that topic -> a file), StringConverter, on the embedded broker, without Spark. "on"
is the shipped lease loop (:class:`~sparkcat.runtime.metrics.counters.LeaseCounters`: two
``perf_counter`` calls and two method calls per batch, one report per lease); "off" swaps in
:class:`~sparkcat.runtime.metrics.counters.NullCounters` (no-op hooks). The variants
alternate, best of R each (the machine is shared). Appends the ratios to ``bench/RESULTS.md``
(section ``## Metrics overhead``) unless ``--no-append``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import tempfile
import time
from pathlib import Path

from bench_lease import STRING, create_topic, lease_sink, lease_source, write_lines

from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.metrics import counters
from sparkcat.runtime.tasks import client_cache

RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## Metrics overhead"


def timed(fn, *args) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    n = args.records
    best = {("source", True): float("inf"), ("source", False): float("inf"),
            ("sink", True): float("inf"), ("sink", False): float("inf")}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        source_file = Path(tmp) / "in.txt"
        write_lines(source_file, n)
        for attempt in range(args.repeat):
            for enabled in (True, False) if attempt % 2 == 0 else (False, True):
                counters.ENABLED = enabled
                topic = f"metrics-{int(enabled)}-{attempt}"
                create_topic(servers, topic)
                spent = timed(lease_source, servers, source_file, topic, STRING, n)
                best[("source", enabled)] = min(best[("source", enabled)], spent)
                out = Path(tmp) / f"out-{int(enabled)}-{attempt}.txt"
                spent = timed(lease_sink, servers, topic, out, STRING, n)
                best[("sink", enabled)] = min(best[("sink", enabled)], spent)
        counters.ENABLED = True
        client_cache.close_all()
    rows = []
    for kind, label in (("source", "source file→Kafka"), ("sink", "sink Kafka→file")):
        on, off = best[(kind, True)], best[(kind, False)]
        rows.append(f"| {label} | {n / off:,.0f} | {n / on:,.0f} | {off / on:.3f} |")
    for line in rows:
        print(line)
    if not args.no_append:
        append(rows, n, args.repeat)


def append(rows: list[str], n: int, repeat: int) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = [
        f"### {stamp} — {n:,} records of ~100 B, StringConverter, best of {repeat}, "
        f"{platform.python_version()}, embedded tansu, 2 cores shared",
        "",
        "| lease | metrics off rec/s | metrics on rec/s | on / off |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if SECTION not in text:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\nRun `python bench/bench_metrics.py`.\n\n"
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    end = len(text) if following < 0 else following + 1
    section = text[start:end].rstrip("\n") + "\n\n" + "\n".join(block)
    RESULTS.write_text(text[:start] + section + ("\n" + text[end:] if following >= 0 else ""))


if __name__ == "__main__":
    main()
