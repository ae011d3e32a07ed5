"""Leases: one task instance running between two offset commits, as plain Python.

The engine sends a :class:`LeaseSpec` to a task host on a Spark executor
(:mod:`sparkcat.runtime.tasks.host`), which calls :func:`run_lease` on a thread of its own; the
:class:`LeaseResult` travels back to the driver, which commits its offsets (source offsets to
the offset store, sink offsets to group ``connect-<name>``) and reports the task's status.
Nothing here imports pyspark, so leases are tested against the real broker without Spark.

``run_lease`` never raises for a task's failure: the traceback text goes into
:attr:`LeaseResult.trace` and the offsets of the work that did complete are still reported.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.tasks.control import ControlChannel

__all__ = [
    "ControlWatch",
    "LeaseResult",
    "LeaseSpec",
    "resolver_for",
    "result_from_json",
    "result_to_json",
    "run_lease",
    "spec_from_json",
    "spec_to_json",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeaseSpec:
    """What one lease runs: JSON-serialisable, travels to its task host over HTTP.

    ``source_offsets`` are the connector's known ``(partition, offset)`` pairs (source);
    ``assignment`` lists ``(topic, partition, start offset or None = earliest)`` (sink).
    ``control`` is the address of the connector's lease-control channel on the driver
    (:mod:`sparkcat.runtime.tasks.control`); ``pause`` or ``stop`` there ends the lease early
    (``None``: only the lease's own bounds end it).
    """

    connector: str
    task: int
    generation: int
    kind: Literal["source", "sink"]
    task_config: dict[str, str]
    connector_config: dict[str, str]
    worker_config: dict[str, str]
    max_ms: int
    max_records: int
    control: str | None
    source_offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()
    assignment: tuple[tuple[str, int, int | None], ...] = ()
    # Once the first record arrives, the lease ends by this long after it (0: no limit). Set
    # on leases stretched beyond max.batch.ms because the task was idle: data after an idle
    # spell is committed (and flushed by a sink) at the busy cadence, not up to 60 s later.
    data_max_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseResult:
    """What a lease did. ``records`` were acked by Kafka (source) or put (sink); ``polled``
    were polled/consumed (0 = an idle lease). ``trace`` is set when the task FAILED.
    ``error_metrics`` are this lease's task-error-metrics (``{}`` when there were no errors;
    see :mod:`sparkcat.runtime.errors.metrics`): the worker adds them up per task.
    ``topics`` are the topics a source lease produced to, for topic tracking (KIP-558).
    ``task_metrics`` are the lease's counters for Kafka Connect's task metrics
    (:mod:`sparkcat.runtime.metrics.counters`; ``{}`` when metrics are off)."""

    connector: str
    task: int
    generation: int
    elapsed_ms: int
    records: int = 0
    polled: int = 0
    source_offsets: tuple[tuple[dict[str, Any], dict[str, Any] | None], ...] = ()
    sink_offsets: tuple[tuple[str, int, int], ...] = ()
    trace: str | None = None
    error_metrics: dict[str, float] = field(default_factory=dict)
    topics: tuple[str, ...] = ()  # source: the topics this lease produced to (KIP-558)
    task_metrics: dict[str, float] = field(default_factory=dict)


def run_lease(spec: LeaseSpec) -> LeaseResult:
    """Run one lease of ``spec``'s task on this process (see the module docs)."""
    started = time.monotonic()
    try:
        spec = _resolved(spec)
        if spec.kind == "source":
            from sparkcat.runtime.tasks.worker_source_task import run_source_lease

            return run_source_lease(spec)
        if spec.kind == "sink":
            from sparkcat.runtime.tasks.worker_sink_task import run_sink_lease

            return run_sink_lease(spec)
        raise ConnectError(f"Unknown lease kind {spec.kind!r}: expected 'source' or 'sink'")
    except Exception:
        # The lease loops report task failures themselves; this is the framework failing
        # before a task existed (bad plugin name, unreachable broker, ...).
        return failed_result(spec, traceback.format_exc(), started)


def _resolved(spec: LeaseSpec) -> LeaseSpec:
    """``spec`` with config-provider variables resolved, here on the executor: the plan
    Spark shipped held only the ``${provider:path:key}`` form."""
    from sparkcat.runtime.config_provider import keys_with_variables, resolve, resolve_worker

    configs = (spec.task_config, spec.connector_config, spec.worker_config)
    if not any(keys_with_variables(c) for c in configs):
        return spec
    worker = spec.worker_config
    return dataclasses.replace(
        spec,
        task_config=resolve(worker, spec.task_config),
        connector_config=resolve(worker, spec.connector_config),
        worker_config=resolve_worker(worker),
    )


def failed_result(spec: LeaseSpec, trace: str, started: float) -> LeaseResult:
    """A result for a lease that copied nothing and failed with ``trace``."""
    return LeaseResult(
        connector=spec.connector,
        task=spec.task,
        generation=spec.generation,
        trace=trace,
        elapsed_ms=int((time.monotonic() - started) * 1000),
    )


def spec_to_json(spec: LeaseSpec) -> dict[str, Any]:
    return dataclasses.asdict(spec)


def spec_from_json(doc: Mapping[str, Any]) -> LeaseSpec:
    """Rebuild a LeaseSpec from its JSON form (JSON turned its tuples into lists)."""
    values = dict(doc)
    values["source_offsets"] = tuple(
        (dict(p), dict(o)) for p, o in values.get("source_offsets", ())
    )
    values["assignment"] = tuple(
        (str(t), int(p), None if o is None else int(o)) for t, p, o in values.get("assignment", ())
    )
    return LeaseSpec(**values)


def result_to_json(result: LeaseResult) -> dict[str, Any]:
    return dataclasses.asdict(result)


def result_from_json(doc: Mapping[str, Any]) -> LeaseResult:
    """Rebuild a LeaseResult from its JSON form."""
    values = dict(doc)
    values["source_offsets"] = tuple(
        (dict(p), None if o is None else dict(o)) for p, o in values.get("source_offsets", ())
    )
    values["sink_offsets"] = tuple(
        (str(t), int(p), int(o)) for t, p, o in values.get("sink_offsets", ())
    )
    values["topics"] = tuple(values.get("topics", ()))
    return LeaseResult(**values)


# The lease loops (worker_source_task, worker_sink_task) watch their channel through this name.
ControlWatch = ControlChannel


def resolver_for(worker_config: Mapping[str, str]) -> Any:
    """The plugin registry's ``resolve(name, kind)`` with the worker's ``plugin.path``."""
    from sparkcat.runtime.isolation.plugins import default_registry

    paths = tuple(p.strip() for p in worker_config.get("plugin.path", "").split(",") if p.strip())
    return default_registry(paths).resolve


def load_task_class(name: str, base: type, resolve: Any) -> Any:
    """The task class that ``task.class`` names, checked to subclass ``base``."""
    try:
        task_class = resolve(name, "task")
    except ConnectError:
        raise
    except Exception as exc:
        raise ConnectError(
            f"Failed to find any class that implements {base.__name__} and which name "
            f"matches {name}"
        ) from exc
    if not issubclass(task_class, base):
        raise ConnectError(
            f"Task class {name} is not a {base.__name__} (connector and task kinds differ)"
        )
    return task_class
