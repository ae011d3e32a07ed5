"""Integration-test fixtures: one SparkSession per test session (the broker is in tests/)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

PLUGINS_DIR = Path(__file__).parent / "plugins"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The session-scoped SparkSession shared by every test that runs connectors on Spark."""
    from tests.support.jdbc_jars import jdbc_jars

    from sparkcat.engine.session import build_session

    settings = {"spark.master": "local[12,2]", "spark.app.name": "sparkcat-tests"}
    jars = jdbc_jars()  # for Spark's JDBC data source (the Spark-native connector tests)
    if jars:
        settings["spark.jars"] = ",".join(map(str, jars))
    session = build_session(settings)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def plugins_dir() -> Path:
    """A ``plugin.path`` directory holding the test-only plugins (importable on executors)."""
    return PLUGINS_DIR
