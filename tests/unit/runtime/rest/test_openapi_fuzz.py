"""Schemathesis over ``/openapi.json``: malformed input never causes a 5xx.

Every operation gets a few generated requests (valid and invalid bodies, paths and query
parameters). A 5xx is allowed only with one of the messages Kafka itself answers with a 500:
an unknown connector class, ``stop`` of an unknown connector
in standalone mode, the internal endpoints, and a connector refusing an offsets change.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import schemathesis

from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.standalone.herder import StandaloneHerder

KAFKA_500S = (
    "Failed to find any class that implements Connector",
    "Connector implementations must be a subclass",
    "No connector `",
    "Kafka Connect in standalone mode does not support",
    "Offsets cannot be modified",
    "Failed to modify offsets for",
)


def check(case: Any) -> None:
    response = case.call()
    if response.status_code < 500:
        return
    body = response.json()
    assert set(body) == {"error_code", "message"}, body
    assert body["message"].startswith(KAFKA_500S), (case.method, case.formatted_path, body)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_no_server_error_from_generated_requests(rest_herder: StandaloneHerder, mode: str) -> None:
    api = schemathesis.openapi.from_asgi("/openapi.json", create_app(rest_herder))
    generation_mode = schemathesis.GenerationMode(mode)
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 25
    exercised = 0
    for operation in operations:
        strategy = operation.as_strategy(generation_mode=generation_mode)
        run = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                       suppress_health_check=list(HealthCheck))(given(strategy)(check))  # fmt: skip
        try:
            run()
        except Unsatisfiable:
            continue  # nothing to make invalid (e.g. GET / has no input at all)
        exercised += 1
    # Operations whose only input is a string path parameter have no invalid form.
    assert exercised >= (25 if mode == "positive" else 10)
