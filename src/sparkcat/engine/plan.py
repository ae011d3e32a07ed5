"""Plan files: how the worker's main process steers a connector's query.

The streaming query's source runs in driver-side Spark helper processes and its tasks on
executors; neither can see the main process's memory. So the main process writes, per
connector, a *plan file* (the lease number Spark may run next, the run state, and one
:class:`~sparkcat.runtime.tasks.lease.LeaseSpec` per task) that the driver-side reader relays into
``InputPartition``\\s. Plan files are read only on the driver's host; running leases, which
may run on other hosts, learn that they must end early (pause, stop, reconfiguration) over the
network (:mod:`sparkcat.engine.control_server`). A plan is replaced atomically, so readers
never see half a file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from sparkcat.runtime.tasks.lease import LeaseSpec

RUNNING = "running"
PAUSED = "paused"
STOPPING = "stopping"


def plan_path(state_dir: Path, name: str) -> Path:
    """The plan file of connector ``name`` (names may hold any character)."""
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:16]
    return state_dir / f"{digest}.plan.json"


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_plan(path: Path, lease: int, state: str, specs: list[LeaseSpec]) -> None:
    doc = {"lease": lease, "state": state, "specs": [spec_to_json(s) for s in specs]}
    _atomic_write(path, orjson.dumps(doc))


def read_plan(path: str | Path) -> dict[str, Any]:
    return orjson.loads(Path(path).read_bytes())  # type: ignore[no-any-return]


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
