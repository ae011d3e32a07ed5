"""Produce/consume throughput: sparkcat's tuned client configs vs. the untuned baseline.

Both sides run the same loops against the same embedded broker (tansu) in the same run:

* baseline: librdkafka's defaults plus only the settings Kafka Connect forces (``acks=all``,
  one request in flight, no idempotence; no auto commit, ``earliest``);
* tuned: :func:`sparkcat.kafka.clients.producer_config` / ``consumer_config``.

The producer loop hands records to ``produce()`` and serves delivery reports every 5,000
records, as a source task does; the consumer loop reads with ``consume(10_000)`` after
``assign()``, as a sink task does. Rounds alternate baseline/tuned so that load from
elsewhere on the machine hits both alike; the best round of each is reported.

Run: ``.venv/bin/python bench/bench_kafka_clients.py [--records N] [--size B] [--rounds R]``
(or ``--bootstrap host:port`` to use a running broker instead of starting tansu).
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Mapping

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.kafka.admin import TopicSpec, ensure_topics
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.kafka.clients import admin_config, consumer_config, producer_config

_POLL_EVERY = 5_000


def baseline_configs(bootstrap: str) -> tuple[dict[str, str], dict[str, str]]:
    producer = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "max.in.flight.requests.per.connection": "1",
        "enable.idempotence": "false",
    }
    consumer = {
        "bootstrap.servers": bootstrap,
        "group.id": "bench-baseline",
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
    }
    return producer, consumer


def tuned_configs(bootstrap: str) -> tuple[dict[str, str], dict[str, str]]:
    worker = {"bootstrap.servers": bootstrap}
    return (
        producer_config(worker, None, "bench-producer"),
        consumer_config(worker, None, "bench-consumer", "bench-tuned"),
    )


def produce(config: Mapping[str, str], topic: str, records: int, size: int) -> float:
    """Records/s to produce ``records`` values of ``size`` bytes until all are acked."""
    producer = Producer(dict(config))
    value = b"x" * size
    started = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)  # queue full: wait for acks
        if i % _POLL_EVERY == 0:
            producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    if remaining:
        raise RuntimeError(f"{remaining} records not delivered")
    return records / elapsed


def consume(config: Mapping[str, str], topic: str, records: int) -> float:
    """Records/s to read ``records`` records from the start of partition 0."""
    consumer = Consumer(dict(config))
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = 0
    started = time.perf_counter()
    try:
        while seen < records:
            batch = consumer.consume(num_messages=10_000, timeout=1.0)
            seen += sum(1 for message in batch if message.error() is None)
            if time.perf_counter() - started > 120:
                raise RuntimeError(f"read {seen} of {records} records in 120 s")
        return records / (time.perf_counter() - started)
    finally:
        consumer.close()


def run(bootstrap: str, records: int, size: int, rounds: int) -> None:
    admin = AdminClient(dict(admin_config({"bootstrap.servers": bootstrap})))
    variants = {"baseline": baseline_configs(bootstrap), "tuned": tuned_configs(bootstrap)}
    best: dict[tuple[str, str], float] = {}
    for round_no in range(rounds):
        for name, (producer_conf, consumer_conf) in variants.items():
            topic = f"bench-{name}-{round_no}-{uuid.uuid4().hex[:8]}"
            ensure_topics(admin, [TopicSpec(topic, 1, 1)])
            produced = produce(producer_conf, topic, records, size)
            consumed = consume(consumer_conf, topic, records)
            print(
                f"round {round_no + 1} {name:8s} produce {produced:>12,.0f}/s  "
                f"consume {consumed:>12,.0f}/s"
            )
            for phase, rate in (("produce", produced), ("consume", consumed)):
                best[name, phase] = max(best.get((name, phase), 0.0), rate)
    print(f"\n{records:,} records x {size} B, best of {rounds} rounds (records/s):")
    for phase in ("produce", "consume"):
        base, tuned = best["baseline", phase], best["tuned", phase]
        print(
            f"  {phase}: baseline {base:>12,.0f}  tuned {tuned:>12,.0f}  ratio {tuned / base:5.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bootstrap", default=None, help="use this broker, not tansu")
    args = parser.parse_args()
    if args.bootstrap:
        run(args.bootstrap, args.records, args.size, args.rounds)
        return
    started = time.perf_counter()
    with EmbeddedBroker() as broker:
        print(
            f"tansu started in {(time.perf_counter() - started) * 1000:.0f} ms "
            f"at {broker.bootstrap_servers}"
        )
        run(broker.bootstrap_servers, args.records, args.size, args.rounds)


if __name__ == "__main__":
    main()
