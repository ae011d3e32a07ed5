"""Two clusters for the MirrorMaker tests: the session's broker is "A", a second embedded
broker started for the module is "B"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparkcat.kafka.broker import EmbeddedBroker


@pytest.fixture(scope="module")
def second_broker() -> Iterator[str]:
    """Bootstrap servers of a second embedded broker, for the module's tests."""
    with EmbeddedBroker() as broker:
        yield broker.bootstrap_servers
