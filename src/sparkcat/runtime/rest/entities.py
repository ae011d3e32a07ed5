"""The REST API's entities with Kafka's exact JSON field names.

Plain frozen dataclasses (no web framework here): the herder returns them, the routes turn
them into JSON with :meth:`to_json`. Kafka's Jackson rules are kept: ``trace`` is left out
when empty, other ``None`` fields are written as ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ConnectorTaskId:
    connector: str
    task: int

    def to_json(self) -> dict[str, Any]:
        return {"connector": self.connector, "task": self.task}

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass(frozen=True, slots=True)
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str  # "source" | "sink" | "unknown"
    offsets_status: str | None = None  # KIP-995: only after a create with initial_offsets

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "config": dict(self.config),
            "tasks": [t.to_json() for t in self.tasks],
            "type": self.type,
        }
        if self.offsets_status is not None:
            body["offsets_status"] = self.offsets_status
        return body


@dataclass(frozen=True, slots=True)
class TaskInfo:
    id: ConnectorTaskId
    config: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id.to_json(), "config": dict(self.config)}


@dataclass(frozen=True, slots=True)
class ConnectorState:
    state: str
    worker_id: str
    trace: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"state": self.state, "worker_id": self.worker_id}
        if self.trace:
            body["trace"] = self.trace
        return body


@dataclass(frozen=True, slots=True)
class TaskState:
    id: int
    state: str
    worker_id: str
    trace: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "state": self.state, "worker_id": self.worker_id}
        if self.trace:
            body["trace"] = self.trace
        return body


@dataclass(frozen=True, slots=True)
class ConnectorStateInfo:
    name: str
    connector: ConnectorState
    tasks: list[TaskState]
    type: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "connector": self.connector.to_json(),
            "tasks": [t.to_json() for t in self.tasks],
            "type": self.type,
        }


@dataclass(frozen=True, slots=True)
class ConfigKeyInfo:
    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    order: int
    width: str
    display_name: str
    dependents: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default_value": self.default_value,
            "importance": self.importance,
            "documentation": self.documentation,
            "group": self.group,
            "order": self.order,
            "width": self.width,
            "display_name": self.display_name,
            "dependents": list(self.dependents),
        }


@dataclass(frozen=True, slots=True)
class ConfigValueInfo:
    name: str
    value: str | None
    recommended_values: list[str]
    errors: list[str]
    visible: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "recommended_values": list(self.recommended_values),
            "errors": list(self.errors),
            "visible": self.visible,
        }


@dataclass(frozen=True, slots=True)
class ConfigInfo:
    definition: ConfigKeyInfo | None
    value: ConfigValueInfo | None

    def to_json(self) -> dict[str, Any]:
        return {
            "definition": None if self.definition is None else self.definition.to_json(),
            "value": None if self.value is None else self.value.to_json(),
        }


@dataclass(frozen=True, slots=True)
class ConfigInfos:
    """The result of validating a connector config (``PUT .../config/validate``)."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "error_count": self.error_count,
            "groups": list(self.groups),
            "configs": [c.to_json() for c in self.configs],
        }

    def error_messages(self) -> list[str]:
        """Every error message, in entry order."""
        return [m for c in self.configs if c.value is not None for m in c.value.errors]


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One entry of ``GET /connector-plugins``; ``version`` is left out when undefined."""

    class_name: str
    type: str
    version: str | None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"class": self.class_name, "type": self.type}
        if self.version is not None and self.version != "undefined":
            body["version"] = self.version
        return body


@dataclass(frozen=True, slots=True)
class WorkerStatus:
    """``GET /health``: Kafka's ``{"status","message"}`` and the HTTP status it goes with."""

    status: str
    message: str
    http_status: int

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message}


@dataclass(frozen=True, slots=True)
class LoggerLevel:
    """``{"level": "INFO", "last_modified": <epoch ms> | null}`` (KIP-495)."""

    level: str
    last_modified: int | None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "last_modified": self.last_modified}


__all__ = [
    "ConfigInfo",
    "ConfigInfos",
    "ConfigKeyInfo",
    "ConfigValueInfo",
    "ConnectorInfo",
    "ConnectorState",
    "ConnectorStateInfo",
    "ConnectorTaskId",
    "LoggerLevel",
    "PluginInfo",
    "TaskInfo",
    "TaskState",
    "WorkerStatus",
]
