"""Leases without Spark against hand-written confluent-kafka loops, measured in one run.

    python bench/bench_lease.py [--records N] [--profile source|sink] [--no-append]

Source: a file of N lines (~100 B) -> Kafka, by one FileStreamSource lease
(:func:`sparkcat.runtime.tasks.lease.run_lease`) and by a hand-written loop (read the file, split
lines, ``produce`` with ``poll(0)`` every 5,000, ``flush``). Sink: that topic -> a file, by
one FileStreamSink lease and by a hand-written loop (``assign``, ``consume(10000)``, decode,
write). Both with StringConverter and with JsonConverter (``schemas.enable=true``: the
hand-written loops build/parse the same envelope with orjson). Every variant uses the same
librdkafka settings (:mod:`sparkcat.kafka.clients`: Connect's forced producer settings and
sparkcat's tuned defaults, incl. ``fetch.queue.backoff.ms=10``), on the embedded broker.

Prints records/s and lease/hand-written ratios; appends them to ``bench/RESULTS.md``
(section ``## Leases``) unless ``--no-append``. ``--profile`` runs one lease under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import platform
import pstats
import tempfile
import time
import uuid
from pathlib import Path

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.kafka import clients
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
RESULTS = Path(__file__).parent / "RESULTS.md"
SECTION = "## Leases"


def write_lines(path: Path, n: int) -> None:
    pad = "x" * 84
    with path.open("w") as out:
        for start in range(0, n, 100_000):
            out.write(
                "".join(f"line-{i:09d} {pad}\n" for i in range(start, min(n, start + 100_000)))
            )


def create_topic(servers: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()


# ----------------------------------------------------------------- hand-written loops
def hand_source(servers: str, path: Path, topic: str, json: bool) -> int:
    producer = Producer(clients.producer_config({"bootstrap.servers": servers}, None, "hand"))
    produce, poll = producer.produce, producer.poll
    schema = {"type": "string", "optional": False}
    dumps = orjson.dumps
    n = 0
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            lines = chunk.decode().split("\n")  # the file's lines are shorter than a chunk
            now = int(time.time() * 1000)
            for line in lines[:-1]:
                value = dumps({"schema": schema, "payload": line}) if json else line.encode()
                try:
                    produce(topic, value, None, -1, None, None, now)
                except BufferError:
                    poll(0.05)
                    produce(topic, value, None, -1, None, None, now)
                n += 1
                if n % 5000 == 0:
                    poll(0)
    assert producer.flush(60) == 0
    return n


def hand_sink(servers: str, topic: str, out_path: Path, n: int, json: bool) -> int:
    config = clients.consumer_config({"bootstrap.servers": servers}, None, "hand", "hand")
    consumer = Consumer(config)
    consumer.assign([KafkaTopicPartition(topic, 0, OFFSET_BEGINNING)])
    loads = orjson.loads
    seen = 0
    with out_path.open("w") as out:
        while seen < n:
            messages = consumer.consume(min(10_000, n - seen), 1.0)
            if json:
                text = "".join([f"{loads(m.value())['payload']}\n" for m in messages])
            else:
                text = "".join([f"{m.value().decode()}\n" for m in messages])
            out.write(text)
            seen += len(messages)
    consumer.close()
    return seen


# ------------------------------------------------------------------------------ leases
def lease_spec(servers: str, kind: str, converter: str, task: dict[str, str], n: int,
               assignment: tuple[tuple[str, int, int | None], ...] = ()) -> LeaseSpec:  # fmt: skip
    return LeaseSpec(
        connector=f"bench-{uuid.uuid4().hex[:6]}",
        task=0,
        generation=1,
        kind=kind,  # type: ignore[arg-type]
        task_config=task,
        connector_config={},
        worker_config={
            "bootstrap.servers": servers,
            "key.converter": STRING,
            "value.converter": converter,
        },
        max_ms=600_000,
        max_records=n,
        control=None,
        assignment=assignment,
    )


def lease_source(servers: str, path: Path, topic: str, converter: str, n: int) -> int:
    task = {
        "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask",
        "file": str(path),
        "topic": topic,
    }
    result = run_lease(lease_spec(servers, "source", converter, task, n))
    assert result.trace is None, result.trace
    return result.records


def lease_sink(servers: str, topic: str, out_path: Path, converter: str, n: int) -> int:
    task = {
        "task.class": "org.apache.kafka.connect.file.FileStreamSinkTask",
        "file": str(out_path),
        "topics": topic,
    }
    result = run_lease(lease_spec(servers, "sink", converter, task, n, ((topic, 0, None),)))
    assert result.trace is None, result.trace
    return result.records


def timed(fn, *args) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    count = fn(*args)
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--profile", choices=["source", "sink"])
    parser.add_argument("--converter", choices=["string", "json"], default=None)
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs per variant")
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    n = args.records
    converters = {"string": STRING, "json": JSON}
    chosen = [args.converter] if args.converter else ["string", "json"]
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        source_file = Path(tmp) / "in.txt"
        write_lines(source_file, n)
        for name in chosen:
            json = name == "json"
            hand_topic, lease_topic = f"hand-{name}", f"lease-{name}"
            for attempt in range(args.repeat):
                create_topic(servers, f"{hand_topic}{attempt}")
                create_topic(servers, f"{lease_topic}{attempt}")
            if args.profile == "source":
                profile(lease_source, servers, source_file, f"{lease_topic}0", converters[name], n)
                continue
            ht = lt = float("inf")
            for attempt in range(args.repeat):  # best of N: the machine is shared
                hc, t = timed(hand_source, servers, source_file, f"{hand_topic}{attempt}", json)
                ht = min(ht, t)
                lc, t = timed(lease_source, servers, source_file, f"{lease_topic}{attempt}",
                              converters[name], n)  # fmt: skip
                lt = min(lt, t)
                assert hc == lc == n, (hc, lc)
            lease_topic = f"{lease_topic}0"
            hand_topic = f"{hand_topic}0"
            rows.append(row(f"source file→Kafka, {name}", n, ht, lt))
            if args.profile == "sink":
                profile(lease_sink, servers, lease_topic, Path(tmp) / "p.txt", converters[name], n)
                continue
            ht = lt = float("inf")
            for _ in range(args.repeat):
                hc, t = timed(hand_sink, servers, hand_topic, Path(tmp) / f"h-{name}.txt", n, json)
                ht = min(ht, t)
                lc, t = timed(lease_sink, servers, lease_topic, Path(tmp) / f"l-{name}.txt",
                              converters[name], n)  # fmt: skip
                lt = min(lt, t)
                assert hc == lc == n, (hc, lc)
            rows.append(row(f"sink Kafka→file, {name}", n, ht, lt))
        client_cache.close_all()
    for line in rows:
        print(line)
    if rows and not args.no_append:
        append(rows, n)


def row(label: str, n: int, hand_s: float, lease_s: float) -> str:
    return f"| {label} | {n / hand_s:,.0f} | {n / lease_s:,.0f} | {hand_s / lease_s:.2f} |"


def profile(fn, *args) -> None:  # type: ignore[no-untyped-def]
    profiler = cProfile.Profile()
    profiler.runcall(fn, *args)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(18)


def append(rows: list[str], n: int) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = [
        f"### {stamp} — {n:,} records of ~100 B, 1 partition, {platform.python_version()}, "
        "embedded tansu, 2 cores shared",
        "",
        "| path | hand-written rec/s | lease rec/s | lease / hand |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if SECTION not in text:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\nRun `python bench/bench_lease.py`.\n\n"
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    end = len(text) if following < 0 else following + 1
    section = text[start:end].rstrip("\n") + "\n\n" + "\n".join(block)
    RESULTS.write_text(text[:start] + section + ("\n" + text[end:] if following >= 0 else ""))


if __name__ == "__main__":
    main()
