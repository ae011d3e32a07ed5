"""Each pytest-xdist worker hands out ports from its own slice, so two workers' children
never race for one port."""

from __future__ import annotations

import pytest
from tests.support import ports


def _range_for(
    monkeypatch: pytest.MonkeyPatch, worker: str | None, count: str | None
) -> tuple[int, int]:
    for key, value in (("PYTEST_XDIST_WORKER", worker), ("PYTEST_XDIST_WORKER_COUNT", count)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    return ports.port_range()


def test_xdist_workers_get_disjoint_slices_of_the_whole_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole = _range_for(monkeypatch, None, None)
    first = _range_for(monkeypatch, "gw0", "2")
    second = _range_for(monkeypatch, "gw1", "2")
    assert whole[0] <= first[0] <= first[1] < second[0] <= second[1] <= whole[1]
    assert second[1] - first[0] >= (whole[1] - whole[0]) - 2  # nothing of note left unused
    assert whole[1] < ports._ephemeral_low()  # never the kernel's ephemeral range


def test_free_port_stays_in_this_workers_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    low, high = _range_for(monkeypatch, "gw1", "2")
    drawn = {ports.free_port() for _ in range(20)}
    assert len(drawn) == 20
    assert all(low <= port <= high for port in drawn)
