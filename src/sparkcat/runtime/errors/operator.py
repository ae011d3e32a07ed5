"""Retries and tolerance of per-record operations (Kafka's ``RetryWithToleranceOperator``).

Semantics, matching Kafka:

* An operation raising :class:`~sparkcat.api.errors.RetriableError` is retried while
  ``now < start + errors.retry.timeout`` (``-1`` = forever, ``0`` = never), waiting
  ``300 ms << (attempt - 1)``; once that exceeds ``errors.retry.delay.max.ms`` the wait is
  random in ``[0, errors.retry.delay.max.ms)``; a wait never goes past the deadline and ends
  early on :meth:`RetryWithToleranceOperator.trigger_stop`.
* Tolerable per stage: any ``Exception`` for TRANSFORMATION and the converters, only
  ``RetriableError`` elsewhere. Anything else → ``ConnectError("Unhandled exception in error
  handler")``.
* ``errors.tolerance=none``: the first failure → ``ConnectError("Tolerance exceeded in error
  handler")``; ``all``: the record is skipped (``execute`` returns ``None`` and the context
  says ``failed``).
* Kafka's quirk, kept: a retriable error that exhausted its retries marks the record failed
  and skipped **without** checking the tolerance.

Clock, sleep and random source are injectable so the backoff vectors are testable exactly.
"""

from __future__ import annotations

import logging
import random as _random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from enum import Enum
from typing import Any, Protocol, TypeVar

from sparkcat.api.config._types import public_module
from sparkcat.api.errors import ConfigError, ConnectError, RetriableError
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics

__all__ = [
    "RETRIES_DELAY_MIN_MS",
    "ErrorReporter",
    "ProcessingContext",
    "RetryWithToleranceOperator",
    "Stage",
    "ToleranceType",
    "class_name",
]

log = logging.getLogger(__name__)

V = TypeVar("V")

RETRIES_DELAY_MIN_MS = 300


class Stage(Enum):
    """Where in the pipeline an operation runs (Kafka's ``Stage``; ``.name`` is the text)."""

    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


_ANY_EXCEPTION = frozenset(
    {Stage.TRANSFORMATION, Stage.HEADER_CONVERTER, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER}
)


class ToleranceType(Enum):
    NONE = "none"
    ALL = "all"


def class_name(obj: Any) -> str:
    """The qualified name of a class (or of an object's class), ``module.Qualname``;
    built-in exceptions without the ``builtins.`` prefix."""
    cls = obj if isinstance(obj, type) else type(obj)
    module = public_module(cls.__module__)
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class ProcessingContext:
    """What is known about the record being processed: its ``original`` form (the consumed
    message on the sink side, the polled :class:`SourceRecord` on the source side), the
    current stage and executing class, the attempts, and the error once it failed."""

    __slots__ = ("attempt", "error", "executing_class", "original", "stage")

    def __init__(self, original: Any) -> None:
        self.original = original
        self.stage = Stage.KAFKA_CONSUME
        self.executing_class = ""
        self.error: BaseException | None = None
        self.attempt = 0

    @property
    def failed(self) -> bool:
        return self.error is not None


class ErrorReporter(Protocol):
    """Reports a failed context; the future completes when the report is durable."""

    def report(self, context: ProcessingContext) -> Future[None]: ...

    def close(self) -> None: ...


def _done() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


def all_of(futures: Iterable[Future[None]]) -> Future[None]:
    """A future that completes when all ``futures`` do (with the first failure, if any)."""
    pending = [f for f in futures if not f.done() or f.exception() is not None]
    if not pending:
        return _done()
    if len(pending) == 1:
        return pending[0]
    combined: Future[None] = Future()
    lock = threading.Lock()
    left = [len(pending)]

    def one_done(done: Future[None]) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        error = done.exception()
        if error is not None and not combined.done():
            combined.set_exception(error)
        elif last and not combined.done():
            combined.set_result(None)

    for future in pending:
        future.add_done_callback(one_done)
    return combined


class RetryWithToleranceOperator:
    """Runs operations with retries and tolerance, reporting failures (see module docs).

    ``clock_ms`` (monotonic milliseconds), ``sleep_ms`` (a wait that may return early) and
    ``random_below`` (an int in ``[0, n)``) default to the real ones.
    """

    def __init__(
        self,
        retry_timeout_ms: int,
        max_delay_ms: int,
        tolerance: ToleranceType,
        metrics: ErrorHandlingMetrics,
        *,
        clock_ms: Callable[[], int] | None = None,
        sleep_ms: Callable[[int], None] | None = None,
        random_below: Callable[[int], int] | None = None,
    ) -> None:
        self.retry_timeout_ms = retry_timeout_ms
        self.max_delay_ms = max_delay_ms
        self.tolerance = tolerance
        self.metrics = metrics
        self.reporters: list[ErrorReporter] = []
        self.total_failures = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._clock_ms = clock_ms or (lambda: int(time.monotonic() * 1000))
        self._sleep_ms = sleep_ms or (lambda ms: self._stop.wait(ms / 1000.0) and None)
        self._random_below = random_below or (lambda n: _random.randrange(n) if n > 0 else 0)

    @classmethod
    def from_config(
        cls, config: Mapping[str, str], metrics: ErrorHandlingMetrics, **kwargs: Any
    ) -> RetryWithToleranceOperator:
        """An operator for a connector config's ``errors.*`` keys (Kafka's defaults)."""
        tolerance = config.get("errors.tolerance", "none").strip().lower()
        if tolerance not in ("none", "all"):
            raise ConfigError(
                "errors.tolerance", tolerance, "String must be one of (case insensitive): none, all"
            )
        return cls(
            int(config.get("errors.retry.timeout", "0") or 0),
            int(config.get("errors.retry.delay.max.ms", "60000") or 60000),
            ToleranceType(tolerance),
            metrics,
            **kwargs,
        )

    # ------------------------------------------------------------------------- execute
    def execute(
        self,
        context: ProcessingContext,
        operation: Callable[[], V],
        stage: Stage,
        executing_class: Any,
    ) -> V | None:
        """``operation()``, retried and tolerated as configured; ``None`` (and
        ``context.failed``) when the record is skipped. A context that already failed is
        left alone (``None``). Raises :class:`ConnectError` when the task must fail."""
        if context.failed:
            return None
        context.stage = stage
        context.executing_class = (
            executing_class if isinstance(executing_class, str) else class_name(executing_class)
        )
        try:
            return self._exec_and_handle_error(context, operation, stage in _ANY_EXCEPTION)
        finally:
            if context.failed:
                self.metrics.record_error()
                self.report(context)

    def _exec_and_handle_error(
        self, context: ProcessingContext, operation: Callable[[], V], any_tolerable: bool
    ) -> V | None:
        try:
            result = self._exec_and_retry(context, operation)
            if context.failed:  # retries exhausted: Kafka skips without a tolerance check
                self._mark_as_failed()
                self.metrics.record_skipped()
            return result
        except Exception as exc:
            self.metrics.record_failure()
            self._mark_as_failed()
            context.error = exc
            if not any_tolerable and not isinstance(exc, RetriableError):
                raise ConnectError("Unhandled exception in error handler") from exc
            if not self.within_tolerance_limits():
                raise ConnectError("Tolerance exceeded in error handler") from exc
            self.metrics.record_skipped()
            return None

    def _exec_and_retry(self, context: ProcessingContext, operation: Callable[[], V]) -> V | None:
        attempt = 0
        start = self._clock_ms()
        timeout = self.retry_timeout_ms
        deadline = start + timeout if timeout >= 0 else None
        while True:
            attempt += 1
            context.attempt = attempt
            try:
                return operation()
            except RetriableError as exc:
                self.metrics.record_failure()
                if deadline is None or self._clock_ms() < deadline:
                    self.backoff(attempt, deadline)
                    self.metrics.record_retry()
                else:
                    context.error = exc
                    return None
                if self._stop.is_set():
                    context.error = exc
                    return None

    def backoff_ms(self, attempt: int) -> int:
        """Kafka's wait after failed attempt ``attempt`` (from 1): ``300 << (attempt - 1)``,
        or random in ``[0, errors.retry.delay.max.ms)`` once that is larger."""
        delay = RETRIES_DELAY_MIN_MS << min(attempt - 1, 40)
        if delay > self.max_delay_ms:
            delay = self._random_below(self.max_delay_ms)
        return delay

    def backoff(self, attempt: int, deadline: int | None) -> None:
        """Wait before retry ``attempt + 1`` (``attempt`` starts at 1), never past
        ``deadline``; ends early on :meth:`trigger_stop`."""
        delay = self.backoff_ms(attempt)
        if deadline is not None:
            now = self._clock_ms()
            if delay + now > deadline:
                delay = max(0, deadline - now)
        log.debug("Sleeping for up to %d millis", delay)
        self._sleep_ms(delay)

    def execute_failed(
        self, context: ProcessingContext, stage: Stage, executing_class: Any, error: BaseException
    ) -> Future[None]:
        """Report an operation that failed outside :meth:`execute` (errant records, producer
        callbacks); raises ``ConnectError`` when that exceeds the tolerance."""
        self._mark_as_failed()
        context.stage = stage
        context.executing_class = (
            executing_class if isinstance(executing_class, str) else class_name(executing_class)
        )
        context.error = error
        self.metrics.record_failure()
        future = self.report(context)
        if not self.within_tolerance_limits():
            self.metrics.record_error()
            raise ConnectError("Tolerance exceeded in error handler") from error
        return future

    # ------------------------------------------------------------------------- helpers
    def report(self, context: ProcessingContext) -> Future[None]:
        """Hand ``context`` to every reporter; a future of all their reports."""
        return all_of([reporter.report(context) for reporter in self.reporters])

    def _mark_as_failed(self) -> None:
        self.metrics.record_error_timestamp()
        with self._lock:
            self.total_failures += 1

    def within_tolerance_limits(self) -> bool:
        with self._lock:
            return self.tolerance is ToleranceType.ALL or self.total_failures == 0

    def trigger_stop(self) -> None:
        """Stop retrying: a running backoff ends and the operation counts as failed."""
        self._stop.set()

    def close(self) -> None:
        """Close the reporters (the first failure is raised after all were closed)."""
        first: Exception | None = None
        for reporter in self.reporters:
            try:
                reporter.close()
            except Exception as exc:
                first = first or exc
        self.reporters = []
        if first is not None:
            raise ConnectError("Failed to close all reporters") from first
