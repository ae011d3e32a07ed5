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
import statistics
import tempfile
import time
import timeit
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
    times: dict[tuple[str, bool], list[float]] = {
        (kind, enabled): [] for kind in ("source", "sink") for enabled in (True, False)
    }
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        source_file = Path(tmp) / "in.txt"
        write_lines(source_file, n)
        for attempt in range(args.repeat):
            for enabled in (True, False) if attempt % 2 == 0 else (False, True):
                counters.ENABLED = enabled
                topic = f"metrics-{int(enabled)}-{attempt}"
                create_topic(servers, topic)
                source_s = timed(lease_source, servers, source_file, topic, STRING, n)
                times[("source", enabled)].append(source_s)
                out = Path(tmp) / f"out-{int(enabled)}-{attempt}.txt"
                sink_s = timed(lease_sink, servers, topic, out, STRING, n)
                times[("sink", enabled)].append(sink_s)
                state = "on " if enabled else "off"
                print(f"metrics {state}: source {source_s:.3f} s, sink {sink_s:.3f} s")
        counters.ENABLED = True
        client_cache.close_all()
    rows = []
    for kind, label in (("source", "source file→Kafka"), ("sink", "sink Kafka→file")):
        on, off = times[(kind, True)], times[(kind, False)]
        best_on, best_off = min(on), min(off)
        median_on, median_off = statistics.median(on), statistics.median(off)
        rows.append(f"| {label} | {n / best_off:,.0f} | {n / best_on:,.0f} | "
                    f"{best_off / best_on:.3f} | {median_off / median_on:.3f} |")  # fmt: skip
    hook_ns = hook_cost_ns()
    for line in rows:
        print(line)
    print(f"hooks per batch: {hook_ns:.0f} ns")
    if not args.no_append:
        append(rows, n, args.repeat, hook_ns)


def hook_cost_ns() -> float:
    """What the hooks of one batch cost (clock, ``call``, ``batch``), on minus off, in ns."""

    def one_batch(made: counters.LeaseCounters) -> None:
        started = made.clock()
        made.call(started)
        made.batch(2000)

    cost = {}
    for variant in (counters.LeaseCounters(), counters.NullCounters()):
        loops = 200_000
        best = min(timeit.repeat(lambda v=variant: one_batch(v), number=loops, repeat=5))
        cost[type(variant).__name__] = best / loops * 1e9
    return cost["LeaseCounters"] - cost["NullCounters"]


def append(rows: list[str], n: int, repeat: int, hook_ns: float) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = [
        f"### {stamp} — {n:,} records of ~100 B, StringConverter, best of {repeat}, "
        f"{platform.python_version()}, embedded tansu, 2 cores shared",
        "",
        "| lease | metrics off rec/s (best) | metrics on rec/s (best) | on / off (best) | "
        "on / off (median) |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"The hooks of one batch (clock, `call`, `batch`) cost {hook_ns:.0f} ns more than the "
        f"no-op hooks: {hook_ns / 2000:.2f} ns per record at FileStreamSource's 2,000-line "
        "batches.",
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
