"""The offsets REST API (KIP-875) and ``initial_offsets`` (KIP-995) on a distributed worker.

The operations themselves are the shared herder's (:mod:`sparkcat.runtime.herder.offsets`):
source offsets are records of the offsets topic, written through the worker's
:class:`~sparkcat.runtime.stores.kafka_offsets.KafkaOffsetBackingStore` (Kafka's key and value
bytes, murmur2-partitioned); sink offsets are the ``connect-<name>`` consumer group's, changed
with the admin client. What differs in a cluster is where the connector is known from and who
may write, as in Kafka's ``DistributedHerder``:

- ``GET .../offsets`` is answered by any worker, from its view of the config topic (the
  connector need not run there) after reading the offsets topic to its end.
- ``PATCH``/``DELETE .../offsets`` run on the leader (a follower forwards them,
  :mod:`.forwarding`); the connector must be STOPPED in the config topic (target state
  STOPPED and a committed task count of 0). With exactly-once source support enabled, the
  leader first fences the producers of the connector's last task generation, as Kafka does.
- ``POST /connectors`` with ``initial_offsets``: the leader writes the offsets, then the
  connector config (and ``initial_state``); if the config write fails, the offsets are wiped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sparkcat.api.errors import AlreadyExistsError, NotFoundError
from sparkcat.runtime.herder.state import ManagedConnector, TargetState, parse_initial_state
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    valid_config,
    validate_connector_config,
)
from sparkcat.runtime.rest.entities import ConnectorInfo
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.stores import configs as store_configs

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder

log = logging.getLogger(__name__)

_READ_TIMEOUT_S = 30.0


def offsets_subject(herder: DistributedHerder, name: str) -> tuple[str, dict[str, str]]:
    """``(kind, config)`` of ``name`` from the config topic, offsets topic read to its end."""
    config = herder.configs.snapshot().connector_config(name)
    if config is None:
        raise NotFoundError(f"Connector {name} not found")
    _catch_up(herder)
    return str(herder.kind_of(name, config)), dict(config)


def stopped_connector(herder: DistributedHerder, name: str) -> ManagedConnector:
    """The leader's checks before offsets are modified; a record of the (unstarted) connector
    for the shared herder's ``_modify_source``/``_modify_sink``."""
    herder.require_leader("modify the offsets of a connector")
    snap = herder.configs.snapshot()
    config = snap.connector_config(name)
    if config is None:
        raise NotFoundError(f"Connector {name} not found")
    if snap.target_state(name) is not store_configs.TargetState.STOPPED or snap.task_count(name):
        raise BadRequestError(
            "Connectors must be in the STOPPED state before their offsets can be modified. "
            "This can be done for the specified connector by issuing a 'PUT' request to the "
            f"'/connectors/{name}/stop' endpoint"
        )
    cls = herder.registry.resolve(config.get("connector.class", ""), "connector")
    kind = herder.kind_of(name, config)
    if kind == "source":
        _fence_last_generation(herder, name, snap.task_count_record(name))
    _catch_up(herder)
    return ManagedConnector(name, dict(config), kind, cls, TargetState.STOPPED)


def _fence_last_generation(herder: DistributedHerder, name: str, count: int | None) -> None:
    """With exactly-once source support, zombies of the last task generation must not write
    offsets after the change: fence their transactional producers first (Kafka's order)."""
    if not herder.config.exactly_once_source_enabled or not count:
        return
    from sparkcat.runtime.distributed.exactly_once import fence_producers

    fence_producers(herder.config.originals(), name, count, herder.config.group_id)


def _catch_up(herder: DistributedHerder) -> None:
    read_to_end = getattr(herder.offset_store, "read_to_end", None)
    if read_to_end is not None:
        read_to_end(_READ_TIMEOUT_S)


def create_connector(
    herder: DistributedHerder,
    name: str,
    config: Mapping[str, str],
    initial_state: str | None,
    initial_offsets: Any,
) -> ConnectorInfo:
    """``POST /connectors`` on the leader: validate, write any initial offsets, then the config
    with its target state (one write, target state first, as Kafka)."""
    name = name.strip()
    given = check_connector_name(name, dict(config))
    target = parse_initial_state(initial_state)
    herder.require_leader("create a connector")
    validation = validate_connector_config(given, herder.registry, herder.worker_config)
    props = valid_config(validation, given)
    if herder.configs.contains(name):
        raise AlreadyExistsError(f"Connector {name} already exists")
    status = None
    if initial_offsets is not None:
        _catch_up(herder)
        status = herder.write_initial_offsets(name, validation, props, initial_offsets)
    with herder.initial_offsets_cleanup(name, validation.kind, props, status):
        herder.configs.put_connector_config(name, props, store_configs.TargetState(target.value))
    return ConnectorInfo(name, props, [], validation.kind, offsets_status=status)


__all__ = ["create_connector", "offsets_subject", "stopped_connector"]
