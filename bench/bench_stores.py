"""Start-up read of the offsets topic: KafkaOffsetBackingStore vs. a hand-written loop.

A distributed worker reads its offsets topic from the beginning before it serves. Both
sides read the same topic of N offset records (Kafka's key/value layout, 25 partitions,
one key per 5 records) from the same embedded broker in the same run:

* hand-written: a confluent-kafka consumer (tuned as the store's: 10 ms fetch queue backoff,
  20 ms fetch wait) ``assign()``\\ ed to every partition from the beginning, ``consume(10_000)``
  batches into a ``dict`` of key bytes to value bytes, until
  it holds the N records it knows were written (it needs no end-offset lookup);
* store: ``KafkaOffsetBackingStore(...).start()`` -- topic check, reader thread, end found
  from fetch high watermarks, every record folded into the store's map.

Also reported: the latency of one ``put_batch`` of one offset (acked and read back) against
a hand-written ``produce()`` + ``flush()`` of the same record. Rounds alternate; the best
round of each is reported.

Run: ``.venv/bin/python bench/bench_stores.py [--records N] [--rounds R]``
"""

from __future__ import annotations

import argparse
import time
import uuid

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.kafka.admin import TopicSpec, ensure_topics
from sparkcat.kafka.broker import EmbeddedBroker
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore

_PARTITIONS = 25


def fill(bootstrap: str, topic: str, records: int) -> None:
    ensure_topics(
        AdminClient({"bootstrap.servers": bootstrap}),
        [TopicSpec(topic, _PARTITIONS, 1, {"cleanup.policy": "compact"})],
    )
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for n in range(records):
        key = orjson.dumps(["bench", {"partition": n % max(records // 5, 1)}])
        producer.produce(topic, orjson.dumps({"position": n}), key)
        if n % 5000 == 0:
            producer.poll(0)
    producer.flush()


def hand_written(bootstrap: str, topic: str, records: int) -> float:
    started = time.perf_counter()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": "false",
            "fetch.queue.backoff.ms": "10",
            "fetch.wait.max.ms": "20",  # tansu holds a fetch its whole wait at a log's end
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(_PARTITIONS)])
    data: dict[bytes, bytes] = {}
    seen = 0
    while seen < records:
        # consume(n, timeout) would wait its whole timeout for n records: wait for the
        # first with poll(), then drain what is already fetched.
        first = consumer.poll(0.1)
        if first is None:
            continue
        for message in [first, *consumer.consume(10_000, timeout=0)]:
            if message.error() is None:
                seen += 1
                key, value = message.key(), message.value()
                if key is not None and value is not None:
                    data[key] = value
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def store_start(bootstrap: str, topic: str) -> tuple[float, KafkaOffsetBackingStore]:
    store = KafkaOffsetBackingStore(
        {
            "bootstrap.servers": bootstrap,
            "offset.storage.topic": topic,
            "offset.storage.partitions": str(_PARTITIONS),
            "offset.storage.replication.factor": "1",
        }
    )
    started = time.perf_counter()
    store.start()
    return time.perf_counter() - started, store


def write_latency(
    bootstrap: str, topic: str, store: KafkaOffsetBackingStore
) -> tuple[float, float]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": "0"})
    store.put_batch("warm", [({"p": 0}, {"o": 0})])  # the idempotent producer's first PID
    producer.produce(topic, b"{}", b'["warm",{}]')
    producer.flush()
    hand = mine = 0.0
    for n in range(50):
        started = time.perf_counter()
        producer.produce(topic, orjson.dumps({"o": n}), b'["lat",{"p":1}]')
        producer.flush()
        hand += time.perf_counter() - started
        started = time.perf_counter()
        store.put_batch("lat", [({"p": 2}, {"o": n})])
        mine += time.perf_counter() - started
    return hand / 50, mine / 50


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with EmbeddedBroker() as broker:
        bootstrap = broker.bootstrap_servers
        topic = f"bench-offsets-{uuid.uuid4().hex[:6]}"
        fill(bootstrap, topic, args.records)
        hand_times, store_times = [], []
        latencies: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            hand_times.append(hand_written(bootstrap, topic, args.records))
            elapsed, store = store_start(bootstrap, topic)
            store_times.append(elapsed)
            latencies.append(write_latency(bootstrap, topic, store))
            store.close()
        hand, mine = min(hand_times), min(store_times)
        print(f"{args.records:,} offset records, {_PARTITIONS} partitions, best of {args.rounds}")
        print(f"hand-written read: {hand:.3f} s ({args.records / hand:,.0f} rec/s)")
        print(f"store start():     {mine:.3f} s ({args.records / mine:,.0f} rec/s)")
        print(f"hand / store (speed ratio): {hand / mine:.2f}")
        hand_lat = min(h for h, _ in latencies)
        store_lat = min(s for _, s in latencies)
        print(f"one write: produce+flush {hand_lat * 1000:.2f} ms, ", end="")
        print(f"put_batch (acked and read back) {store_lat * 1000:.2f} ms")


if __name__ == "__main__":
    main()
