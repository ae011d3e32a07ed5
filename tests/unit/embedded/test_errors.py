"""A leader's REST error answers as the embedded API's exceptions."""

from __future__ import annotations

import orjson
import pytest

from sparkcat.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sparkcat.embedded.errors import ConnectorConfigError, error_from_answer
from sparkcat.runtime.rest.errors import BadRequestError, ConnectRestError

INVALID = (
    "Connector configuration is invalid and contains the following 2 error(s):\n"
    "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
    "Must configure one of topics or topics.regex\n"
    "You can also find the above list of errors at the endpoint "
    "`/connector-plugins/{connectorType}/config/validate`"
)


def _answer(status: int, message: str) -> bytes:
    return orjson.dumps({"error_code": status, "message": message})


def test_an_invalid_config_carries_kafkas_messages() -> None:
    error = error_from_answer(400, _answer(400, INVALID))
    assert isinstance(error, ConnectorConfigError)
    assert isinstance(error, BadRequestError)
    assert str(error) == INVALID
    assert error.messages == [
        "Invalid value 0 for configuration tasks.max: Value must be at least 1",
        "Must configure one of topics or topics.regex",
    ]


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (404, "Connector x not found", NotFoundError),
        (409, "Connector x already exists", AlreadyExistsError),
        (400, "Connector config {} contains no connector type", BadRequestError),
        (409, "Cannot complete request momentarily due to stale configuration", ConnectRestError),
        (500, "boom", ConnectRestError),
    ],
)
def test_statuses_map_to_exceptions(status: int, message: str, kind: type[ConnectError]) -> None:
    error = error_from_answer(status, _answer(status, message))
    assert type(error) is kind
    assert str(error) == message


def test_a_body_that_is_not_json() -> None:
    error = error_from_answer(502, b"Bad Gateway")
    assert isinstance(error, ConnectRestError)
    assert error.status == 502
    assert str(error) == "Bad Gateway"
