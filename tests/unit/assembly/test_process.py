"""The shutdown list every mode shares: reverse order, failures logged, once."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from sparkcat.assembly.process import SHUTDOWN_LINE, Process, worker_id


def _appender(stopped: list[str], part: str) -> Callable[[], None]:
    return lambda: stopped.append(part)


def test_parts_stop_in_reverse_order_of_starting() -> None:
    process = Process()
    stopped: list[str] = []
    for part in ("broker", "stores", "engine", "rest"):
        process.on_shutdown(part, _appender(stopped, part))
    process.on_shutdown("status store", lambda: stopped.append("flush"),
                        lambda: stopped.append("close"))  # fmt: skip
    process.shutdown()
    assert stopped == ["flush", "close", "rest", "engine", "stores", "broker"]


def test_a_part_that_fails_to_stop_does_not_keep_the_others_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    process = Process()
    stopped: list[str] = []
    process.on_shutdown("broker", lambda: stopped.append("broker"))

    def broken() -> None:
        raise RuntimeError("stuck")

    process.on_shutdown("engine", broken)
    with caplog.at_level(logging.INFO, logger="sparkcat"):
        process.shutdown()
    assert stopped == ["broker"]
    assert "Could not stop the engine cleanly" in caplog.text


def test_shutdown_runs_once_and_says_so_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    process = Process()
    stopped: list[str] = []
    process.on_shutdown("engine", lambda: stopped.append("engine"))
    with caplog.at_level(logging.INFO, logger="sparkcat"):
        process.shutdown()
        process.shutdown(announce=False)
    assert stopped == ["engine"]
    assert [r.getMessage() for r in caplog.records].count(SHUTDOWN_LINE) == 1


def test_an_embedded_member_stops_without_the_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sparkcat"):
        Process().shutdown(announce=False)
    assert SHUTDOWN_LINE not in caplog.text


def test_worker_id_is_the_advertised_rest_address() -> None:
    assert worker_id({"rest.advertised.host.name": "w1"}, 8083) == "w1:8083"
    config = {"rest.advertised.host.name": "w1", "rest.advertised.port": "9000"}
    assert worker_id(config, 8083) == "w1:9000"
