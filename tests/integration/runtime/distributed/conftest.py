"""A distributed herder on the real config, offset and status stores (the broker), without
Spark or a group membership: what the herder writes is what another worker's stores read."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.group_member import group_member

from sparkcat.runtime.distributed.herder import DistributedHerder


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
    with group_member(worker, "w:1", engine=None) as herder:
        yield herder
