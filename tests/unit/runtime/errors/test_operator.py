"""RetryWithToleranceOperator: Kafka's backoff vectors, tolerance, stages, quirks."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.errors import ConnectError, DataError, RetriableError
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import (
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
    ToleranceType,
)


class FakeTime:
    """A clock that advances only by the waits the operator asks for."""

    def __init__(self) -> None:
        self.now = 0
        self.waits: list[int] = []

    def clock(self) -> int:
        return self.now

    def sleep(self, ms: int) -> None:
        self.waits.append(ms)
        self.now += ms


def operator(
    timeout: int, tolerance: str = "all", max_delay: int = 60000, **kwargs: Any
) -> tuple[RetryWithToleranceOperator, FakeTime, ErrorHandlingMetrics]:
    fake = FakeTime()
    metrics = ErrorHandlingMetrics()
    op = RetryWithToleranceOperator(
        timeout, max_delay, ToleranceType(tolerance), metrics,
        clock_ms=fake.clock, sleep_ms=fake.sleep, **kwargs,
    )  # fmt: skip
    return op, fake, metrics


def failing(times: int, result: str = "ok") -> Any:
    calls = [0]

    def op() -> str:
        calls[0] += 1
        if calls[0] <= times:
            raise RetriableError(f"attempt {calls[0]}")
        return result

    return op


@pytest.mark.parametrize(
    ("timeout", "failures", "waits"),
    [
        (6000, 1, [300]),
        (6000, 3, [300, 600, 1200]),
        (-1, 8, [300, 600, 1200, 2400, 4800, 9600, 19200, 38400]),
    ],
)
def test_kafka_backoff_vectors_then_success(timeout: int, failures: int, waits: list[int]) -> None:
    op, fake, metrics = operator(timeout)
    context = ProcessingContext(None)

    assert op.execute(context, failing(failures), Stage.KEY_CONVERTER, "C") == "ok"
    assert fake.waits == waits
    assert not context.failed
    assert context.attempt == failures + 1
    assert metrics.get("total-retries") == failures
    assert metrics.get("total-record-failures") == failures


def test_retries_stop_at_the_deadline_and_the_record_is_skipped_even_under_none() -> None:
    # Kafka's quirk: exhausted retries skip the record without a tolerance check.
    op, fake, metrics = operator(6000, tolerance="none")
    context = ProcessingContext("original")

    assert op.execute(context, failing(6), Stage.VALUE_CONVERTER, "C") is None
    assert fake.waits == [300, 600, 1200, 2400, 1500]  # the last wait clipped to the deadline
    assert context.attempt == 6
    assert context.failed and isinstance(context.error, RetriableError)
    assert metrics.get("total-records-skipped") == 1
    assert metrics.get("total-record-errors") == 1


def test_no_retry_with_timeout_zero() -> None:
    op, fake, _ = operator(0)
    context = ProcessingContext(None)

    assert op.execute(context, failing(1), Stage.TRANSFORMATION, "C") is None
    assert fake.waits == [] and context.failed


def test_delay_above_the_maximum_is_random_below_it() -> None:
    draws: list[int] = []

    def random_below(n: int) -> int:
        draws.append(n)
        return 123

    op, fake, _ = operator(-1, max_delay=1000, random_below=random_below)

    assert op.execute(ProcessingContext(None), failing(4), Stage.KEY_CONVERTER, "C") == "ok"
    assert fake.waits == [300, 600, 123, 123]
    assert draws == [1000, 1000]


def test_tolerance_all_skips_any_exception_in_conversion_and_transformation() -> None:
    op, _, metrics = operator(0)
    for stage in (Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.HEADER_CONVERTER):
        context = ProcessingContext(None)

        def boom() -> None:
            raise ValueError("bad")

        assert op.execute(context, boom, stage, "C") is None
        assert context.failed and context.stage is stage
    assert metrics.get("total-records-skipped") == 3
    assert metrics.get("total-record-failures") == 3
    assert metrics.get("last-error-timestamp") > 0


def test_tolerance_none_fails_at_the_first_error() -> None:
    op, _, metrics = operator(0, tolerance="none")

    def boom() -> None:
        raise DataError("bad data")

    with pytest.raises(ConnectError, match=r"^Tolerance exceeded in error handler$") as info:
        op.execute(ProcessingContext(None), boom, Stage.VALUE_CONVERTER, "C")
    assert isinstance(info.value.__cause__, DataError)
    assert metrics.get("total-record-errors") == 1


def test_other_stages_tolerate_only_retriable_errors() -> None:
    op, _, _ = operator(0)

    def boom() -> None:
        raise ValueError("bad")

    with pytest.raises(ConnectError, match="Unhandled exception in error handler"):
        op.execute(ProcessingContext(None), boom, Stage.KAFKA_PRODUCE, "C")


def test_a_failed_context_skips_later_stages() -> None:
    op, _, _ = operator(0)
    context = ProcessingContext(None)
    calls: list[str] = []

    def boom() -> None:
        raise ValueError("bad")

    op.execute(context, boom, Stage.KEY_CONVERTER, "C")
    assert op.execute(context, lambda: calls.append("x"), Stage.VALUE_CONVERTER, "C") is None
    assert calls == []


def test_execute_failed_reports_and_respects_tolerance() -> None:
    reported: list[tuple[Stage, str, str]] = []

    class Reporter:
        def report(self, context: ProcessingContext) -> Any:
            from concurrent.futures import Future

            reported.append((context.stage, context.executing_class, str(context.error)))
            done: Future[None] = Future()
            done.set_result(None)
            return done

        def close(self) -> None:
            return None

    tolerant, _, _ = operator(0)
    strict, _, _ = operator(0, tolerance="none")
    tolerant.reporters = [Reporter()]
    strict.reporters = [Reporter()]

    tolerant.execute_failed(ProcessingContext(None), Stage.TASK_PUT, "S", ValueError("a")).result()
    with pytest.raises(ConnectError, match="Tolerance exceeded"):
        strict.execute_failed(ProcessingContext(None), Stage.TASK_PUT, "S", ValueError("b"))
    assert reported == [(Stage.TASK_PUT, "S", "a"), (Stage.TASK_PUT, "S", "b")]


def test_trigger_stop_ends_retrying() -> None:
    op, _, _ = operator(-1)
    op.trigger_stop()
    context = ProcessingContext(None)

    assert op.execute(context, failing(100), Stage.KEY_CONVERTER, "C") is None
    assert context.attempt == 1 and context.failed


def test_from_config_defaults_and_validation() -> None:
    metrics = ErrorHandlingMetrics()
    op = RetryWithToleranceOperator.from_config({}, metrics)

    assert (op.retry_timeout_ms, op.max_delay_ms, op.tolerance) == (0, 60000, ToleranceType.NONE)
    with pytest.raises(ConnectError):
        RetryWithToleranceOperator.from_config({"errors.tolerance": "some"}, metrics)
