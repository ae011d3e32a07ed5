"""The herder's records of connectors, shared by its concern modules and both herders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sparkcat.api.connector import Connector
from sparkcat.runtime.engine_api import ConnectorKind
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.stores.configs import TargetState


@dataclass(frozen=True, slots=True)
class Live:
    """What listener callbacks need to know, readable without the herder lock."""

    target: TargetState
    tasks: int
    generation: int


@dataclass(slots=True)
class ManagedConnector:
    """The herder's record of one connector (guarded by the herder lock)."""

    name: str
    config: dict[str, str]
    kind: ConnectorKind
    cls: type[Connector]
    target: TargetState
    instance: Connector | None = None
    context: Any = None
    started: bool = False
    task_configs: list[dict[str, str]] = field(default_factory=list)
    generation: int = -1
    applied_config: dict[str, str] | None = None
    planned: bool = False


def parse_initial_state(value: str | None) -> TargetState:
    """KIP-980 ``initial_state`` (case-insensitive RUNNING|PAUSED|STOPPED; absent = RUNNING).

    An invalid value is a 400 here (Kafka answers 500 from its JSON mapper).
    """
    if value is None:
        return TargetState.STARTED
    names = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED,
             "STOPPED": TargetState.STOPPED}  # fmt: skip
    state = names.get(str(value).strip().upper())
    if state is None:
        raise BadRequestError(
            f"Invalid initial state {value}: must be one of RUNNING, PAUSED, STOPPED"
        )
    return state


__all__ = ["Live", "ManagedConnector", "TargetState", "parse_initial_state"]
