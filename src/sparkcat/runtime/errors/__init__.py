"""Errors of the runtime that carry an HTTP status for the REST API.

Kafka's ``ConnectRestException`` family: the REST error mapper turns a
:class:`ConnectRestError` into ``{"error_code": status, "message": ...}`` with its status. The
other :class:`~sparkcat.api.errors.ConnectError` subclasses map by type (``NotFoundError``
404, ``AlreadyExistsError`` 409, anything else 500).

The package's modules are the error handling of tasks: retries, tolerance, error log, dead
letter queue, errant record reporter and per-task error metrics (Kafka's KIP-298, KIP-610,
KIP-779): :mod:`.operator` (``Stage``, ``RetryWithToleranceOperator``),
:mod:`.reporters` (log and DLQ), :mod:`.errant` (KIP-610), :mod:`.metrics`, :mod:`.task` (one
lease's bundle), :mod:`.record_paths` (the pipeline's per-record fallback).
"""

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
