"""Kafka clients cached per Python process, reused across leases.

A Spark Python worker runs many leases one after another; creating a librdkafka client per
lease would cost a connection, metadata round trips and (for consumers) the prefetch that a
running client already holds. The cache is an optimisation only: a lease must be correct
with a freshly created client too.

* Producers are keyed by their frozen config (the config carries
  ``client.id=connector-producer-<conn>-<task>``, so in practice one per task).
* Consumers are keyed by connector and task (plus their config); each lease re-``assign``\\ s
  the one it gets. A consumer is used by one lease at a time: :func:`checkout_consumer`
  removes it from the cache and :func:`checkin_consumer` returns it.
* Everything is closed at interpreter exit.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

__all__ = [
    "CachedConsumer",
    "checkin_consumer",
    "checkout_consumer",
    "close_all",
    "discard_producer",
    "get_admin",
    "get_producer",
]

_FLUSH_AT_EXIT_S = 5.0

_lock = threading.Lock()
_producers: dict[frozenset[tuple[str, Any]], tuple[Any, Producer]] = {}
_admins: dict[frozenset[tuple[str, Any]], AdminClient] = {}
_consumers: dict[tuple[str, int, frozenset[tuple[str, Any]]], CachedConsumer] = {}


def _freeze(config: Mapping[str, Any]) -> frozenset[tuple[str, Any]]:
    return frozenset((k, v if not callable(v) else id(v)) for k, v in config.items())


def get_producer(config: Mapping[str, Any], tag: Any = None) -> Producer:
    """The process's producer for ``config``, created on first use. Thread-safe.

    A different ``tag`` (the issue of the lease's control channel) replaces the cached
    producer with a new one: a lease abandoned under an earlier issue may still hold the old
    one (a task stuck in ``poll()`` keeps its thread), and a lease's flush must count only its
    own records. The old producer is left to whoever still holds it."""
    key = _freeze(config)
    with _lock:
        cached = _producers.get(key)
        if cached is None or cached[0] != tag:
            cached = (tag, Producer(dict(config)))
            _producers[key] = cached
        return cached[1]


def get_admin(config: Mapping[str, Any]) -> AdminClient:
    """The process's admin client for ``config``, created on first use. Thread-safe."""
    key = _freeze(config)
    with _lock:
        admin = _admins.get(key)
        if admin is None:
            admin = AdminClient(dict(config))
            _admins[key] = admin
        return admin


def discard_producer(producer: Producer) -> None:
    """Forget ``producer`` (e.g. after a fatal error) so the next lease creates a new one."""
    with _lock:
        for key, (_, cached) in list(_producers.items()):
            if cached is producer:
                del _producers[key]
    producer.flush(0)


@dataclass(slots=True)
class CachedConsumer:
    """A consumer with what the cache knows about its state.

    ``positions`` holds, after a lease that ended cleanly, the next offset of each assigned
    partition: the next lease may keep the assignment (and the records librdkafka already
    prefetched) when it starts exactly there. Empty means "re-assign".
    """

    consumer: Consumer
    positions: dict[tuple[str, int], int | None] = field(default_factory=dict)


def checkout_consumer(connector: str, task: int, config: Mapping[str, Any]) -> CachedConsumer:
    """Take the cached consumer of ``connector``/``task`` with ``config`` (or a new one).

    The caller owns it until :func:`checkin_consumer`; on failure it may just close it.
    """
    key = (connector, task, _freeze(config))
    with _lock:
        cached = _consumers.pop(key, None)
    if cached is None:
        cached = CachedConsumer(Consumer(dict(config)))
    return cached


def checkin_consumer(
    connector: str, task: int, config: Mapping[str, Any], cached: CachedConsumer
) -> None:
    """Return a consumer taken with :func:`checkout_consumer` for later leases."""
    key = (connector, task, _freeze(config))
    with _lock:
        previous = _consumers.get(key)
        _consumers[key] = cached
    if previous is not None and previous is not cached:
        previous.consumer.close()


def close_all() -> None:
    """Flush and drop every cached producer, close every cached consumer."""
    with _lock:
        producers = [producer for _, producer in _producers.values()]
        consumers = list(_consumers.values())
        _producers.clear()
        _consumers.clear()
        _admins.clear()
    for producer in producers:
        producer.flush(_FLUSH_AT_EXIT_S)
    for cached in consumers:
        try:
            cached.consumer.close()
        except RuntimeError:
            pass  # already closed


atexit.register(close_all)
