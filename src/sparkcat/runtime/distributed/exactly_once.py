"""Zombie fencing for exactly-once source connectors (KIP-618), on distributed workers.

Every commit record of a connector's task configs makes it *pending fencing* until a
``tasks-fencing-<c>`` record (``{"task-count": N}``) follows. Before a worker starts tasks of
such a generation (:func:`ready_to_start`), the leader — asked through the signed internal
``PUT /connectors/{c}/fence`` when this worker is a follower — fences every transactional id of
the previous generation, ``<group.id>-<c>-0 .. <group.id>-<c>-(N-1)`` with N from the last
task-count record (:func:`fence_zombies`), then writes the new task count. Fencing a
transactional id is what Kafka's ``Admin.fenceProducers`` does: ``InitProducerId`` for it,
which bumps the producer epoch and aborts any transaction the old instance left open; the
old instance's next send or commit fails. Skipped (only the record is written) when there is
no earlier task-count record, or when old and new generations both have exactly one task
(its lease's own ``init_transactions`` fences the old one), as Kafka.

Within a generation no record is needed: each lease's ``init_transactions`` fences whatever
instance of the same task ran before it (a worker killed with ``kill -9``, a stalled lease).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import orjson
from confluent_kafka import Producer

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.kafka import clients
from sparkcat.runtime.tasks.exactly_once import transactional_id

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder

__all__ = ["fence_producers", "fence_zombies", "ready_to_start"]

log = logging.getLogger(__name__)

_FENCE_TIMEOUT_S = 30.0
_PARALLEL_FENCES = 8


def fence_producers(
    worker: Mapping[str, Any], connector: str, task_count: int, group_id: str
) -> None:
    """Fence the transactional ids of tasks ``0 .. task_count-1`` of ``connector``."""
    base = clients.producer_config(worker, None, f"connect-fencing-{connector}")
    # librdkafka requires message.timeout.ms <= transaction.timeout.ms (60 s by default).
    base.update({"enable.idempotence": "true", "acks": "all", "delivery.timeout.ms": "60000"})

    def fence(task: int) -> None:
        config = dict(base, **{"transactional.id": transactional_id(group_id, connector, task)})
        producer = Producer(config)
        producer.init_transactions(_FENCE_TIMEOUT_S)
        producer.flush(0)

    if task_count <= 0:
        return
    with ThreadPoolExecutor(min(task_count, _PARALLEL_FENCES)) as pool:
        list(pool.map(fence, range(task_count)))  # re-raises the first failure
    log.info("Fenced %d task producer(s) of %s", task_count, connector)


def fence_zombies(herder: DistributedHerder, name: str) -> None:
    """The leader's round of zombie fencing for ``name`` (see the module docs)."""
    snap = herder.configs.snapshot()
    if not snap.contains(name):
        raise NotFoundError(f"Unknown connector: {name}")
    previous = snap.task_count_record(name)
    current = snap.task_count(name)
    if previous is not None and not (previous == 1 and current == 1):
        worker = herder.config.originals()
        fence_producers(worker, name, previous, herder.config.group_id)
    herder.configs.put_task_count_record(name, current)


def ready_to_start(herder: DistributedHerder, name: str, kind: str) -> bool:
    """Whether tasks of ``name``'s committed generation may start here; if they are pending
    fencing, start (or ask the leader for) a round of fencing and answer ``False`` — the
    caller tries again on a later tick, once the task-count record has been read."""
    if kind != "source" or not herder.config.exactly_once_source_enabled:
        return True
    if not herder.configs.snapshot().pending_fencing(name):
        return True
    try:
        if herder.is_leader():
            fence_zombies(herder, name)
            return not herder.configs.snapshot().pending_fencing(name)
        _ask_leader(herder, name)
    except Exception as exc:
        log.warning("Zombie fencing of %s failed (retrying): %s", name, exc)
    return False


def _ask_leader(herder: DistributedHerder, name: str) -> None:
    leader = herder.leader_url()
    if leader is None:
        raise ConnectionError("no known leader")
    from sparkcat.runtime.distributed.signing import sign

    body = b""
    headers: dict[str, str] = {}
    key = herder.snapshot.session_key
    if key is not None:
        algorithm = herder.config.get_string("inter.worker.signature.algorithm")
        headers.update(sign(key.key, body, algorithm))
    url = f"{leader.rstrip('/')}/connectors/{name}/fence?forward=true"
    status, text = herder.rest_client.send("PUT", url, body, headers, timeout_s=60.0)
    if status >= 300:
        message = text.decode("utf-8", "replace")
        try:
            message = orjson.loads(text).get("message", message)
        except (orjson.JSONDecodeError, AttributeError):
            pass
        raise ConnectError(f"leader answered {status}: {message}")
