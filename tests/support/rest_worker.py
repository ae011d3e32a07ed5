"""A standalone worker in the test process: the herder on a real SparkEngine, REST on a free
port, answered over HTTP as a user's tools would reach it."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tests.support.ports import free_port

from sparkcat.engine import SparkEngine
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig


@contextmanager
def rest_worker(spark: Any, props: Mapping[str, str]) -> Iterator[httpx.Client]:
    """Run a worker with ``props`` on ``spark``; yield a client of its REST API.

    A ``plugin.path`` entry is also put on this process's ``sys.path`` for the worker's life,
    so the driver imports the test plugins (``module:Class``) that executors get shipped."""
    plugin_path = props.get("plugin.path")
    if plugin_path:
        sys.path.insert(0, plugin_path)
    store = MemoryOffsetStore()
    engine = SparkEngine(dict(props), store, session=spark)
    port = free_port()
    herder = StandaloneHerder(WorkerConfig(dict(props)), engine, store, PluginRegistry(),
                              f"127.0.0.1:{port}")  # fmt: skip
    herder.mark_ready()
    rest = RestServer(create_app(herder), f"http://127.0.0.1:{port}").start()
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    try:
        yield client
    finally:
        client.close()
        rest.stop()
        engine.close()
        if plugin_path:
            sys.path.remove(plugin_path)


def scrape(client: httpx.Client) -> dict[tuple[str, str], float]:
    """``GET /metrics`` as ``{(sample name, connector label): value}``."""
    text = client.get("/metrics").text
    return {
        (s.name, s.labels.get("connector", "")): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if "status" not in s.labels
    }
