"""The errors of the embedded API, and the mapping of a leader's REST answer to them.

Everything raised is a :class:`~sparkcat.api.errors.ConnectError`:

- :class:`ConnectorConfigError` (a ``BadRequestError``, HTTP 400): ``add_connector`` with a
  config Kafka's validation rejects; ``messages`` holds Kafka's per-key messages
  (``"file: Missing required configuration ..."``), ``str()`` Kafka's whole 400 message;
- ``NotFoundError``, ``AlreadyExistsError`` (``sparkcat.api.errors``) as the REST API's 404
  and 409;
- ``ConnectRestError`` (``sparkcat.runtime.rest.errors``) for any other answer of the leader.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.runtime.rest.errors import BadRequestError, ConnectRestError

INVALID_CONFIG_PREFIX = "Connector configuration is invalid"


class ConnectorConfigError(BadRequestError):
    """A connector config failed Kafka's validation: nothing was created."""

    def __init__(self, message: str, messages: Sequence[str] | None = None) -> None:
        super().__init__(message)
        self.messages: list[str] = list(messages) if messages is not None else _lines(message)


def _lines(message: str) -> list[str]:
    """Kafka's per-key lines of an ``invalid_config_message`` (its first and last lines are
    the frame)."""
    lines = message.splitlines()
    if lines and lines[0].startswith(INVALID_CONFIG_PREFIX):
        return [line for line in lines[1:] if not line.startswith("You can also find")]
    return [message]


def error_from_answer(status: int, answer: bytes) -> ConnectError:
    """The exception for a REST error answer ``{"error_code", "message"}``."""
    try:
        message = str(orjson.loads(answer).get("message", ""))
    except (orjson.JSONDecodeError, AttributeError):
        message = answer.decode("utf-8", "replace")
    if status == 400 and message.startswith(INVALID_CONFIG_PREFIX):
        return ConnectorConfigError(message)
    if status == 404:
        return NotFoundError(message)
    if status == 409 and "already exists" in message:
        return AlreadyExistsError(message)
    if status == 400:
        return BadRequestError(message)
    return ConnectRestError(message, status)


__all__ = ["ConnectorConfigError", "error_from_answer"]
