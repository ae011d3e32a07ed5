"""Windowed statistics against a hand-driven clock."""

from __future__ import annotations

import math

import pytest

from sparkcat.runtime.metrics.stats import MetricConfig, StateTime, Windowed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def config(clock: Clock, window_ms: int = 1000, samples: int = 2) -> MetricConfig:
    return MetricConfig(window_ms=window_ms, samples=samples, clock=clock)


def test_rate_is_padded_to_the_full_windows_at_first(clock: Clock) -> None:
    rate = Windowed(config(clock))
    rate.record(100)
    clock.now += 0.1
    # Kafka pads the elapsed time to (samples - 1) windows: 100 records / 1 s.
    assert rate.rate() == pytest.approx(100.0)


def test_rate_follows_the_recent_window_and_forgets_old_samples(clock: Clock) -> None:
    rate = Windowed(config(clock))
    for _ in range(4):
        rate.record(50)
        clock.now += 0.5
    # Samples of 1 s: the last two hold 200 records over 2 s.
    assert rate.rate() == pytest.approx(100.0)
    clock.now += 5
    assert rate.rate() == 0.0


def test_avg_and_max_of_lumps(clock: Clock) -> None:
    stat = Windowed(config(clock))
    assert math.isnan(stat.avg()) and math.isnan(stat.max())
    stat.record(30.0, count=3, maximum=20.0)
    stat.record(10.0, count=1, maximum=10.0)
    assert stat.avg() == pytest.approx(10.0)
    assert stat.max() == 20.0
    clock.now += 10
    assert math.isnan(stat.max())


def test_state_time_ratios(clock: Clock) -> None:
    states = StateTime(config(clock, window_ms=10_000), "running")
    clock.now += 3
    states.change("paused")
    clock.now += 1
    assert states.ratio("running") == pytest.approx(0.75)
    assert states.ratio("paused") == pytest.approx(0.25)
