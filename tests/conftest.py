"""Suite-wide fixtures: the Kafka-compatible broker and unique topic names.

``kafka_broker`` starts one embedded tansu broker for the whole test session (about 20 ms)
and stops it at the end. Set ``SPARKCAT_TEST_BOOTSTRAP=host:port`` to run the suite against
an external Kafka instead. If tansu cannot start, every test using the fixture errors (it
is never skipped: a broker that silently went missing would hide failures).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

BOOTSTRAP_ENV = "SPARKCAT_TEST_BOOTSTRAP"


@dataclass(frozen=True)
class KafkaBroker:
    """What tests know of the broker: where it is, and whether it is the embedded tansu."""

    bootstrap_servers: str
    embedded: bool

    def __str__(self) -> str:
        return self.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """The session's broker (tansu on a free loopback port, or ``$SPARKCAT_TEST_BOOTSTRAP``)."""
    external = os.environ.get(BOOTSTRAP_ENV, "").strip()
    if external:
        yield KafkaBroker(external, embedded=False)
        return
    from sparkcat.kafka.broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield KafkaBroker(broker.bootstrap_servers, embedded=True)


@pytest.fixture
def unique_topic(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """A factory of topic names unique to this run: ``unique_topic("in")`` ->
    ``"in-<test name>-<8 hex>"``. The broker lives for the whole session, so tests must not
    share topics; create them explicitly (tansu auto-creates unknown topics with 4
    partitions on first metadata request)."""
    test_name = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:80]

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{test_name}-{uuid.uuid4().hex[:8]}"

    return make


@pytest.fixture(scope="session")
def schema_registry() -> Iterator[str]:
    """The URL of the session's Schema-Registry-compatible test server
    (``tests/support/schema_registry.py``) on a free loopback port."""
    from tests.support.schema_registry import SchemaRegistryServer

    server = SchemaRegistryServer().start()
    try:
        yield server.url
    finally:
        server.stop()
