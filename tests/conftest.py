"""Suite-wide fixtures: the Kafka-compatible broker and unique topic names; how pytest-xdist
splits the suite.

``kafka_broker`` starts one embedded tansu broker for the whole test session (about 20 ms)
and stops it at the end. Set ``SPARKCAT_TEST_BOOTSTRAP=host:port`` to run the suite against
an external Kafka instead. If tansu cannot start, every test using the fixture errors (it
is never skipped: a broker that silently went missing would hide failures).

``make test`` runs the suite in two pytest-xdist workers (``-n 2 --dist loadfile``;
``TEST_WORKERS=1`` for one process), each with its own broker, SparkSession and port range
(``tests/support/ports.py``). Modules are never split, so module-scoped clusters start
once. The modules that start JVMs of their own (the end-to-end modules' worker processes,
the Spark-cluster tests' master, workers and executors, the second member of an embedded
cluster) form one *lane* that runs first, one module after another, on one worker: two of
them side by side would put five or more JVMs on the two cores at once, where Spark's Python
workers miss its fixed 10 s connect-back. Everything else, with at most the session's one
JVM, is dealt to whichever worker is free.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

BOOTSTRAP_ENV = "SPARKCAT_TEST_BOOTSTRAP"
# Session fixtures kept in tests/support: the throwaway MariaDB and PostgreSQL of the CDC tests.
pytest_plugins = ["tests.support.cdc_mariadb", "tests.support.cdc_servers"]
# Modules that start JVMs of their own (worker processes, Spark clusters, a second embedded
# member): run one after another (see above).
HEAVY_LANE = (
    "tests/e2e/",
    "tests/packaging/",
    "tests/integration/cluster/",
    "tests/integration/embedded/test_cluster.py",
    "tests/integration/engine/test_class_archive.py",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Whole modules to workers (``loadfile``), the heavy lane as one unit dealt first."""
    if config.getvalue("dist") not in ("loadfile", "loadscope"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "heavy-lane" if module.startswith(HEAVY_LANE) else module

    # keep collection order (the heavy lane is collected first) instead of largest-first
    config.option.loadscopereorder = False
    return LaneScheduling(config, log)


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
