"""Kafka's ``KafkaBasedLog``: a compacted topic read from the beginning, plus a producer.

The three Kafka-topic stores (offsets, configs, statuses) are each one :class:`KafkaBasedLog`
and a callback that folds records into an in-memory view. Public API::

    log = KafkaBasedLog(topic, producer_config, consumer_config, admin_config, consumed,
                        partitions=1, replication_factor=-1)
    log.start(timeout_s)        # create the topic if missing (compacted) -- or, with
                                # purpose=(worker key, what it holds), refuse an existing
                                # topic that is not compact-only (Kafka's message) --, assign every
                                # partition from the beginning, start the reader thread,
                                # read to the end; returns once every record then in the
                                # topic was delivered to ``consumed``
    log.partition_count         # partitions of the topic (known after start)
    log.send(key, value, callback=None) -> Future[(partition, offset)]
                                # produce one record (value None = tombstone); the future
                                # and ``callback(error_or_None, partition, offset)`` complete
                                # on the log's producer thread once the broker acked it
    log.flush(timeout_s)        # wait until every sent record is acked (raises on failure)
    log.read_to_end(timeout_s)  # wait until every record in the topic *now* (written by
                                # anyone) has been delivered to ``consumed``
    log.wait_until_consumed({partition: offset + 1}, deadline)
                                # wait until the reader passed known offsets (own writes)
    log.stop()                  # stop the threads, flush, close the clients (idempotent)

``consumed(record)`` gets each :class:`LogRecord` of every partition in offset order, on the
log's single reader thread; it must not block for long and must not call ``read_to_end``.
An exception it raises is logged and the record skipped (as Kafka's stores log bad
records). ``read_to_end`` and ``send`` are thread-safe.

Clients: librdkafka, never kafka-python; :func:`internal_client_configs` builds them from
the worker's unprefixed settings, as Kafka's stores do. The consumer is ``assign()``\\ ed (no group
membership), never commits, reads ``read_committed`` with a 10 ms ``fetch.queue.backoff.ms``
(librdkafka's default 1 s would cap start-up reads at ~200k records/s); the producer has
``acks=all``, idempotence on (ordered retries; ``idempotent=False`` for the status topic,
as Kafka), and librdkafka's ``murmur2_random``
partitioner: keyed records land where Kafka's Java default partitioner puts them, so Kafka's
own tools find them.

The end of the log is *not* taken from ListOffsets(latest): the embedded broker (tansu)
answers it with the last produced batch's base offset + 1, short of the true end.
:func:`sparkcat.kafka.admin.end_offsets` instead
reads from that answer to partition EOF, whose offset is the high watermark of a fetch
response sent after the call -- the true end, on Kafka and on tansu. The reader thread
records its position per partition (offset of the last record + 1, or the EOF offset, which
also steps over transaction markers) and ``read_to_end`` waits until every position reaches
that end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.kafka import admin as kafka_admin
from sparkcat.kafka.clients import (
    CONSUMER_DEFAULTS,
    PRODUCER_DEFAULTS,
    admin_config,
    to_librdkafka,
)
from sparkcat.runtime.config_provider import resolve

__all__ = [
    "KafkaBasedLog",
    "LogRecord",
    "SendCallback",
    "internal_client_configs",
    "log_consumer_config",
]

log = logging.getLogger(__name__)

#: ``callback(error, partition, offset)``: error is ``None`` once the broker acked the record.
SendCallback = Callable[[Exception | None, int, int], None]

_BATCH = 10_000
_IDLE_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One record of the log as the reader delivers it."""

    key: bytes | None
    value: bytes | None
    partition: int
    offset: int
    timestamp: int


def internal_client_configs(
    worker: Mapping[str, Any], client_id: str
) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(producer, consumer, admin)`` librdkafka configs for an internal-topic store.

    As Kafka's stores, the clients take the worker's *unprefixed* settings
    (``bootstrap.servers``, ``security.protocol``, ``sasl.*``, ``ssl.*``, ...), not its
    ``producer.*``/``consumer.*`` keys, which are for connectors' clients. Worker keys
    librdkafka does not know (``key.converter``, ``offset.storage.topic``, ...) are dropped
    quietly; the worker's ``group.id`` (the Connect group) is not used by the log consumer.
    """
    own = {
        k: v for k, v in worker.items() if not k.startswith(("producer.", "consumer.", "admin."))
    }
    # Config-provider variables (``sasl.jaas.config=${file:...}``) resolved here, at use.
    own.update(resolve(worker, {k: v for k, v in own.items() if isinstance(v, str)}))
    producer = {**PRODUCER_DEFAULTS, **to_librdkafka(own, "producer", quiet=True)}
    consumer = {**CONSUMER_DEFAULTS, **to_librdkafka(own, "consumer", quiet=True)}
    consumer.pop("group.id", None)
    # As Kafka's internal-topic producers: retry until acked; callers bound their own waits.
    producer.setdefault("delivery.timeout.ms", "2147483647")
    for config in (producer, consumer):
        config.setdefault("bootstrap.servers", "localhost:9092")
        config["client.id"] = client_id
    return producer, consumer, admin_config(worker, client_id=client_id)


def log_consumer_config(consumer_config: Mapping[str, str]) -> dict[str, str]:
    """``consumer_config`` with the settings a log reader needs (these always win)."""
    config = dict(consumer_config)
    config.pop("group.instance.id", None)
    config.setdefault("group.id", "sparkcat-kafka-based-log")
    config.update(
        {
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "enable.partition.eof": "true",
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "fetch.queue.backoff.ms": "10",
            # The embedded broker holds a fetch at the end of the log for the whole wait,
            # even when a record arrives: a reader would see a write up to 500 ms (the
            # default) late. 20 ms: ~50 small idle fetches per second per log.
            "fetch.wait.max.ms": "20",
        }
    )
    return config


def _log_producer_config(producer_config: Mapping[str, str], idempotent: bool) -> dict[str, str]:
    config = dict(producer_config)
    # linger.ms=0: writers wait for each write (5 ms linger -> 6 ms per write instead of
    # 0.6 ms); under load librdkafka still batches what queues while a request is out.
    config.update({"acks": "all", "partitioner": "murmur2_random", "linger.ms": "0"})
    if idempotent:
        # Idempotence keeps order with up to 5 requests in flight.
        config["enable.idempotence"] = "true"
        config["max.in.flight.requests.per.connection"] = "5"
    else:
        config["enable.idempotence"] = "false"
    config.pop("transactional.id", None)
    return config


class KafkaBasedLog:
    """A compacted topic kept in memory by a callback; see the module docstring."""

    def __init__(
        self,
        topic: str,
        producer_config: Mapping[str, str],
        consumer_config: Mapping[str, str],
        admin_config: Mapping[str, str],
        consumed: Callable[[LogRecord], None],
        *,
        partitions: int = 1,
        replication_factor: int = -1,
        topic_configs: Mapping[str, str] | None = None,
        idempotent: bool = True,
        purpose: tuple[str, str] | None = None,
    ) -> None:
        self.topic = topic
        self._purpose = purpose
        self._producer_config = _log_producer_config(producer_config, idempotent)
        self._consumer_config = log_consumer_config(consumer_config)
        self._admin_config: dict[str, str | int | float | bool] = dict(admin_config)
        self._consumed = consumed
        self._partitions = partitions
        self._replication_factor = replication_factor
        self._topic_configs = {**(topic_configs or {}), "cleanup.policy": "compact"}
        self._positions: dict[int, int] = {}
        self._progress = threading.Condition()
        self._probe_lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._probe: Consumer | None = None
        self._reader_error: BaseException | None = None
        self.partition_count = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout_s: float = 60.0) -> None:
        """Create the topic when missing, start reading from the beginning, read to the end."""
        admin = AdminClient(self._admin_config)
        spec = kafka_admin.TopicSpec(
            self.topic, self._partitions, self._replication_factor, self._topic_configs
        )
        created = kafka_admin.ensure_topics(admin, [spec], timeout_s)
        if created:
            log.info("Created topic %s (%d partitions, compacted)", self.topic, self._partitions)
        elif self._purpose is not None:
            self._verify_compacted(admin, timeout_s, *self._purpose)
        partitions = self._wait_for_partitions(admin, timeout_s)
        self.partition_count = len(partitions)
        self._producer = Producer(self._producer_config)
        self._consumer = Consumer(self._consumer_config)
        self._probe = Consumer(kafka_admin.end_offsets_probe_config(self._consumer_config))
        self._positions = dict.fromkeys(partitions, 0)
        self._consumer.assign(
            [KafkaTopicPartition(self.topic, p, OFFSET_BEGINNING) for p in partitions]
        )
        self._stopping.clear()
        self._reader_error = None
        self._threads = [
            threading.Thread(target=self._read_loop, name=f"KafkaBasedLog-{self.topic}-reader"),
            threading.Thread(target=self._produce_loop, name=f"KafkaBasedLog-{self.topic}-acks"),
        ]
        for thread in self._threads:
            thread.daemon = True
            thread.start()
        try:
            self.read_to_end(timeout_s)
        except BaseException:
            self.stop()
            raise
        log.info("Started KafkaBasedLog for topic %s", self.topic)

    def stop(self) -> None:
        """Flush what was sent, stop the reader, close the clients. Safe to call twice."""
        if self._producer is not None:
            remaining = self._producer.flush(10.0)
            if remaining:
                log.warning("%d records to %s were not acked before stop", remaining, self.topic)
        self._stopping.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=30.0)
        self._threads = []
        for client in (self._consumer, self._probe):
            if client is not None:
                client.close()
        self._consumer = self._probe = self._producer = None
        with self._progress:
            self._progress.notify_all()

    # -- writing -----------------------------------------------------------------------------

    def send(
        self, key: bytes | str | None, value: bytes | None, callback: SendCallback | None = None
    ) -> Future[tuple[int, int]]:
        """Produce one record; the future completes with ``(partition, offset)`` on ack."""
        producer = self._require(self._producer)
        future: Future[tuple[int, int]] = Future()

        def delivered(error: KafkaError | None, message: Message) -> None:
            partition, offset = message.partition(), message.offset()
            partition = -1 if partition is None else partition
            offset = -1 if offset is None else offset
            failure = None if error is None else ConnectError(f"{self.topic}: {error.str()}")
            if callback is not None:
                try:
                    callback(failure, partition, offset)
                except Exception:
                    log.exception("Send callback for %s failed", self.topic)
            if failure is None:
                future.set_result((partition, offset))
            else:
                future.set_exception(failure)

        while True:
            try:
                producer.produce(self.topic, value=value, key=key, on_delivery=delivered)
                return future
            except BufferError:
                producer.poll(0.05)  # the queue is full: wait for acks to make room

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until every record sent so far is acked; raise if some are not in time."""
        remaining = self._require(self._producer).flush(timeout_s)
        if remaining:
            raise ConnectError(f"{remaining} records to {self.topic} not acked in {timeout_s:g} s")

    # -- reading -----------------------------------------------------------------------------

    def read_to_end(self, timeout_s: float = 30.0) -> None:
        """Return once every record in the topic at the time of the call was consumed."""
        deadline = time.monotonic() + timeout_s
        probe = self._require(self._probe)
        with self._probe_lock:
            ends = kafka_admin.end_offsets(
                probe, [(self.topic, p) for p in self._positions], timeout_s
            )
        self.wait_until_consumed({tp.partition: end for tp, end in ends.items()}, deadline)

    def wait_until_consumed(self, positions: Mapping[int, int], deadline: float) -> None:
        """Wait until the reader consumed up to ``positions`` (partition -> next offset).

        ``deadline`` is a ``time.monotonic()`` value. After ``send(...).result()`` gave
        ``(p, o)``, ``wait_until_consumed({p: o + 1}, ...)`` waits until the reader saw the
        write (read-your-writes without asking the broker for the end).
        """
        with self._progress:
            while not self._reached(positions):
                if self._reader_error is not None:
                    raise ConnectError(f"Reader of {self.topic} failed") from self._reader_error
                if self._stopping.is_set() or self._consumer is None:
                    raise ConnectError(f"KafkaBasedLog for {self.topic} is stopped")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ConnectError(
                        f"Timed out reading to the end of {self.topic}: "
                        f"at {self._positions}, end {dict(positions)}"
                    )
                self._progress.wait(remaining)

    def _reached(self, wanted: Mapping[int, int]) -> bool:
        return all(self._positions.get(p, 0) >= end for p, end in wanted.items())

    def _read_loop(self) -> None:
        consumer = self._require(self._consumer)
        try:
            while not self._stopping.is_set():
                # consume(n, timeout) waits for n records or the whole timeout: wait for
                # the first with poll(), which returns as soon as one arrives, then drain.
                first = consumer.poll(_IDLE_POLL_S)
                if first is not None:
                    self._deliver([first, *consumer.consume(num_messages=_BATCH, timeout=0)])
        except BaseException as exc:  # surfaced by read_to_end
            log.exception("Reader of %s failed", self.topic)
            self._reader_error = exc
            with self._progress:
                self._progress.notify_all()

    def _deliver(self, messages: list[Message]) -> None:
        advanced: dict[int, int] = {}
        for message in messages:
            partition = message.partition() or 0
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    advanced[partition] = max(advanced.get(partition, 0), message.offset() or 0)
                else:
                    log.warning("Error reading %s: %s", self.topic, error.str())
                continue
            offset = message.offset() or 0
            _, timestamp = message.timestamp()
            record = LogRecord(message.key(), message.value(), partition, offset, timestamp)
            try:
                self._consumed(record)
            except Exception:
                log.exception("Skipping record %s-%d@%d", self.topic, partition, offset)
            advanced[partition] = max(advanced.get(partition, 0), offset + 1)
        with self._progress:
            for partition, position in advanced.items():
                if position > self._positions.get(partition, 0):
                    self._positions[partition] = position
            self._progress.notify_all()

    def _produce_loop(self) -> None:
        # Serves delivery reports (send futures and callbacks) as soon as acks arrive.
        producer = self._require(self._producer)
        while not self._stopping.is_set():
            producer.poll(_IDLE_POLL_S)

    def _verify_compacted(
        self, admin: AdminClient, timeout_s: float, worker_key: str, purpose: str
    ) -> None:
        # Kafka's TopicAdmin.verifyTopicCleanupPolicyOnlyCompact, for a topic that existed.
        try:
            configs = kafka_admin.describe_configs(admin, self.topic, timeout_s)
        except kafka_admin.KafkaAdminError as exc:
            log.info("Unable to verify the cleanup policy of '%s' topic: %s", self.topic, exc)
            return
        policies = {p.strip() for p in configs.get("cleanup.policy", "").split(",") if p.strip()}
        if policies and policies != {"compact"}:
            found = ",".join(sorted(policies))
            raise ConfigError(
                f"Topic '{self.topic}' supplied via the '{worker_key}' property is required to "
                f"have 'cleanup.policy=compact' to guarantee consistency and durability of "
                f"{purpose}, but found the topic currently has 'cleanup.policy={found}'. "
                f"Continuing would likely result in eventually losing {purpose} and problems "
                f"restarting this Connect cluster in the future. Change the '{worker_key}' "
                "property in the Connect worker configurations to use a topic with "
                "'cleanup.policy=compact'."
            )

    def _wait_for_partitions(self, admin: AdminClient, timeout_s: float) -> list[int]:
        # A just-created topic may take a moment to show its partitions in metadata.
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return [tp.partition for tp in kafka_admin.topic_partitions(admin, self.topic)]
            except kafka_admin.KafkaAdminError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _require(self, client: Any) -> Any:
        if client is None:
            raise ConnectError(f"KafkaBasedLog for {self.topic} is not started")
        return client
