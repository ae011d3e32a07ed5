"""Kafka's ``ConnectRestException`` family (``org.apache.kafka.connect.runtime.rest.errors``):
errors that carry an HTTP status. The REST error mapper (:mod:`.app`) turns a
:class:`ConnectRestError` into ``{"error_code": status, "message": ...}`` with its status; the
other :class:`~sparkcat.api.errors.ConnectError` subclasses map by type (``NotFoundError`` 404,
``AlreadyExistsError`` 409, anything else 500). Herders raise them, as Kafka's do."""

from __future__ import annotations

from sparkcat.api.errors import ConnectError


class ConnectRestError(ConnectError):
    """An error with an explicit HTTP status (Kafka's ``ConnectRestException``)."""

    status: int = 500

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class BadRequestError(ConnectRestError):
    """The request is invalid (HTTP 400): e.g. an invalid connector config."""

    status = 400


__all__ = ["BadRequestError", "ConnectRestError"]
