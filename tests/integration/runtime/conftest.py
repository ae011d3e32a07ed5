"""Fixtures shared by the lease tests (no Spark: leases run in the test process)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sparkcat.runtime import client_cache


@pytest.fixture(scope="module")
def servers(kafka_broker: Any) -> Iterator[str]:
    """The session's broker; a module's cached clients are closed when it is done."""
    yield kafka_broker.bootstrap_servers
    client_cache.close_all()
