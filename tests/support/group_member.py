"""A member of a distributed group on the real config, offset and status topics, without
the group protocol: it believes it leads, and a test assigns it work directly
(:func:`run_here`). The engine is :class:`~tests.support.engine.PlanRecordingEngine`, so no
Spark is needed; a test plays the engine's part by calling the herder as the engine does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tests.support.engine import PlanRecordingEngine

from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.herder import DistributedHerder
from sparkcat.runtime.distributed.protocol import ExtendedAssignment
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.rest.entities import ConnectorTaskId
from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore

_RECORDING: Any = object()  # the default engine: a new PlanRecordingEngine per member


@contextlib.contextmanager
def group_member(
    worker: dict[str, str], worker_id: str, engine: Any = _RECORDING
) -> Iterator[DistributedHerder]:
    """A worker of the group on the real stores (read from the start of their topics), with
    the engine double; it believes it leads (its membership is not what is tested here).
    ``engine=None`` for a herder that must never reach an engine."""
    config = DistributedConfig(worker)
    configs = KafkaConfigBackingStore(config.strings())
    offsets = KafkaOffsetBackingStore(config.strings())
    statuses = KafkaStatusBackingStore(config.strings())
    for store in (configs, offsets, statuses):
        store.start()
    url = f"http://{worker_id}/"
    engine = PlanRecordingEngine() if engine is _RECORDING else engine
    herder = DistributedHerder(config, engine, offsets,
                               default_registry(config.plugin_path()), worker_id, configs,
                               statuses, url)  # fmt: skip
    herder.member = _Member(url)  # type: ignore[assignment]
    herder.rebalancing = False
    try:
        yield herder
    finally:
        statuses.stop()
        offsets.close()
        configs.stop()


class _Member:
    is_leader = True
    rejoin_needed = False

    def __init__(self, url: str) -> None:
        self.leader_url = url

    def request_rejoin(self) -> None:
        pass

    def wakeup(self) -> None:
        pass


def run_here(herder: DistributedHerder, name: str) -> None:
    """Assign the connector and its task 0 to ``herder``; ticks until its plan runs."""
    herder.group_generation = 3
    herder.assignment = ExtendedAssignment(
        version=2, error=0, leader=herder.worker_id, leader_url=herder.rest_url,
        config_offset=herder.configs.snapshot().offset, connectors=(name,),
        tasks=(ConnectorTaskId(name, 0),),
    )  # fmt: skip
    for _ in range(3):  # the owner writes the task configs, then runs them
        herder.tick()
    assert name in herder.worker.engine.plans  # type: ignore[attr-defined]
