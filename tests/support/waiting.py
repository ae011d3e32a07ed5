"""Polling with a deadline, the one way the suite waits for something that happens on another
thread, process or machine (a task state, a copied line, a committed offset)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol


class WatchedProcess(Protocol):
    """A process whose exit ends a wait early (the e2e tests' worker)."""

    returncode: int | None

    def exited(self) -> bool: ...

    def log_tail(self) -> str: ...


def wait_for(
    condition: Callable[[], Any],
    timeout: float,
    what: str | Callable[[], str],
    *,
    interval: float = 0.1,
    worker: WatchedProcess | None = None,
    retry_on: tuple[type[BaseException], ...] = (),
) -> Any:
    """Poll ``condition`` every ``interval`` s until it returns something truthy, and return it.

    Fails after ``timeout`` s with ``what`` (a description, or a function that describes the
    state at the time, such as a log tail). ``worker`` fails the wait as soon as that process
    exited, with its log tail, instead of after the timeout. ``retry_on`` lists exceptions of
    ``condition`` that count as "not yet" (a REST server still starting); the last result or
    exception is named in the failure.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = condition()
        except retry_on as exc:
            last = exc
        else:
            if last:
                return last
        if worker is not None and worker.exited():
            raise AssertionError(
                f"the worker exited ({worker.returncode}) while waiting for {_text(what)}:\n"
                + worker.log_tail()
            )
        if time.monotonic() >= deadline:
            tail = "" if worker is None else "\n" + worker.log_tail()
            seen = f"; last: {last!r}" if retry_on else ""
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for {_text(what)}{seen}{tail}"
            )
        time.sleep(interval)


def _text(what: str | Callable[[], str]) -> str:
    return what if isinstance(what, str) else what()
