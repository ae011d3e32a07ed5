"""Request bodies of the REST API, as pydantic models (they also make ``/openapi.json``).

Kafka's JSON names; unknown fields are rejected. A body of the wrong shape is a 400 here
(Kafka's Jackson errors are 500s; see ``docs/rest.md``). Scalar config values are coerced to
strings as Jackson does for ``Map<String, String>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# A config value as JSON may carry it; null is kept (validation reports it as an error).
Scalar = str | int | float | bool | None
ConfigMap = dict[str, Scalar]


def string_map(values: Mapping[str, Scalar] | None) -> dict[str, str | None]:
    """Config values as strings (``true``/``false`` for booleans, ``None`` kept)."""
    result: dict[str, str | None] = {}
    for key, value in (values or {}).items():
        if value is None or isinstance(value, str):
            result[key] = value
        elif isinstance(value, bool):
            result[key] = "true" if value else "false"
        else:
            result[key] = str(value)
    return result


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OffsetEntry(_Strict):
    """``{"partition": {...}, "offset": {...} | null}``."""

    partition: dict[str, Any] | None = None
    offset: dict[str, Any] | None = None


class ConnectorOffsetsRequest(_Strict):
    """``PATCH /connectors/{name}/offsets``: ``{"offsets": [...]}`` (KIP-875)."""

    offsets: list[OffsetEntry] | None = None

    def as_json(self) -> dict[str, Any]:
        if self.offsets is None:
            return {}
        return {"offsets": [e.model_dump() for e in self.offsets]}


class CreateConnectorRequest(_Strict):
    """``POST /connectors``: name, config, KIP-980 ``initial_state``, KIP-995
    ``initial_offsets`` (a list of entries, or ``{"offsets": [...]}``)."""

    name: str | None = None
    config: ConfigMap | None = None
    initial_state: str | None = Field(default=None, description="RUNNING, PAUSED or STOPPED")
    initial_offsets: list[OffsetEntry] | ConnectorOffsetsRequest | None = None

    def offsets_json(self) -> Any:
        offsets = self.initial_offsets
        if offsets is None:
            return None
        if isinstance(offsets, ConnectorOffsetsRequest):
            return offsets.as_json()
        return [e.model_dump() for e in offsets]


class LoggerLevelRequest(BaseModel):
    """``PUT /admin/loggers/{logger}``: ``{"level": "DEBUG"}`` (other keys are ignored)."""

    level: str | None = None


__all__ = [
    "ConfigMap",
    "ConnectorOffsetsRequest",
    "CreateConnectorRequest",
    "LoggerLevelRequest",
    "OffsetEntry",
    "Scalar",
    "string_map",
]
