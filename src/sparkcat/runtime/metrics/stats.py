"""Windowed statistics, as Kafka's ``SampledStat`` family computes them.

A :class:`Windowed` keeps ``samples`` samples of ``window_ms`` each (the worker's
``metrics.num.samples`` and ``metrics.sample.window.ms``); a sample older than
``samples * window_ms`` is dropped, so rates, averages and maxima describe the recent past.
A rate divides what the retained samples hold by the time they cover, padded (as Kafka's
``Rate.windowSize`` does) to at least ``samples - 1`` full windows, so a rate does not jump to
a huge value right after the first sample.

Values arrive in lumps (one lease's totals at a time), so each record carries a sum, a count
and a maximum. Nothing here locks: the owner (:class:`~sparkcat.runtime.metrics.registry.
ConnectMetrics`) does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MetricConfig", "StateTime", "Windowed"]

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class MetricConfig:
    """``metrics.sample.window.ms`` and ``metrics.num.samples``; ``clock`` in seconds."""

    window_ms: int = 30_000
    samples: int = 2
    clock: Clock = time.monotonic

    @property
    def window_s(self) -> float:
        return max(self.window_ms, 1) / 1000.0


class _Sample:
    __slots__ = ("count", "maximum", "minimum", "start", "total")

    def __init__(self, start: float) -> None:
        self.start = start
        self.total = 0.0
        self.count = 0
        self.maximum = -math.inf
        self.minimum = math.inf


class Windowed:
    """Samples of sums, counts and maxima over a sliding window (see the module docs)."""

    __slots__ = ("_config", "_samples")

    def __init__(self, config: MetricConfig) -> None:
        self._config = config
        self._samples: list[_Sample] = []

    def record(
        self,
        total: float,
        count: int = 1,
        maximum: float | None = None,
        minimum: float | None = None,
    ) -> None:
        """Add ``total`` made of ``count`` values whose largest was ``maximum`` and smallest
        ``minimum`` (both default to ``total``: one value)."""
        now = self._config.clock()
        current = self._current(now)
        current.total += total
        current.count += count
        top = total if maximum is None else maximum
        if top > current.maximum:
            current.maximum = top
        bottom = total if minimum is None else minimum
        if bottom < current.minimum:
            current.minimum = bottom

    def _current(self, now: float) -> _Sample:
        samples = self._samples
        if not samples or now >= samples[-1].start + self._config.window_s:
            samples.append(_Sample(now))
            if len(samples) > self._config.samples:
                del samples[0]
        return samples[-1]

    def _live(self, now: float) -> list[_Sample]:
        horizon = now - self._config.samples * self._config.window_s
        return [s for s in self._samples if s.start + self._config.window_s > horizon]

    def rate(self) -> float:
        """Per second: the retained totals over the time they cover (Kafka's ``Rate``)."""
        now = self._config.clock()
        live = self._live(now)
        if not live:
            return 0.0
        window = self._config.window_s
        elapsed = now - live[0].start
        minimum = (self._config.samples - 1) * window
        return sum(s.total for s in live) / max(elapsed, minimum, window / 1000.0)

    def avg(self) -> float:
        """Mean of the recorded values in the window (``NaN`` without any, as Kafka's Avg)."""
        live = self._live(self._config.clock())
        count = sum(s.count for s in live)
        return sum(s.total for s in live) / count if count else math.nan

    def max(self) -> float:
        """Largest value in the window (``NaN`` without any, as Kafka's Max)."""
        live = [s for s in self._live(self._config.clock()) if s.count]
        return max(s.maximum for s in live) if live else math.nan

    def min(self) -> float:
        """Smallest value in the window (``NaN`` without any, as Kafka's Min)."""
        live = [s for s in self._live(self._config.clock()) if s.count]
        return min(s.minimum for s in live) if live else math.nan


class StateTime:
    """Share of the recent window spent in each state (``running-ratio``, ``pause-ratio``)."""

    __slots__ = ("_config", "_since", "_state", "_times")

    def __init__(self, config: MetricConfig, state: str) -> None:
        self._config = config
        self._state = state
        self._since = config.clock()
        self._times: dict[str, Windowed] = {}

    @property
    def state(self) -> str:
        return self._state

    def change(self, state: str) -> None:
        if state == self._state:
            return
        now = self._config.clock()
        self._close(now)
        self._state, self._since = state, now

    def _close(self, now: float) -> None:
        spent = now - self._since
        if spent > 0:
            times = self._times.get(self._state)
            if times is None:
                times = self._times[self._state] = Windowed(self._config)
            times.record(spent)
        self._since = now

    def ratio(self, state: str) -> float:
        """Fraction (0..1) of the time in the window spent in ``state``."""
        self._close(self._config.clock())
        spent = {name: w.rate() for name, w in self._times.items()}
        total = sum(spent.values())
        return spent.get(state, 0.0) / total if total > 0 else 0.0
