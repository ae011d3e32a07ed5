"""The worker's metrics and status page end to end: a herder on the session's SparkSession and
broker, the REST server on a real port, the page in a real headless Chromium (Playwright).

Chromium is Debian's ``chromium`` package. When it is missing the test installs it with apt
if it runs as root, and otherwise fails saying which package to install.
"""

from __future__ import annotations

import shutil
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.apt import apt_install
from tests.support.engine import NullEngine
from tests.support.ports import free_port
from tests.support.rest_worker import rest_worker, scrape
from tests.support.waiting import wait_for

from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

CHROMIUM_PACKAGE = "chromium"
TOTAL = 10_000


def chromium_path() -> str:
    apt_install([CHROMIUM_PACKAGE], lambda: shutil.which("chromium") is not None, recommends=True)
    path = shutil.which("chromium")
    if path is None:
        pytest.fail(
            f"The status-page test needs a headless Chromium: install Debian's "
            f"'{CHROMIUM_PACKAGE}' package (apt-get install {CHROMIUM_PACKAGE})",
            pytrace=False,
        )
    return path


@pytest.fixture
def worker(spark: Any, kafka_broker: Any, tmp_path: Path) -> Iterator[httpx.Client]:
    """A standalone worker in this process: REST on a free port, connectors on Spark."""
    props = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "max.batch.ms": "1000",
        "metrics.sample.window.ms": "2000",
        "metrics.num.samples": "3",
    }
    with rest_worker(spark, props) as client:
        yield client


class Appender(threading.Thread):
    """Appends lines to the source file while it runs: data keeps flowing."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.done = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.done.wait(0.1):
            with self.path.open("a") as f:
                f.writelines(f"more-{n + i}\n" for i in range(300))
            n += 300


@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.slow
def test_metrics_and_the_status_page(worker: httpx.Client, tmp_path: Path) -> None:
    executable = chromium_path()
    topic = f"ui-{uuid.uuid4().hex[:8]}"
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"line-{i}\n" for i in range(TOTAL)))
    for name, config in (
        ("src", {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}),
        ("snk", {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}),
    ):
        created = worker.post("/connectors", json={"name": name, "config": config})
        assert created.status_code == 201, created.text

    write_total = ("kafka_connect_source_task_metrics_source_record_write_total", "src")
    read_total = ("kafka_connect_sink_task_metrics_sink_record_read_total", "snk")
    wait_for(lambda: scrape(worker).get(read_total) == TOTAL, 90, "10,000 records in the sink")
    values = scrape(worker)
    assert values[write_total] == TOTAL
    assert values[("kafka_connect_sink_task_metrics_sink_record_send_total", "snk")] == TOTAL
    assert values[("kafka_connect_connect_worker_metrics_connector_count", "")] == 2
    assert values[("kafka_connect_connect_worker_metrics_task_startup_success_total", "")] == 2

    from playwright.sync_api import sync_playwright

    appender = Appender(source_file)
    appender.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 480})
                page.goto(str(worker.base_url).rstrip("/") + "/ui")
                page.wait_for_selector('tr[data-connector="src"]', timeout=20_000)
                page.wait_for_selector('tr[data-connector="snk"]', timeout=20_000)
                rate = 'tr[data-connector="src"] .rate-value'
                seen: set[str] = set()

                def rates_moved() -> bool:
                    value = page.get_attribute(rate, "data-value") or "null"
                    if value not in ("null", "0"):
                        seen.add(value)
                    return len(seen) >= 3

                wait_for(rates_moved, 60, f"the records/s of src to move (saw {seen})")
                page.screenshot(path=str(tmp_path / "status-page.png"), full_page=True)
                page.click('tr[data-connector="src"] button[data-action="pause"]')
                paused = 'tr[data-connector="src"] [data-state="PAUSED"]'
                page.wait_for_selector(paused, timeout=20_000)
                status = worker.get("/connectors/src/status").json()
                assert status["connector"]["state"] == "PAUSED"
                page.wait_for_selector('tr[data-connector="src"] button[data-action="resume"]')
                page.screenshot(path=str(tmp_path / "status-page-paused.png"), full_page=True)
            finally:
                browser.close()
    finally:
        appender.done.set()
        appender.join()
    print(f"screenshots: {tmp_path}/status-page*.png", file=sys.stderr)
    assert (tmp_path / "status-page.png").stat().st_size > 1000


def test_the_page_shows_the_last_error_and_stops_a_connector(tmp_path: Path) -> None:
    """No Spark needed: a herder on a null engine, a task reported FAILED with its trace."""
    executable = chromium_path()
    props = {
        "bootstrap.servers": "localhost:9092",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
    }
    store = MemoryOffsetStore()
    herder = StandaloneHerder(WorkerConfig(props), NullEngine(), store, PluginRegistry(), "w:1")
    herder.mark_ready()
    herder.create_connector("broken", {"connector.class": "FileStreamSink", "file": "out",
                                       "topics": "t"})  # fmt: skip
    herder.on_task_failed("broken", 0, "Traceback (most recent call last):\nValueError: boom")
    rest = RestServer(create_app(herder), f"http://127.0.0.1:{free_port()}").start()
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, headless=True)
            try:
                page = browser.new_page()
                page.goto(rest.url + "ui")
                row = 'tr[data-connector="broken"]'
                page.click(f"{row} details.trace summary")
                assert "ValueError: boom" in page.inner_text(f"{row} details.trace pre")
                # It stays open across the page's refreshes (rows are rebuilt each time).
                refreshes = int(page.get_attribute("body", "data-refreshes") or 0)
                page.wait_for_function(
                    f"Number(document.body.dataset.refreshes) > {refreshes}", timeout=10_000
                )
                assert "ValueError: boom" in page.inner_text(f"{row} details.trace pre")
                page.click(f"{row} button[data-action='stop']")
                page.wait_for_selector(f'{row} [data-state="STOPPED"]', timeout=10_000)
                assert herder.connector_status("broken").connector.state == "STOPPED"
                page.screenshot(path=str(tmp_path / "status-page-stopped.png"))
            finally:
                browser.close()
    finally:
        rest.stop()
        store.close()
