"""Fixtures of the end-to-end tests; the worker process and its helpers are in
``tests/support/worker_process.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.worker_process import WorkerProcess


@pytest.fixture
def make_worker(tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    """A factory of :class:`WorkerProcess`; every worker is stopped at the end of the test."""
    workers: list[WorkerProcess] = []

    def make(worker_props: Path, connectors: list[Path], log_name: str = "worker.log") -> Any:
        worker = WorkerProcess(worker_props, connectors, tmp_path / log_name)
        workers.append(worker)
        return worker

    yield make
    for worker in workers:
        worker.cleanup()
