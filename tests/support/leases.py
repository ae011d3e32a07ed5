"""Leases as the engine hands them to a task host, for the tests that run one in this
process (``run_lease``): the worker config on the session broker, task 0 of generation 1,
bounds and offsets by keyword."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from sparkcat.runtime.tasks.lease import LeaseSpec

STRING = "org.apache.kafka.connect.storage.StringConverter"


def lease_spec(
    servers: str,
    kind: Literal["source", "sink"],
    connector: str,
    task_config: dict[str, str],
    connector_config: dict[str, str] | None = None,
    *,
    worker: Mapping[str, str] | None = None,
    key_converter: str = STRING,
    value_converter: str = STRING,
    max_ms: int = 10_000,
    max_records: int = 1_000_000,
    control: str | None = None,
    source_offsets: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = (),
    assignment: tuple[tuple[str, int, int | None], ...] = (),
) -> LeaseSpec:
    """One lease of task 0; ``worker`` adds worker keys (``plugin.path``, ...) to the broker
    address and the two converters."""
    worker_config = {
        "bootstrap.servers": servers,
        "key.converter": key_converter,
        "value.converter": value_converter,
        **(worker or {}),
    }
    return LeaseSpec(
        connector=connector,
        task=0,
        generation=1,
        kind=kind,
        task_config=task_config,
        connector_config=connector_config or {},
        worker_config=worker_config,
        max_ms=max_ms,
        max_records=max_records,
        control=control,
        source_offsets=source_offsets,
        assignment=assignment,
    )
