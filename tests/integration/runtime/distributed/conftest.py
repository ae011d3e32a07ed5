"""A distributed herder on the real config, offset and status stores (the broker), without
Spark or a group membership: what the herder writes is what another worker's stores read."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.herder import DistributedHerder
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.stores.kafka_configs import KafkaConfigBackingStore
from sparkcat.runtime.stores.kafka_offsets import KafkaOffsetBackingStore
from sparkcat.runtime.stores.kafka_statuses import KafkaStatusBackingStore


@pytest.fixture
def worker(kafka_broker: Any, unique_topic: Callable[[str], str]) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "group.id": f"g-{uuid.uuid4().hex[:8]}",
        "config.storage.topic": unique_topic("configs"),
        "offset.storage.topic": unique_topic("offsets"),
        "status.storage.topic": unique_topic("status"),
        "offset.storage.partitions": "3",
        "status.storage.partitions": "1",
        **{f"{k}.storage.replication.factor": "1" for k in ("config", "offset", "status")},
    }


@pytest.fixture
def leader(worker: dict[str, str]) -> Iterator[DistributedHerder]:
    """A herder that is the group's leader (its membership is not what is tested here)."""
    config = DistributedConfig(worker)
    configs = KafkaConfigBackingStore(config.strings())
    offsets = KafkaOffsetBackingStore(config.strings())
    statuses = KafkaStatusBackingStore(config.strings())
    for store in (configs, offsets, statuses):
        store.start()
    registry = default_registry(config.plugin_path())
    herder = DistributedHerder(config, None, offsets, registry, "w:1", configs, statuses,  # type: ignore[arg-type]
                               "http://w:1/")  # fmt: skip
    herder.member = SimpleNamespace(
        is_leader=True,
        leader_url="http://w:1/",
        request_rejoin=lambda: None,
        rejoin_needed=False,
        wakeup=lambda: None,
    )
    herder.rebalancing = False
    yield herder
    statuses.stop()
    offsets.close()
    configs.stop()
