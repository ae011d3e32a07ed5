"""Plugin isolation as a lease sees it: real broker, leases in this process, no Spark."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.support.leases import lease_spec
from tests.support.plugins import source_task, topic_values, versioned_plugin

from sparkcat.runtime.tasks.lease import LeaseSpec, run_lease

pytestmark = pytest.mark.broker


def lease(servers: str, entry: Path, plugin: str, topic: str) -> LeaseSpec:
    task = {"task.class": source_task(plugin), "topic": topic}
    return lease_spec(
        servers, "source", plugin, task, worker={"plugin.path": str(entry)}, max_ms=1500
    )


def test_leases_of_two_plugins_at_once_each_import_their_own_library(
    servers: str, tmp_path: Path
) -> None:
    entry = tmp_path / "connectors"
    versions = {"acme-a": 1, "acme-b": 2}
    for plugin, version in versions.items():
        versioned_plugin(entry, plugin, version)
    topics = {plugin: f"{plugin}-{uuid.uuid4().hex[:8]}" for plugin in versions}

    # Both tasks poll for the whole 1.5 s lease on two threads of this one process.
    with ThreadPoolExecutor(len(versions)) as pool:
        results = list(pool.map(lambda p: run_lease(lease(servers, entry, p, topics[p])), versions))

    for plugin, result in zip(versions, results, strict=True):
        assert result.trace is None, result.trace
        assert result.records > 5
        values = topic_values(servers, topics[plugin], result.records)
        version = versions[plugin]
        assert set(values) == {f"{plugin} import={version} lazy={version}"}
