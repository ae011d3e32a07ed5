"""Fixtures shared by the lease tests (no Spark: leases run in the test process)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sparkcat.engine.control_server import ControlServer
from sparkcat.runtime.tasks import client_cache


@pytest.fixture(scope="module")
def servers(kafka_broker: Any) -> Iterator[str]:
    """The session's broker; a module's cached clients are closed when it is done."""
    yield kafka_broker.bootstrap_servers
    client_cache.close_all()


@pytest.fixture(scope="module")
def control() -> Iterator[ControlServer]:
    """A real lease-control endpoint on loopback, as the worker serves it."""
    server = ControlServer({"spark.master": "local[2]"})
    yield server
    server.close()
