"""Lease control over HTTP: a real ControlServer on loopback and real ControlChannels."""

from __future__ import annotations

import gc
import http.client
import threading
import time
from collections.abc import Iterator

import pytest

from sparkcat.engine.control_server import ControlServer
from sparkcat.runtime.tasks.control import ControlChannel, parse_address


@pytest.fixture
def server() -> Iterator[ControlServer]:
    control = ControlServer({"spark.master": "local[2]"})
    yield control
    control.close()


def wait_until(predicate: object, timeout_s: float) -> float:
    """Seconds until ``predicate()`` held (fails after ``timeout_s``)."""
    started = time.monotonic()
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() - started < timeout_s, "condition not reached"
        time.sleep(0.005)
    return time.monotonic() - started


def get(address: str, token: str | None, query: str = "") -> tuple[int, bytes]:
    host, port, path, _ = parse_address(address)
    conn = http.client.HTTPConnection(host, port, timeout=5)
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    conn.request("GET", path + query, headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def test_local_master_listens_on_loopback_only(server: ControlServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    ("settings", "base"),
    [
        ({"spark.master": "local-cluster[2,1,1024]"}, "http://127.0.0.1:"),
        ({"spark.master": "spark://m:7077", "spark.driver.host": "10.1.2.3"}, "http://10.1.2.3:"),
        (
            {"spark.master": "yarn", "sparkcat.control.advertised.host": "drv.example"},
            "http://drv.example:",
        ),
    ],
)
def test_cluster_masters_advertise_the_driver_host(settings: dict[str, str], base: str) -> None:
    server = ControlServer(settings)
    try:
        assert server.base_url.startswith(base)
    finally:
        server.close()


def test_a_pause_reaches_a_running_channel_within_milliseconds(server: ControlServer) -> None:
    address = server.open_channel("run")
    channel = ControlChannel(address)
    assert channel.wait_first_answer(5)
    assert not channel.stop_requested()

    server.set_state(address, "pause")

    assert wait_until(channel.stop_requested, 1.0) < 0.2


def test_a_lease_started_after_a_stop_ends_at_once(server: ControlServer) -> None:
    address = server.open_channel("run")
    server.set_state(address, "stop")

    channel = ControlChannel(address)

    assert wait_until(channel.stop_requested, 1.0) < 0.5


def test_a_closed_channel_ends_its_leases(server: ControlServer) -> None:
    address = server.open_channel("run")
    channel = ControlChannel(address)
    assert channel.wait_first_answer(5)

    server.close_channel(address)

    wait_until(channel.stop_requested, 1.0)


def test_requests_without_the_worker_secret_are_refused(server: ControlServer) -> None:
    address = server.open_channel("run")
    _, _, _, token = parse_address(address)

    assert get(address, None)[0] == 401
    assert get(address, "x" + token)[0] == 401
    status, body = get(address, token, "?since=-1&wait_ms=0")
    assert status == 200 and b'"run"' in body
    assert get(address, token, "?since=x")[0] == 400


def test_a_channel_with_a_wrong_secret_never_stops_the_lease(server: ControlServer) -> None:
    address = server.open_channel("run")
    channel = ControlChannel(address.partition("#")[0] + "#forged")
    server.set_state(address, "stop")

    time.sleep(0.5)

    assert not channel.stop_requested()
    channel.close()


def test_an_unreachable_driver_only_means_no_early_end() -> None:
    channel = ControlChannel("http://127.0.0.1:9/v1/leases/k#t")
    time.sleep(0.3)

    assert not channel.stop_requested()
    channel.close()


def test_the_poller_thread_ends_with_its_lease(server: ControlServer) -> None:
    def lease() -> None:
        channel = ControlChannel(server.open_channel("run"))
        assert channel.wait_first_answer(5)

    before = {t.ident for t in threading.enumerate()}
    lease()
    gc.collect()

    wait_until(
        lambda: (
            not [
                t
                for t in threading.enumerate()
                if t.name == "sparkcat-lease-control" and t.ident not in before
            ]
        ),
        2.0,
    )


def test_no_address_means_no_thread_and_no_stop() -> None:
    channel = ControlChannel(None)

    assert not channel.stop_requested()
    assert channel.wait_first_answer(0)


def test_malformed_addresses_are_rejected() -> None:
    with pytest.raises(ValueError, match="Not a lease control address"):
        parse_address("file:///tmp/control#t")
    with pytest.raises(ValueError, match="Not a lease control address"):
        parse_address("http://h:1/v1/leases/k")


def test_a_lease_of_an_earlier_issue_is_told_stale(server: ControlServer) -> None:
    address = server.open_channel("run")
    first = server.new_issue(address)
    running = ControlChannel(first)
    assert running.wait_first_answer(5) and running.state() == "run"
    second = server.new_issue(address)  # the worker's tasks of this connector changed
    wait_until(running.stop_requested, 5)  # a running lease of the old issue ends at once
    assert running.state() == "stale"
    late = ControlChannel(first)  # e.g. a Spark retry of a lease of the old issue
    current = ControlChannel(second)
    try:
        assert late.wait_first_answer(5) and current.wait_first_answer(5)
        assert late.stop_requested() and late.state() == "stale"
        assert not current.stop_requested() and current.state() == "run"
    finally:
        for channel in (running, late, current):
            channel.close()


def test_a_relayed_channel_follows_the_hosts_answers_without_polling(
    server: ControlServer,
) -> None:
    from sparkcat.runtime.tasks.control import ChannelRelay, install_relay

    channel = server.open_channel("run")
    key = channel.partition("#")[0].rsplit("/", 1)[-1]
    old_issue = server.new_issue(channel)
    new_issue = server.new_issue(channel)
    relay = ChannelRelay(server.base_url, server.token)
    install_relay(relay)
    try:
        relay.update({key: {"state": "run", "issue": 2}})
        current, stale = ControlChannel(new_issue), ControlChannel(old_issue)
        assert current.state() == "run" and not current.stop_requested()
        assert stale.state() == "stale" and stale.stop_requested()
        relay.update({key: {"state": "pause", "issue": 2}})
        assert current.state() == "pause" and current.stop_requested()
        late = ControlChannel(new_issue)  # a lease started after the pause: told at once
        assert late.stop_requested()
        relay.update({key: {"state": "run", "issue": 2}})
        running = ControlChannel(new_issue)
        relay.update({})  # the channel was closed
        assert running.state() == "gone" and running.stop_requested()
        # A channel the host has not heard of (opened after its last answer) is polled.
        unheard = ControlChannel(server.new_issue(server.open_channel("run")))
        assert unheard.wait_first_answer(5) and unheard.state() == "run"
        unheard.close()
    finally:
        install_relay(None)
